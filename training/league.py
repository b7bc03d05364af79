"""The training league: who sits at the learner's table, episode by episode (both trainers).

A learner that meets mostly bots learns to exploit them, not to play the game (the v0
champion beat three heuristic bots and lost 98% of its games as one of three copies of
itself). So the league seats the learner mostly against *itself*:

* ``latest``: the learner's current weights. SB3 (``training/train.py``) refreshes them every
  ``league.latest_every`` steps (workers pick them up at their next episode); in RLlib's
  multi-agent env (``training/rllib_env.py``) a ``latest`` seat is one more seat of the
  learning policy itself, which RLlib trains on too;
* ``snapshot``: frozen past versions, drawn by *prioritised fictitious self-play* (PFSP,
  as in AlphaStar's league): a snapshot's weight is ``(1 - p)^pfsp_power`` where ``p`` is the
  learner's win rate when that snapshot sat at its table, so the versions it beats least
  come back most;
* ``zoo``: one of the game's rule-based bots (``policies.zoo(game)`` and the heuristic),
  styles the learner must hold up against;
* ``heuristic``, ``random``: those two bots;
* ``pool``: any extra specs, e.g. exploiters trained against an earlier champion.

Each episode, with probability ``table`` all other seats come from one kind (all copies of
the latest learner, all the same zoo bot: the tables the evaluation panel plays); with
probability ``mixed`` the table is one of the panel's *mixed* tables: some copies of the latest
learner and, in every other seat, one bot drawn from the zoo and the pool (the champion's
weakest tables are of this kind: one bot among three copies collects what the copies fight
over); otherwise each seat draws its kind from ``mix`` on its own. Until the learner's weights
exist, ``latest`` and ``snapshot`` seats go to the zoo; until the first snapshot exists,
``snapshot`` seats go to ``latest``.

Where the learner's own versions come from is the one part that differs between trainers,
the ``versions`` of a League:

* :class:`FolderVersions` (SB3, the default): checkpoint folders the training loop writes
  in the run folder, the ``latest.json`` pointer (:func:`publish_latest`) and ``snapshots/``;
  every worker process on the machine reads them;
* :class:`PushedVersions` (RLlib): snapshots pushed as weight dicts by the driver to every
  env runner (``add``), pool checkpoints read by the driver and sent the same way, so remote
  workers need no shared files; ``latest`` is :data:`LEARNER`, a seat of the learning policy.

A League is picklable: every training worker process gets a copy, loads policies on first
use, keeps the last few loaded, and keeps its own PFSP statistics from the episodes it
plays (reported by the env through :meth:`League.report`).
"""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env.bounds import read_text_limited
from dragonstones_env.core import same_game
from dragonstones_env.play.single_agent import OpponentSampler
from dragonstones_env.policies import load_policy
from dragonstones_env.policies.checkpoint import CARD_FILE, CheckpointPolicy, card_view

KINDS = ("latest", "snapshot", "zoo", "heuristic", "random", "pool")
LATEST_POINTER = "latest.json"  # in the run folder: {"path": folder of the newest weights}
# The spec of a seat the learning policy plays itself (RLlib): sample_lineup gives None there.
# Not a path or a built-in name, so load_policy never sees it.
LEARNER = "<learner>"


@dataclass
class FolderVersions:
    """The learner's versions as checkpoint folders of the run folder (SB3: worker processes on
    one machine). ``latest.json`` points at the newest weights; ``snapshots/`` holds the frozen ones."""

    run_dir: str

    @property
    def snapshot_dir(self) -> Path:
        return Path(self.run_dir) / "snapshots"

    def latest(self) -> str | None:
        """The folder of the learner's newest weights, or None before the first are written, or when
        the pointer names a folder that is gone (a run stopped and resumed: its seats go to the zoo
        until the resumed learner publishes its weights)."""
        try:
            path = json.loads(read_text_limited(Path(self.run_dir) / LATEST_POINTER, "run_state"))["path"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return path if isinstance(path, str) and (Path(path) / CARD_FILE).is_file() else None

    def snapshots(self) -> list[str]:
        folder = self.snapshot_dir
        if not folder.is_dir():
            return []
        return sorted(str(p) for p in folder.iterdir() if (p / "card.json").is_file())

    def is_snapshot(self, spec: str) -> bool:
        return spec.startswith(str(self.snapshot_dir))

    def build(self, spec: str, seed: int) -> Any:
        return load_policy(spec, seed=seed)


@dataclass
class PushedVersions:
    """The learner's versions as the RLlib driver pushes them: ``latest`` is the learning policy
    itself (:data:`LEARNER`), snapshots arrive as ``{"spec", "weights", "activation"}`` dicts
    (:meth:`add`), and pool checkpoints as the same dicts in ``provided``, so that a remote env
    runner never reads a file."""

    max_snapshots: int = 8
    provided: dict[str, dict[str, Any]] = field(default_factory=dict)  # pool spec -> its actor's weights
    pushed: dict[str, dict[str, Any]] = field(default_factory=dict)  # snapshot spec -> weights, oldest first

    def add(self, snapshot: dict[str, Any]) -> None:
        """A frozen snapshot joins; beyond ``max_snapshots`` the oldest leave."""
        self.pushed.pop(snapshot["spec"], None)  # pushed again (a resumed run): it becomes the newest
        self.pushed[snapshot["spec"]] = snapshot
        for old in list(self.pushed)[: -self.max_snapshots]:
            del self.pushed[old]

    def latest(self) -> str:
        return LEARNER  # the learning policy always exists

    def snapshots(self) -> list[str]:
        return list(self.pushed)

    def is_snapshot(self, spec: str) -> bool:
        return spec in self.pushed

    def build(self, spec: str, seed: int) -> Any:
        item = self.pushed.get(spec) or self.provided.get(spec)
        if item is None:  # a built-in name: nothing to read
            return load_policy(spec, seed=seed)
        card = item.get("card")
        return CheckpointPolicy(item["weights"], item.get("activation", "tanh"), spec=spec, card=card, seed=seed,
                                view=card_view(card or {}, spec))


class League(OpponentSampler):
    def __init__(self, run_dir: str | Path | None, mix: dict[str, float], pool: Sequence[str] = (),
                 zoo: Sequence[str] = (), heuristic: str = "heuristic", table: float = 0.0,
                 mixed: float = 0.0, pfsp_power: float = 2.0, cache_size: int | None = None,
                 game: str | None = None, versions: FolderVersions | PushedVersions | None = None,
                 max_snapshots: int = 8):
        unknown = set(mix) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown league kind(s) {sorted(unknown)}; kinds are {list(KINDS)}")
        weights = list(mix.values())
        # nan passes every comparison test below, so finiteness is checked first
        if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
            raise ValueError(f"league weights must be finite and >= 0 with a positive sum, got {mix}")
        if mix.get("pool", 0) > 0 and not pool:
            raise ValueError("league weight 'pool' > 0 but the pool lists no policy")
        if not 0.0 <= table <= 1.0:
            raise ValueError(f"league table share must be in 0..1, got {table}")
        if not (0.0 <= mixed <= 1.0 and table + mixed <= 1.0):
            raise ValueError(f"league mixed share must be in 0..1 and table + mixed <= 1, got mixed={mixed}, "
                             f"table={table}")
        if not 0.0 <= pfsp_power < math.inf:
            raise ValueError(f"league pfsp_power must be finite and >= 0, got {pfsp_power}")
        if versions is None:
            if run_dir is None:
                raise ValueError("a League needs the run folder its learner's versions are written to, or versions")
            versions = FolderVersions(str(run_dir))
        self.versions = versions
        self.run_dir = None if run_dir is None else str(run_dir)
        self.mix = {k: float(mix.get(k, 0.0)) for k in KINDS}
        self.pool = list(pool)
        self.heuristic = heuristic  # the spec of the game's rule-based bot
        self.zoo = list(dict.fromkeys([*zoo, heuristic]))  # the zoo always holds the heuristic
        self.table = float(table)
        self.mixed = float(mixed)
        self.pfsp_power = float(pfsp_power)
        self.game = game  # the env name of the game it seats players for (None: not checked)
        # Every seat the league deals stays loaded: its snapshots, the two newest ``latest`` folders,
        # the pool, the zoo, random. A smaller cache reloads a 3 MB checkpoint (~25 ms) for a large
        # share of episodes: champion v5's run fell from 830 to 580 learner steps/s once its
        # snapshots outgrew the old fixed 8 (docs/training.md).
        self.cache_size = cache_size or max_snapshots + len(self.pool) + len(self.zoo) + 3
        self.results: dict[str, list[float]] = {}  # snapshot -> [learner's wins, games]
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._seated: list[str] = []  # the specs of the last line-up, for report()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = OrderedDict()  # loaded models stay in their process
        return state

    # ------------------------------------------------------------------ what exists
    def snapshots(self) -> list[str]:
        return self.versions.snapshots()

    def latest(self) -> str | None:
        """The spec of the learner's newest weights (:data:`LEARNER` in RLlib), or None before
        the first are written."""
        return self.versions.latest()

    def pfsp_weights(self, snapshots: Sequence[str]) -> np.ndarray:
        """PFSP: ``(1 - p)^power`` with ``p`` the learner's win rate against each snapshot
        (Laplace-smoothed, so an unseen snapshot counts as an even match)."""
        w = []
        for spec in snapshots:
            wins, games = self.results.get(spec, (0.0, 0.0))
            p = (wins + 1.0) / (games + 2.0)
            w.append((1.0 - p) ** self.pfsp_power + 1e-3)
        w = np.asarray(w, float)
        return w / w.sum()

    # ------------------------------------------------------------------ sampling
    def sample_lineup(self, rng: np.random.Generator, seats: int) -> list[Any]:
        """One policy per seat (None where the learning policy plays itself, :data:`LEARNER`)."""
        specs = self.sample_specs(rng, seats)
        self._seated = specs
        # a mixture in the pool draws each seat's member when the table seats it (policies.seat)
        return [self._load(spec, int(rng.integers(2**31))) for spec in specs]

    def sample_specs(self, rng: np.random.Generator, seats: int) -> list[str]:
        """The specs of one episode's ``seats`` other players."""
        snapshots, latest = self.snapshots(), self.latest()
        weights = dict(self.mix)
        if latest is None:  # nothing of the learner's yet: its seats go to the zoo
            weights["zoo"] += weights["latest"] + weights["snapshot"]
            weights["latest"] = weights["snapshot"] = 0.0
        elif not snapshots:
            weights["latest"] += weights["snapshot"]
            weights["snapshot"] = 0.0
        kinds = list(weights)
        p = np.array([weights[k] for k in kinds], float)
        p /= p.sum()
        draw = rng.random()
        if draw < self.table:
            kind = kinds[int(rng.choice(len(kinds), p=p))]
            if kind in ("zoo", "pool"):  # one bot for the whole table, as the panel seats them
                spec = self._pick(kind, rng, snapshots, latest)
                return [spec] * seats
            return [self._pick(kind, rng, snapshots, latest) for _ in range(seats)]
        if draw < self.table + self.mixed and latest is not None and seats >= 2:
            return self._mixed_table(rng, seats, latest)
        return [self._pick(kinds[int(rng.choice(len(kinds), p=p))], rng, snapshots, latest) for _ in range(seats)]

    def _mixed_table(self, rng: np.random.Generator, seats: int, latest: str) -> list[str]:
        """A panel mix seen from one copy's seat: 1..seats-1 other copies of the latest learner,
        and one bot of the zoo or the pool in each remaining seat (seats shuffled)."""
        copies = int(rng.integers(1, seats))
        bots = [*self.zoo, *self.pool]
        bot = bots[int(rng.integers(len(bots)))]
        specs = [latest] * copies + [bot] * (seats - copies)
        return [specs[i] for i in rng.permutation(seats)]

    def _pick(self, kind: str, rng: np.random.Generator, snapshots: list[str], latest: str | None) -> str:
        if kind == "latest":
            return latest
        if kind == "snapshot":
            return snapshots[int(rng.choice(len(snapshots), p=self.pfsp_weights(snapshots)))]
        if kind == "zoo":
            return self.zoo[int(rng.integers(len(self.zoo)))]
        if kind == "pool":
            return self.pool[int(rng.integers(len(self.pool)))]
        return self.heuristic if kind == "heuristic" else kind

    def report(self, won: bool) -> None:
        """Whether the learner won the episode of the last line-up (PFSP statistics)."""
        won = 1.0 if won else 0.0
        for spec in set(self._seated):
            if self.versions.is_snapshot(spec):
                stats = self.results.setdefault(spec, [0.0, 0.0])
                stats[0] += won
                stats[1] += 1.0

    # ------------------------------------------------------------------ loading
    def check(self) -> None:
        """Load every fixed spec (the pool and the zoo) once, so that a bad one stops the run
        before it starts rather than in the training workers. Raises PolicyError or ValueError."""
        for spec in dict.fromkeys([*self.pool, *self.zoo]):
            self._load(spec, 0)
        self._cache.clear()

    def _load(self, spec: str, seed: int) -> Any:
        if spec == LEARNER:
            return None
        policy = self._cache.get(spec)
        if policy is None:
            policy = self.versions.build(spec, seed)
            if self.game is not None and policy.game is not None and not same_game(policy.game, self.game):
                raise ValueError(f"league policy {spec!r} plays {policy.game}, not {self.game}")
            self._cache[spec] = policy
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(spec)
        return policy


def publish_latest(run_dir: str | Path, folder: str | Path) -> None:
    """Point the league's ``latest`` seats at ``folder`` (atomically: a worker never reads
    half a pointer)."""
    pointer = Path(run_dir) / LATEST_POINTER
    tmp = pointer.with_suffix(".tmp")
    tmp.write_text(json.dumps({"path": str(folder)}))
    os.replace(tmp, pointer)
