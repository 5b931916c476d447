"""Synthetic scene renderers: labelled images the project draws itself, for training and tests.

- :mod:`vision.render.dice`: d6 dice in perspective on tables (``render_scene``, ``draw_dice``).

Renderers are pure given their seeded ``numpy.random.Generator``: the same seed gives the same
image and labels.
"""

from __future__ import annotations
