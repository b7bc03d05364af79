"""Where a table's policies and custom decks may come from: a :class:`Sources`.

The terminal's (:data:`LOCAL`: the user's own files, anything ``load_policy`` and the env read) or the
server's (names only: the built-in and shipped policies, the checkpoints of a configured folder, the
decks of a configured folder, or a deck's text sent in the request; issue #29). No request names a
file of the server's disk. Framework-free: a refusal is a :class:`~dragonstones_env.play.refusals.Refused`.
"""

from __future__ import annotations

import re
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from dragonstones_env.bounds import read_text_limited
from dragonstones_env.policies import PolicyError, available, load_policy
from dragonstones_env.policies.checkpoint import CARD_FILE, load_checkpoint
from dragonstones_env.registry import GameSpec

from .refusals import Refused

HUMAN = "human"
MAX_SPEC = 100  # characters of a seat's policy name
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # a policy or deck of a configured folder
DECK_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json"}


def _log_server(message: str) -> None:
    """What the server's operator should read (a bad file in a configured folder): stderr, never a response."""
    print(f"dragonstones serve: {message}", file=sys.stderr, flush=True)


class LRU:
    """A bounded mapping that forgets the least recently used entry beyond ``size`` (thread-safe)."""

    def __init__(self, size: int):
        self.size, self._items, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, key: Any, make: Any) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()  # outside the lock: loading a checkpoint takes milliseconds
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._items)


_POLICY_CACHE: dict[tuple[str, str], bool] = {}
# Built-ins with options a server's seat menu offers besides the plain names (a request names no other
# options: one could name a file, or ask a search for hours): a quicker, weaker search and a slower,
# stronger one than ``ismcts`` (30 simulations), about 0.1 s and 1 s a decision; and Fist's strongest
# measured search, on its trained champion's rollouts (its tables only: docs/results.md#search-ismcts).
# DrachenSchatten's ships by name (policies/ds-champion-search), so the menu lists it as a checkpoint.
MENU_SPECS = ("ismcts:simulations=10", "ismcts:simulations=100",
              "ismcts:simulations=10:rollout=champion:order=probability")


def load_seat_policy(game: GameSpec, spec: Any, seed: int, deterministic: bool = False) -> Any:
    """The policy ``spec`` (a name from ``policies.available()`` or a checkpoint folder), checked to
    play ``game``. Checkpoints load through ``load_policy``: policy.npz and card.json only."""
    if not isinstance(spec, str) or not spec:
        raise Refused(f"a seat is 'human' or a policy spec (a name or a checkpoint folder), got {spec!r}")
    try:
        policy = load_policy(spec, seed=seed, deterministic=deterministic)
    except PolicyError as err:
        raise Refused(str(err)) from None
    if policy.game is not None and not game.plays(policy.game):
        raise Refused(f"policy {spec!r} plays {policy.game!r}, not {game.title}")
    return policy


def policies_for(game: GameSpec) -> list[str]:
    """The names of ``policies.available()`` and :data:`MENU_SPECS` that play ``game`` (loaded
    once to ask)."""
    out = []
    for spec in [*available(), *MENU_SPECS]:
        key = (game.id, spec)
        if key not in _POLICY_CACHE:
            try:
                load_seat_policy(game, spec, 0)
                _POLICY_CACHE[key] = True
            except Refused:
                _POLICY_CACHE[key] = False
        if _POLICY_CACHE[key]:
            out.append(spec)
    return out


# Insight policies (probabilities only: no seed matters), shared by every replay and table, by what
# they load: a name, or a configured folder's checkpoint by its resolved path (issue #29: a cache
# per distinct spec string grew without bound).
_INSIGHT = LRU(8)


def deck_name(value: str) -> str:
    """The deck a string names: its file name without a deck suffix (``examples/characters.yaml`` is
    ``characters``). Nothing of a folder part is used: decks are looked up in the server's deck folder."""
    name = PurePath(value.replace("\\", "/")).name
    stem, dot, suffix = name.rpartition(".")
    return stem if dot and f".{suffix.lower()}" in DECK_SUFFIXES else name


@dataclass
class Sources:
    """Where the policies and custom decks of a table come from.

    ``local`` (the terminal): any spec ``load_policy`` takes and any deck file the env reads, as
    the user at the keyboard may. Otherwise (the server, issue #29) only names: the policies
    :func:`policies_for` lists, the checkpoint folders of ``policy_dir`` by folder name, the decks
    of ``deck_dir`` by file name, registered Python characters; and a deck's text in the request.
    A name is looked up in a listing of the folder, so no request makes the server open or test a
    path of its choosing, and no refusal says what is on the disk or quotes a file.
    """

    local: bool = False
    policy_dir: Path | None = None
    deck_dir: Path | None = None
    _decks: LRU = field(default_factory=lambda: LRU(16), repr=False)
    _games: dict = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- policies
    def folder_policies(self) -> dict[str, Path]:
        """The checkpoint folders of ``policy_dir`` (those with a card), by folder name."""
        if self.policy_dir is None or not self.policy_dir.is_dir():
            return {}
        return {p.name: p for p in sorted(self.policy_dir.iterdir())
                if _FILE_NAME.match(p.name) and (p / CARD_FILE).is_file()}

    def _folder_game(self, path: Path) -> str | None:
        """The game a folder's checkpoint plays (None: it does not load; the reason goes to the log)."""
        key = (str(path.resolve()), (path / CARD_FILE).stat().st_mtime_ns)
        if key not in self._games:
            try:
                self._games[key] = load_checkpoint(path, path.name, 0, False).game
            except PolicyError as err:
                _log_server(f"the checkpoint {path.name!r} of the policy folder does not load: {err}")
                self._games[key] = None
        return self._games[key]

    def policies(self, game: GameSpec) -> list[str]:
        """Every policy name a seat of ``game`` may name here."""
        folder = [name for name, path in self.folder_policies().items()
                  if game.plays(self._folder_game(path))]
        listed = policies_for(game)
        return listed + [name for name in folder if name not in listed]

    def _folder_policy(self, game: GameSpec, spec: str) -> Path | None:
        if self.local or spec in available() or spec in policies_for(game):
            return None
        path = self.folder_policies().get(spec)
        if path is None:
            raise Refused(f"unknown policy {spec[:MAX_SPEC]!r}: {game.title} is played here by "
                          f"{', '.join(self.policies(game))}")
        if self._folder_game(path) is None:
            raise Refused(f"the policy {spec!r} of this server does not load (the server's log says why)")
        return path

    def policy(self, game: GameSpec, spec: Any, seed: int, deterministic: bool = False) -> Any:
        """The policy named ``spec`` for a seat of ``game``, seeded with ``seed``."""
        if not isinstance(spec, str) or not spec or len(spec) > MAX_SPEC:
            raise Refused(f"a seat is 'human' or a policy name of at most {MAX_SPEC} characters, "
                          f"got {str(spec)[:MAX_SPEC]!r}")
        path = self._folder_policy(game, spec)
        if path is None:
            return load_seat_policy(game, spec, seed, deterministic)
        policy = load_checkpoint(path, spec, seed, deterministic)
        if not game.plays(policy.game):
            raise Refused(f"policy {spec!r} plays {policy.game!r}, not {game.title}")
        return policy

    def insight_policy(self, game: GameSpec, spec: str) -> Any:
        """A shared copy of ``spec`` to ask for its probabilities (bounded cache, by what it loads)."""
        path = self._folder_policy(game, spec)
        key = (game.id, spec) if path is None else (game.id, str(path.resolve()))
        return _INSIGHT.get(key, lambda: self.policy(game, spec, 0))

    def knows_policy(self, game: GameSpec, spec: str) -> bool:
        return spec in self.policies(game) or (self.local and spec not in ("", HUMAN, "?"))

    # ---------------------------------------------------------------- decks
    def decks(self) -> dict[str, Path]:
        """The deck files of ``deck_dir`` by name (file name without its suffix)."""
        if self.deck_dir is None or not self.deck_dir.is_dir():
            return {}
        out = {}
        for p in sorted(self.deck_dir.iterdir()):
            if p.suffix.lower() in DECK_SUFFIXES and _FILE_NAME.match(p.name) and p.is_file():
                out.setdefault(p.stem, p)
        return out

    def deck(self, value: str, parse: Any) -> Any:
        """The deck ``value`` names, as ``parse(text, format, label)`` (the game's) reads it: a deck of
        ``deck_dir`` by name, read and checked once per version of its file (bounded cache). What is
        wrong with a file goes to the server's log; the client is told only that the deck is refused.
        The terminal's (``local``) is ``value`` itself, a file the env reads."""
        if self.local:
            return value
        name = deck_name(value)
        decks = self.decks()
        if name not in decks:
            where = f"this server's decks are {', '.join(decks)}" if decks else \
                "this server has no deck folder (dragonstones serve --decks DIR)"
            raise Refused(f"unknown deck {value[:60]!r}: {where}; or send the deck's text as "
                          "{\"format\": \"yaml\", \"text\": ...}")
        path = decks[name]

        def load() -> Any:
            try:
                return parse(read_deck(path), DECK_SUFFIXES[path.suffix.lower()], f"deck {name!r}")
            except (OSError, ValueError) as err:  # UnicodeDecodeError and the game's own errors included
                _log_server(f"the deck {path.name!r} of the deck folder is refused: {err}")
                return None

        cards = self._decks.get((str(path.resolve()), path.stat().st_mtime_ns), load)
        if cards is None:
            raise Refused(f"the deck {name!r} of this server is not a valid deck (the server's log says why)")
        return cards


LOCAL = Sources(local=True)


def read_deck(path: Path) -> str:
    """A deck file of the deck folder, read up to the bounds table's deck limit (FILE_BYTES["deck"]:
    a larger file, or ``/dev/zero`` linked in, is refused unread past it; issue #49)."""
    return read_text_limited(path, "deck", "deck")
