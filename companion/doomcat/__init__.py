"""Doom Cat: sigil layouts, geometry and facts, goals and familiars, the turn rules and policies.

Modules: :mod:`~companion.doomcat.layouts` (card geometry), :mod:`~companion.doomcat.geometry`
(facts of a drawn sigil, line legality), :mod:`~companion.doomcat.catalogue` (goals and
familiars), :mod:`~companion.doomcat.game` (the event-log turn engine),
:mod:`~companion.doomcat.policies` and :mod:`~companion.doomcat.simulate`.
"""
