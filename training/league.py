"""The self-play league: who sits at the learner's table, episode by episode.

Every other seat draws a kind of opponent from ``mix`` (weights of ``"snapshot"``,
``"heuristic"``, ``"random"`` and ``"pool"``): a frozen snapshot of the learner (a
checkpoint folder in ``snapshot_dir``, the newest ones kept), a built-in bot, or one of
the extra ``pool`` specs (any checkpoint or shipped policy: that is how a policy joins the
pool). Until the first snapshot exists, its weight goes to the heuristic.

A League is picklable: each training worker process gets a copy, loads snapshots on first
use and keeps the last few loaded.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

KINDS = ("snapshot", "heuristic", "random", "pool")


class League:
    def __init__(self, snapshot_dir: str | Path, mix: dict[str, float], pool: Sequence[str] = (),
                 cache_size: int = 4, heuristic: str = "heuristic", game: str | None = None):
        unknown = set(mix) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown league kind(s) {sorted(unknown)}; kinds are {list(KINDS)}")
        if any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
            raise ValueError(f"league weights must be >= 0 with a positive sum, got {mix}")
        if mix.get("pool", 0) > 0 and not pool:
            raise ValueError("league weight 'pool' > 0 but the pool lists no policy")
        self.snapshot_dir = str(snapshot_dir)
        self.mix = {k: float(mix.get(k, 0.0)) for k in KINDS}
        self.pool = list(pool)
        self.heuristic = heuristic  # the spec of the game's rule-based bot
        self.game = game  # the env name of the game it seats players for (None: not checked)
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Any] = OrderedDict()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = OrderedDict()  # loaded models stay in their process
        return state

    def snapshots(self) -> list[str]:
        folder = Path(self.snapshot_dir)
        if not folder.is_dir():
            return []
        return sorted(str(p) for p in folder.iterdir() if (p / "card.json").is_file())

    def sample_lineup(self, rng: np.random.Generator, seats: int) -> list[Any]:
        snapshots = self.snapshots()
        weights = dict(self.mix)
        if not snapshots:
            weights["heuristic"] += weights.pop("snapshot")
            weights["snapshot"] = 0.0
        kinds = list(weights)
        p = np.array([weights[k] for k in kinds], float)
        p /= p.sum()
        lineup = []
        for _ in range(seats):
            kind = kinds[int(rng.choice(len(kinds), p=p))]
            if kind == "snapshot":
                spec = snapshots[int(rng.integers(len(snapshots)))]
            elif kind == "pool":
                spec = self.pool[int(rng.integers(len(self.pool)))]
            elif kind == "heuristic":
                spec = self.heuristic
            else:
                spec = kind
            lineup.append(self._load(spec, int(rng.integers(2**31))))
        return lineup

    def check(self) -> None:
        """Load every fixed spec (the pool and the heuristic) once, so that a bad one stops the run
        before it starts rather than in the training workers. Raises PolicyError or ValueError."""
        for spec in dict.fromkeys([*self.pool, self.heuristic]):
            self._load(spec, 0)
        self._cache.clear()

    def _load(self, spec: str, seed: int) -> Any:
        from policies import load_policy

        policy = self._cache.get(spec)
        if policy is None:
            policy = load_policy(spec, seed=seed)
            plays = getattr(policy, "game", None)
            if self.game is not None and plays is not None and plays != self.game:
                raise ValueError(f"league policy {spec!r} plays {plays}, not {self.game}")
            self._cache[spec] = policy
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(spec)
        return policy
