"""Vision: frame sources, the dice reader, the sigil reader and the synthetic scene renderers.

This package knows nothing of the rules or the web. Readers are pure functions
``image -> reading``; every threshold lives in a config dataclass.
"""

from __future__ import annotations
