"""The games the app knows: one adapter module per game, looked up in ONE place (:func:`game`).

An adapter exports the same names: ``GAME_ID`` (the registry id: the game's one name), ``TITLE``,
``MIN_PLAYERS``, ``MAX_PLAYERS``,
``DEFAULT_PLAYERS``, ``HOW_TO`` (how to play, a few sentences), ``POLICY_GAMES`` (the ``game`` names
its bots carry), ``DEFAULT_OPPONENT``,
``KIND_KEY`` and ``INPUT_EVENTS`` (its record format), ``ENV_OPTIONS``, and the functions
``make_env``, ``option`` (a request's env option, made safe), ``is_record``, ``check_record``,
``env_for_record``, ``encode``, ``rules`` (every card's rules text), ``goal``, ``view``,
``public_view`` (a spectator's), ``hidden``, ``race``, ``prompt``, ``action_text``, ``groups``,
``log_line``, ``outcome`` (the result in words and points), and for the terminal ``headline``
and ``seat_line``.
Nothing outside the adapters tells games apart.

Which games exist is the game registry's answer (``dragonstones_env.games``): each adapter names
the registered game it draws (``GAME_ID``), and the menu is the registered games that have one,
in the registry's order (a game registered without an adapter is not offered, rather than drawn
wrongly).
"""

from __future__ import annotations

from types import ModuleType

from dragonstones_env import games as registry

from . import drachenschatten, dragonstones

ADAPTERS: dict[str, ModuleType] = {m.GAME_ID: m for m in (dragonstones, drachenschatten)}
GAMES: dict[str, ModuleType] = {g.id: ADAPTERS[g.id] for g in registry.all() if g.id in ADAPTERS}


def names() -> list[str]:
    """The games, in menu order."""
    return list(GAMES)


def game(name: object) -> ModuleType:
    """The adapter of game ``name``; a KeyError naming the known games otherwise."""
    if isinstance(name, str) and name in GAMES:
        return GAMES[name]
    raise KeyError(f"unknown game {name!r}: known games are {', '.join(GAMES)}")


def for_record(record: list) -> ModuleType:
    """The adapter whose engine wrote ``record`` (by its start event); a KeyError otherwise."""
    for module in GAMES.values():
        if module.is_record(record):
            return module
    raise KeyError("the record's first event is not the start event of any known game "
                   f"({', '.join(GAMES)})")
