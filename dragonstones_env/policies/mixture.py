"""A mixed strategy shipped as one policy: a distribution over member policies, one member per seat per game.

Why (issue #28): three copies of one deterministic-looking policy value the same cards and fight
over them, and a lone bot of another style collects what they leave (v4's crowd lets a lone value
bot win 0.57 at 4 players). A symmetric equilibrium of a many-player game is in general *mixed*:
each seat draws a pure strategy for the game. PSRO (Lanctot et al. 2017) ships exactly that, a
meta-strategy over a population; ``training/meta.py`` finds the weights.

On disk a mixture is a checkpoint folder whose ``card.json`` has ``"algorithm": "mixture"`` and

    "members": [{"policy": "members/v4", "weight": 0.6}, {"policy": "value", "weight": 0.4}]

and, optionally, its own weights at a table size (a meta-game solved there; ``training/meta.py --into-mixture``):

    "weights_at": {"3": {"members/v4": 0.9, "value": 0.1}}

naming members of the card (the others weigh 0 at that size; sizes not listed play ``members``' weights).
Each member is a built-in rule bot by name, or a checkpoint folder *inside* the mixture's folder
(a relative path; a path that leaves the folder is refused), so that a mixture is shipped and
loaded as one folder. A shipped checkpoint's name loads too, but it follows the package (the name
``champion`` passed from v4 to v5), so ``training/meta.py`` copies shipped checkpoints in. A
member may not be a search (it needs the game, not an observation) nor another mixture.

How a member is drawn, per seat and per game: seating the mixture (:func:`~.base.seat`, which calls
:meth:`MixturePolicy.sit`) draws the member that plays the seat, from the table's seed (or the
mixture's own generator when the table gives none), and returns that member, seated in turn; so one
loaded mixture can sit in several seats and tables at once, each seat playing its own member.
``reset(seed)`` draws the member :meth:`MixturePolicy.act` plays when it is used without a table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env import games
from dragonstones_env.core import same_game

from .base import Policy, PolicyError, Table
from .checkpoint import MAX_WEIGHT_BYTES, read_card, unpacked_bytes

ALGORITHM = "mixture"  # card.json's "algorithm" of a mixture folder
MAX_MEMBERS = 64
# One memory budget for all of a mixture's member folders, as float32 weights once loaded (issue
# #49: one 198 MB member listed 8 times took 1.69 GB): as much as one checkpoint may hold. Each
# folder is loaded once however often it is listed, and counted before it loads.
MAX_MIXTURE_BYTES = MAX_WEIGHT_BYTES


@dataclass(frozen=True)
class Member:
    spec: str  # as written in the card: a built-in name or a folder relative to the mixture's
    weight: float


def is_weight(value: Any) -> bool:
    """Whether a card's member weight is one: a finite number >= 0 (not a bool)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value < float("inf")


def read_members(card: dict[str, Any], spec: str) -> list[Member]:
    """The card's members, checked: a non-empty list of {policy, weight} with weights >= 0 summing > 0."""
    raw = card.get("members")
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_MEMBERS:
        raise PolicyError(f"policy {spec!r}: a mixture's card needs 'members', a list of 1..{MAX_MEMBERS} "
                          "{'policy': name or relative folder, 'weight': number >= 0}")
    members = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or set(item) != {"policy", "weight"}:
            raise PolicyError(f"policy {spec!r}: members[{i}] must be {{'policy': ..., 'weight': ...}}, got {item!r}")
        name, weight = item["policy"], item["weight"]
        if not isinstance(name, str) or not name or len(name) > 200:
            raise PolicyError(f"policy {spec!r}: members[{i}].policy must be a name or relative folder (1..200 chars)")
        if not is_weight(weight):
            raise PolicyError(f"policy {spec!r}: members[{i}].weight must be a finite number >= 0, got {weight!r}")
        members.append(Member(name, float(weight)))
    total = sum(m.weight for m in members)
    if total <= 0:
        raise PolicyError(f"policy {spec!r}: the members' weights sum to 0; at least one must be > 0")
    if not math.isfinite(total):
        raise PolicyError(f"policy {spec!r}: the members' weights sum beyond a float ({total}); give weights "
                          "whose sum is finite (only their ratios matter: 0.5, 0.5)")
    return members


def read_weights_at(card: dict[str, Any], members: Sequence[Member], spec: str) -> dict[int, list[float]]:
    """The card's weights per table size (``"weights_at": {"3": {member: weight, ...}}``), checked: a size the
    game allows, each member named one of the card's ``members`` (the others weigh 0 there), weights as
    ``members``' (finite, >= 0, a positive sum). Sizes not listed play ``members``' own weights."""
    raw = card.get("weights_at", {})
    names = [m.spec for m in members]
    if not isinstance(raw, dict):
        raise PolicyError(f"policy {spec!r}: 'weights_at' must map a table size to {{member: weight}}, got {raw!r}")
    game = games.get(card["env"])
    out = {}
    for size, weights in raw.items():
        n = int(size) if isinstance(size, str) and size.isdigit() else None
        if n not in game.players:
            raise PolicyError(f"policy {spec!r}: weights_at: {size!r} is not a table size of {game.title} "
                              f"({game.players.start}..{game.players.stop - 1})")
        if not isinstance(weights, dict) or not weights or not set(weights) <= set(names):
            raise PolicyError(f"policy {spec!r}: weights_at[{size!r}] must map members of the card "
                              f"({', '.join(names)}) to weights, got {weights!r}")
        row = [weights.get(name, 0.0) for name in names]
        if not all(map(is_weight, row)) or not 0 < sum(row) < float("inf"):
            raise PolicyError(f"policy {spec!r}: weights_at[{size!r}]: weights must be finite numbers >= 0 with a "
                              f"positive sum, got {weights!r}")
        out[n] = [float(w) for w in row]
    return out


def member_path(folder: Path, name: str, spec: str) -> Path:
    """A member folder named relative to the mixture's folder, refused if it leaves it."""
    if Path(name).is_absolute():
        raise PolicyError(f"policy {spec!r}: member {name!r} must be relative to the mixture's folder")
    root = folder.resolve()
    path = (root / name).resolve()
    if root not in path.parents:
        raise PolicyError(f"policy {spec!r}: member {name!r} leaves the mixture's folder")
    return path


class MixturePolicy(Policy):
    """A distribution over member policies; each seat plays one member for a whole game.

    ``card`` is the card it was loaded from (its panel and provenance, as a checkpoint's ``card``);
    empty for a mixture built in code.
    """

    def __init__(self, members: Sequence[Any], weights: Sequence[float], names: Sequence[str], game: str | None,
                 spec: str = "mixture", seed: int | None = None, card: dict[str, Any] | None = None,
                 weights_at: Mapping[int, Sequence[float]] | None = None):
        self.weights = _normalised(weights, len(members), len(names), spec)
        # A table size's own weights (a meta-game solved at that size), else the weights above.
        self.weights_at = {n: _normalised(w, len(members), len(names), spec) for n, w in (weights_at or {}).items()}
        self.members, self.names, self.game, self.spec = list(members), list(names), game, spec
        self.card = dict(card or {})
        self.reset(seed)

    def draw(self, rng: np.random.Generator, num_players: int | None = None) -> Any:
        """One member, drawn by ``rng`` with the mixture's weights at a table of ``num_players``."""
        weights = self.weights_at.get(num_players, self.weights)
        return self.members[int(rng.choice(len(self.members), p=weights))]

    def reset(self, seed: int | None = None) -> None:
        """A new game without a table: the seed draws the member :meth:`act` plays (and seeds the members)."""
        self.rng = np.random.default_rng(seed)
        for member in self.members:
            member.reset(seed)
        self.current = self.draw(self.rng)

    def sit(self, table: Table) -> Policy:
        """The member that plays this seat for this game, drawn with the table's seed (the mixture's
        own generator when it gives none) and seated in turn."""
        rng = self.rng if table.seed is None else np.random.default_rng([table.seed, 0x313])
        return self.draw(rng, table.num_players).sit(table)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return self.current.act(observation)

    def __repr__(self) -> str:
        parts = ", ".join(f"{n}: {w:.3f}" for n, w in zip(self.names, self.weights, strict=True))
        return f"MixturePolicy({self.spec!r}; {parts})"


def _normalised(weights: Sequence[float], members: int, names: int, spec: str) -> np.ndarray:
    w = np.asarray(weights, np.float64)
    if members != len(w) or names != len(w) or not len(w) or (w < 0).any() or w.sum() <= 0:
        raise PolicyError(f"policy {spec!r}: members, weights and names must match, weights >= 0 with a "
                          "positive sum")
    return w / w.sum()


def load(folder: Path, spec: str, card: dict[str, Any], seed: int | None, deterministic: bool,
         load_member: Callable[[str | Path, int | None, bool], Policy]) -> MixturePolicy:
    """A mixture folder's policy. ``load_member`` loads one member: a :class:`Path` is a folder
    inside the mixture's (checked here), a ``str`` a built-in or shipped name (checked by it)."""
    members, names = [], []
    listed = read_members(card, spec)
    weights_at = read_weights_at(card, listed, spec)
    loaded: dict[str | Path, Policy] = {}  # a folder or name listed again is the same loaded policy
    budget = [MAX_MIXTURE_BYTES]
    for m in listed:
        inside = "/" in m.spec or "\\" in m.spec or m.spec.startswith(".") or (folder / m.spec).is_dir()
        target: str | Path = member_path(folder, m.spec, spec) if inside else m.spec
        if target not in loaded:
            if isinstance(target, Path):
                admit_member(target, m.spec, spec, budget)
            loaded[target] = load_member(target, seed, deterministic)
        policy = loaded[target]
        if isinstance(policy, MixturePolicy):
            raise PolicyError(f"policy {spec!r}: member {m.spec!r} is a mixture; list its members instead")
        if policy.capabilities.information_state:
            raise PolicyError(f"policy {spec!r}: member {m.spec!r} searches the game, and a mixture's members "
                              "decide from observations")
        if policy.game is not None and not same_game(policy.game, card["env"]):
            raise PolicyError(f"policy {spec!r}: member {m.spec!r} plays {policy.game}, the mixture {card['env']}")
        members.append(policy)
        names.append(m.spec)
    return MixturePolicy(members, [m.weight for m in listed], names, card["env"], spec, seed, card, weights_at)


def admit_member(path: Path, name: str, spec: str, budget: list[int]) -> None:
    """Before a member folder loads: its card read (a mixture refused here, not after loading it:
    400 nested folders were a RecursionError) and its weights' float32 size taken from the npz
    headers and counted against the mixture's ``budget`` (one-element list of the bytes left)."""
    card = read_card(path, f"{spec} member {name}")
    if card.get("algorithm") == ALGORITHM:
        raise PolicyError(f"policy {spec!r}: member {name!r} is a mixture; list its members instead")
    size = unpacked_bytes(path)
    if size > budget[0]:
        raise PolicyError(f"policy {spec!r}: member {name!r} holds {size:,} bytes of weights, over the "
                          f"{budget[0]:,} bytes left of the mixture's budget of {MAX_MIXTURE_BYTES:,} "
                          "(MAX_MIXTURE_BYTES; a folder listed more than once counts once)")
    budget[0] -= size


def write(folder: str | Path, members: Sequence[tuple[str, float]], env_name: str, layout: str,
          extra: dict[str, Any] | None = None) -> Path:
    """Write a mixture's card (its member folders are the caller's to copy inside ``folder``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    card = {"algorithm": ALGORITHM, "layout": layout, "env": env_name, "steps": 0,
            "members": [{"policy": s, "weight": float(w)} for s, w in members], **(extra or {})}
    (folder / "card.json").write_text(json.dumps(card, indent=2) + "\n")
    return folder
