"""vision.cache.per_object: results made once per object (by identity), bounded."""

import numpy as np

from vision.cache import per_object


def _counting(**kw):
    calls = []

    @per_object(**kw)
    def made(obj, *args):
        calls.append(args)
        return object()
    return made, calls


def test_same_object_and_arguments_are_made_once():
    made, calls = _counting()
    a = np.zeros(3)
    assert made(a, 1) is made(a, 1)
    assert calls == [(1,)]
    assert made(a, 2) is not made(a, 1)
    assert calls == [(1,), (2,)]


def test_an_equal_but_other_object_is_made_again():
    made, calls = _counting()
    a, b = np.zeros(3), np.zeros(3)
    assert made(a) is not made(b)
    assert len(calls) == 2


def test_a_reused_id_is_not_mistaken_for_the_old_object():
    made, calls = _counting()
    first = made(np.zeros(3))          # the array dies here; its id may come back
    for _ in range(20):
        assert made(np.zeros(3)) is not first
    assert len(calls) == 21


def test_the_key_function_decides_what_counts_as_the_same_call():
    made, calls = _counting(key=lambda obj, x: (round(x),))
    a = np.zeros(3)
    assert made(a, 1.2) is made(a, 0.9)
    assert len(calls) == 1


def test_the_cache_is_bounded():
    made, calls = _counting(size=4)
    a = np.zeros(3)
    for k in range(10):
        made(a, k)
    made(a, 9)                         # still held: the newest entry survives the clearing
    assert len(calls) == 10
    made(a, 0)                         # long gone
    assert len(calls) == 11
