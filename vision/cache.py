"""Results cached per object, by identity.

The readers make some things once per blank card, layout or prepared reference (a rectified
reference at a scale, its darkened floor, the patch windows of a pose search) and use them on
every photo. Those objects are numpy arrays and small records that are neither hashable nor
cheap to compare, so they are looked up by ``id`` and checked to be the same object (an id can
be reused once its object is gone); the entry keeps its object alive, and the cache is emptied
when it passes its bound, so a long-running process that sees many cards does not grow.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import wraps
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def per_object(key: Callable[..., tuple[Hashable, ...]] | None = None, *,
               size: int = 64) -> Callable[[F], F]:
    """Cache a function of ``(obj, *args)`` per ``obj`` (by identity) and ``key(obj, *args)``
    (default: the other arguments themselves); at most ``size`` entries, then emptied.

    >>> calls = []
    >>> @per_object()
    ... def double(a, k):
    ...     calls.append(k)
    ...     return [x * k for x in a]
    >>> a = [1, 2]
    >>> double(a, 2) is double(a, 2), calls
    (True, [2])
    >>> double([1, 2], 2) is double(a, 2)   # an equal but other object: made again
    False
    """
    def wrap(fn: F) -> F:
        entries: dict[tuple[Hashable, ...], tuple[Any, Any]] = {}

        @wraps(fn)
        def cached(obj: Any, *args: Any) -> Any:
            k = (id(obj), *(args if key is None else key(obj, *args)))
            hit = entries.get(k)
            if hit is not None and hit[0] is obj:
                return hit[1]
            out = fn(obj, *args)
            if len(entries) >= size:
                entries.clear()
            entries[k] = (obj, out)
            return out

        cached.cache_clear = entries.clear  # type: ignore[attr-defined]
        return cached  # type: ignore[return-value]
    return wrap
