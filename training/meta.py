"""PSRO's meta-solver over a population: the mixture of members that makes the best crowd (issue #28).

    python -m training.meta --members champion runs/policies/champion-v5 value heuristic aggressor \\
        miser collector --players 4 --games 4000 --workers 2 --out runs/meta/NAME \\
        [--min-alone heuristic=0.5] [--write-mixture runs/policies/champion-mixture]

Why: every cell above parity in "one bot against three copies" is exploitability, and three copies
of one policy value the same cards and fight over them. In a symmetric many-player game the
equilibrium is in general a *mixed* strategy: each seat draws a member for the game
(:mod:`dragonstones_env.policies.mixture`). PSRO (Lanctot et al. 2017) finds it over a
population with a meta-solver; this module is that solver, for the game's own win rates.

1. **The empirical game.** ``games`` games in which every seat draws a member uniformly and
   independently. Each seat of each game is one sample of ``W(m, S)``: the win share of member
   ``m`` (a game won by several seats counts ``1/winners`` each) when the other seats hold the
   multiset ``S``. Uniform line-ups rarely deal a pure crowd (1 seat in ``M**(n-1)``), so
   ``--pure-games N`` adds N games of each member alone against copies of each other member,
   and ``--cells`` starts from a previous run's games. Cells are shrunk toward parity by one
   pseudo-game (none is left undefined).
2. **A crowd's exploitability.** A lone member ``m`` against ``n - 1`` seats drawn from a mixture
   ``sigma`` wins ``u(m, sigma) = sum_S P_sigma(S) W(m, S)`` (``P_sigma``: the multinomial).
3. **The solve.** Every mixture on a grid of the simplex (weights in steps of ``1/grid``) is
   scored by ``max_m u(m, sigma)``, the best lone deviator's win rate against its crowd (at a
   symmetric equilibrium of the population's game, parity); constraints such as "sigma alone
   against 3 heuristic bots wins >= 0.5" (``--min-alone heuristic=0.5``, from the cells
   ``W(m, {h, h, h})``) drop mixtures. The lowest score wins; ties go to the simpler mixture.

The figures are in-sample and the minimum of many noisy scores is optimistic: the chosen mixture
must be judged on fresh games (``dragonstones evaluate --panel`` of the folder ``--write-mixture``
makes, which copies the member checkpoints inside it so that it ships as one folder).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env import bounds
from dragonstones_env.bounds import BOUNDS, InputError
from dragonstones_env.bounds import flag as bounded
from dragonstones_env.core.seeding import stream_seed
from dragonstones_env.evaluation.facts import EvaluationError, check_bounded
from dragonstones_env.evaluation.tournament import CHUNK, play_tasks, preload
from dragonstones_env.policies import PolicyError, mixture
from dragonstones_env.policies.checkpoint import CARD_FILE, POLICY_FILE, VALUE_FILE, expected_layout, read_card
from dragonstones_env.policies.registry import available, load_policy, shipped, shipped_dir
from dragonstones_env.registry import TableSizeError, UnknownGameError
from dragonstones_env.registry import get as get_game

from .outputs import OutputError, check_output


@dataclass
class EmpiricalGame:
    """``wins[m, s]`` and ``seats[m, s]``: member ``m``'s summed win shares and seat-games with the
    others holding multiset ``crowds[s]`` (a sorted tuple of member indices)."""

    members: list[str]
    players: int
    crowds: list[tuple[int, ...]]
    wins: np.ndarray
    seats: np.ndarray

    def __post_init__(self) -> None:
        self.index = {crowd: i for i, crowd in enumerate(self.crowds)}
        # per crowd: how many seats each member holds, and the multinomial coefficient of that count
        self.counts = np.array([np.bincount(c, minlength=len(self.members)) for c in self.crowds])  # (crowds, M)
        self.coef = np.array([math.factorial(self.players - 1) / np.prod([math.factorial(int(k)) for k in row])
                              for row in self.counts])

    @classmethod
    def empty(cls, members: Sequence[str], players: int) -> EmpiricalGame:
        crowds = list(itertools.combinations_with_replacement(range(len(members)), players - 1))
        shape = (len(members), len(crowds))
        return cls(list(members), players, crowds, np.zeros(shape), np.zeros(shape))

    def add(self, seats: Sequence[int], winners: Sequence[int]) -> None:
        """One game: ``seats[i]`` is the member index at seat ``i``; ``winners`` are seat numbers."""
        for i, m in enumerate(seats):
            s = self.index[tuple(sorted(seats[:i] + seats[i + 1:]))]
            self.seats[m, s] += 1
            if i in winners:
                self.wins[m, s] += 1.0 / len(winners)

    def rates(self, prior_games: float = 1.0) -> np.ndarray:
        """``W(m, S)``, shrunk toward parity by ``prior_games`` pseudo-games."""
        parity = 1.0 / self.players
        return (self.wins + prior_games * parity) / (self.seats + prior_games)

    def crowd_probabilities(self, sigmas: np.ndarray) -> np.ndarray:
        """``P_sigma(S)`` for each mixture (rows of ``sigmas``) and each crowd: ``(mixtures, crowds)``."""
        powers = np.prod(sigmas[:, None, :] ** self.counts[None, :, :], axis=2)  # 0 ** 0 == 1
        return powers * self.coef[None, :]

    def deviator_rates(self, sigmas: np.ndarray) -> np.ndarray:
        """``u(m, sigma)``: each member alone against ``n - 1`` seats drawn from each mixture: ``(mixtures, M)``."""
        return self.crowd_probabilities(sigmas) @ self.rates().T

    def alone_rates(self, sigmas: np.ndarray, crowd_member: int) -> np.ndarray:
        """Each mixture alone against ``n - 1`` copies of one member: ``sum_m sigma_m W(m, {c, .., c})``."""
        s = self.crowds.index((crowd_member,) * (self.players - 1))
        return sigmas @ self.rates()[:, s]


def simplex_grid(members: int, grid: int) -> np.ndarray:
    """Every mixture of ``members`` weights in steps of ``1/grid`` (compositions of ``grid``)."""
    rows = []
    for cuts in itertools.combinations(range(grid + members - 1), members - 1):
        bounds = (-1, *cuts, grid + members - 1)
        rows.append([bounds[i + 1] - bounds[i] - 1 for i in range(members)])
    return np.array(rows, np.float64) / grid


def solve(game: EmpiricalGame, grid: int, min_alone: dict[int, float], chunk: int = 20_000) -> dict[str, Any]:
    """The grid's mixture with the lowest best-deviator rate, among those meeting ``min_alone``."""
    sigmas = simplex_grid(len(game.members), grid)
    best_score, best = np.inf, None
    ranked: list[tuple[float, int, list[float]]] = []
    for start in range(0, len(sigmas), chunk):
        part = sigmas[start:start + chunk]
        score = game.deviator_rates(part).max(axis=1)
        ok = np.ones(len(part), bool)
        for member, floor in min_alone.items():
            ok &= game.alone_rates(part, member) >= floor
        score = np.where(ok, score, np.inf)
        support = (part > 0).sum(axis=1)
        order = np.lexsort((support, score))  # lowest score, then fewest members
        for i in order[:10]:
            if np.isfinite(score[i]):
                ranked.append((float(score[i]), int(support[i]), part[i].tolist()))
        i = int(order[0])
        if score[i] < best_score:
            best_score, best = float(score[i]), part[i]
    if best is None:
        raise EvaluationError("no mixture on the grid meets the --min-alone constraints")
    ranked.sort()
    dev = game.deviator_rates(best[None])[0]
    return {
        "weights": dict(zip(game.members, best.tolist(), strict=True)),
        "best_deviator_rate": best_score,
        "deviator_rates": dict(zip(game.members, dev.tolist(), strict=True)),
        "alone": {game.members[c]: float(game.alone_rates(best[None], c)[0]) for c in range(len(game.members))},
        "runners_up": [{"score": s, "weights": dict(zip(game.members, w, strict=True))} for s, _, w in ranked[1:6]],
        "grid": grid,
    }


def play_population(members: Sequence[str], players: int, games: int, seed: int, workers: int,
                    game_id: str, progress: bool = True) -> EmpiricalGame:
    """``games`` games with every seat drawn uniformly and independently from ``members``."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5E70]))
    draws = rng.integers(len(members), size=(games, players))
    empirical = EmpiricalGame.empty(members, players)
    play_rows(empirical, [[int(m) for m in row] for row in draws], seed, workers, game_id, progress,
              "population games")
    return empirical


def play_rows(game: EmpiricalGame, rows: Sequence[Sequence[int]], seed: int, workers: int, game_id: str,
              progress: bool, desc: str) -> None:
    """Play one game per row (the member index at each seat; game ``g`` dealt with ``seed + g``) and
    add each to ``game``."""
    seats = [tuple(game.members[i] for i in row) for row in rows]
    tasks = [(0, list(enumerate(seats))[i:i + CHUNK]) for i in range(0, len(seats), CHUNK)]
    records = play_tasks(tasks, game_id, game.players, seed, False, preload(game.members, game_id, False), workers,
                         progress, desc)[0]
    for rec, row in zip(records, rows, strict=True):
        game.add(list(row), rec["winners"])


def member_source(spec: str) -> Path | None:
    """The checkpoint folder to copy into a mixture for a member spec, or None for a rule bot,
    kept by its name. A shipped checkpoint is copied too: its name can pass to a newer checkpoint
    (``champion`` went from v4 to v5), and the mixture must keep playing what its solver measured."""
    if spec in shipped():
        return shipped_dir() / spec
    return None if spec in available() else Path(spec)


def play_pure(game: EmpiricalGame, games: int, seed: int, workers: int, game_id: str, progress: bool = True) -> None:
    """``games`` games of each member alone against ``n - 1`` copies of each other member, added to
    ``game``: the cells a pure crowd and a ``--min-alone`` floor read, which uniform line-ups
    rarely deal (1 in M**(n-1) seats)."""
    members, n = game.members, game.players
    pairs = [(m, c) for m in range(len(members)) for c in range(len(members)) if m != c]
    rows = []
    for m, c in pairs:
        for g in range(games):
            row = [c] * n
            row[g % n] = m  # the lone seat rotated
            rows.append(row)
    play_rows(game, rows, stream_seed(seed, "meta-alone"), workers, game_id, progress, "alone-vs-copies games")


def _short(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}" if isinstance(err, RecursionError) else str(err)
    return text if len(text) <= 300 else text[:297] + "..."


def read_cells(path: Path, members: Sequence[str], players: int) -> EmpiricalGame:
    """The empirical game a previous run wrote (its meta.json), to add games to or solve again."""
    try:  # at most FILE_BYTES["meta"], nested as a meta.json is (not /dev/zero, not 100k brackets deep)
        data = json.loads(bounds.read_text_limited(path, "meta", "meta.json"))
        cells = data["cells"]
        game = EmpiricalGame.empty(members, players)
        wins, seats = np.array(cells["wins"], np.float64), np.array(cells["seats"], np.float64)
        same = data["members"] == list(members) and data["players"] == players
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as err:
        raise EvaluationError(f"--cells {path}: not a meta.json of this module ({_short(err)})") from None
    if not same or wins.shape != game.wins.shape or seats.shape != game.seats.shape:
        raise EvaluationError(f"--cells {path}: its members and players must be these ({', '.join(members)}; "
                              f"{players})")
    if not (np.isfinite(wins).all() and (seats >= 0).all() and (wins >= 0).all() and (wins <= seats).all()):
        raise EvaluationError(f"--cells {path}: counts must be finite, >= 0, wins <= seat-games")
    game.wins, game.seats = wins, seats
    return game


def write_mixture(folder: Path, members: Sequence[str], weights: dict[str, float], game_id: str,
                  extra: dict[str, Any]) -> Path:
    """The chosen mixture as one folder: checkpoint folders (shipped ones too) copied into
    ``members/``, rule bots kept as names."""
    entries = []
    for i, spec in enumerate(members):
        source = member_source(spec)
        if weights[spec] <= 0:
            continue
        if source is None:
            entries.append((spec, weights[spec]))
            continue
        name = f"members/{i}-{source.name}"
        (folder / name).mkdir(parents=True, exist_ok=True)
        for file in (CARD_FILE, POLICY_FILE, VALUE_FILE):  # what plays; never model.zip (a pickle)
            if (source / file).is_file():
                shutil.copy2(source / file, folder / name / file)
        entries.append((name, weights[spec]))
    env_name = get_game(game_id).name
    return mixture.write(folder, entries, env_name, expected_layout(env_name), extra)


def into_mixture(folder: Path, members: Sequence[str], weights: dict[str, float], players: int,
                 meta: dict[str, Any]) -> Path:
    """The solve's weights written as the weights at ``players`` of the mixture ``folder`` (its card's
    ``weights_at``): a mixture solved at each table size. Every member of the solve must be one the
    mixture can hold without copying: a folder inside it, or a built-in rule bot (listed with weight 0
    at the other sizes if it is new). Everything is checked before the card is written."""
    card = read_card(folder, str(folder))
    if card.get("algorithm") != mixture.ALGORITHM:
        raise EvaluationError(f"--into-mixture {folder}: not a mixture folder (its card's algorithm is "
                              f"{card.get('algorithm')!r})")
    listed = [m["policy"] for m in card.get("members", []) if isinstance(m, dict)]
    root = folder.resolve()
    names = {}
    for spec in members:
        path = Path(spec).resolve()
        if root in path.parents:
            names[spec] = path.relative_to(root).as_posix()
        elif spec in available() and spec not in shipped():
            names[spec] = spec
        else:
            raise EvaluationError(f"--into-mixture: member {spec!r} is neither a folder inside {folder} nor a "
                                  "rule bot; a new network needs a new mixture (--write-mixture)")
        if names[spec] not in listed and names[spec] != spec:
            raise EvaluationError(f"--into-mixture: {spec!r} is inside {folder} but not one of its members "
                                  f"({', '.join(listed)})")
    card["members"] += [{"policy": names[s], "weight": 0.0} for s in members
                        if weights[s] > 0 and names[s] not in listed]
    card.setdefault("weights_at", {})[str(players)] = {names[s]: weights[s] for s in members if weights[s] > 0}
    card.setdefault("meta_at", {})[str(players)] = meta
    before = (folder / CARD_FILE).read_text()
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
    try:
        load_policy(str(folder), seed=0)  # the new card loads as any mixture does, or the old one is put back
    except PolicyError:
        (folder / CARD_FILE).write_text(before)
        raise
    return folder


def parse_floor(items: Sequence[str], members: Sequence[str]) -> dict[int, float]:
    out = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or name not in members:
            raise EvaluationError(f"--min-alone {item!r}: give MEMBER=RATE with MEMBER one of {', '.join(members)}")
        try:
            out[members.index(name)] = float(value)
        except ValueError:
            raise EvaluationError(f"--min-alone {item!r}: {value!r} is not a number") from None
    return out


def _games(text: str) -> int:
    """--games: 0 (with --cells: no new games) or the ``games`` row."""
    return 0 if text.strip() == "0" else bounded("games")(text)


def build_parser() -> argparse.ArgumentParser:
    """Every number a flag of the bounds table's (dragonstones_env/bounds.py: players, games,
    workers, seed, meta.*), checked as it is parsed."""
    parser = argparse.ArgumentParser(prog="python -m training.meta", description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", nargs="+", required=True, help="policy specs of the population")
    parser.add_argument("--game", default="dragonstones")
    parser.add_argument("--players", type=bounded("players"), default=4)
    _games.bound = BOUNDS["games"]  # type: ignore[attr-defined]  # 0 too, with --cells
    parser.add_argument("--games", type=_games, default=4000, help="games of uniform line-ups (0 with --cells)")
    parser.add_argument("--pure-games", type=bounded("meta.pure_games"), default=0, metavar="N",
                        help="also N games of each member alone against copies of each other member")
    parser.add_argument("--cells", metavar="META_JSON", help="start from the games of a previous run's meta.json")
    parser.add_argument("--workers", type=bounded("workers"), default=2)
    parser.add_argument("--seed", type=bounded("seed"), default=0)
    parser.add_argument("--grid", type=bounded("meta.grid"), default=20, help="weights in steps of 1/GRID")
    parser.add_argument("--min-alone", nargs="*", default=[], metavar="MEMBER=RATE",
                        help="only mixtures that alone against n-1 copies of MEMBER win at least RATE")
    parser.add_argument("--out", required=True, help="folder for meta.json")
    parser.add_argument("--write-mixture", metavar="FOLDER", help="also write the chosen mixture as a policy folder")
    parser.add_argument("--into-mixture", metavar="FOLDER",
                        help="write the chosen weights as the weights at --players of this mixture folder "
                             "(under runs/; ship it with training.promote)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into --out and --write-mixture even if they exist and are not empty")
    return parser


def check_outputs(args: argparse.Namespace) -> None:
    """--out and --write-mixture, before any game is played: new folders, or --overwrite; never
    inside the shipped checkpoints (training/outputs.py)."""
    try:
        check_output(args.out, "--out", args.overwrite)
        if args.write_mixture:
            check_output(args.write_mixture, "--write-mixture", args.overwrite)
        if args.into_mixture:  # an existing folder, written into: never a shipped one
            check_output(args.into_mixture, "--into-mixture", overwrite=True)
            if args.write_mixture:
                raise EvaluationError("give --write-mixture (a new mixture) or --into-mixture (a table size of one)")
    except OutputError as err:
        raise EvaluationError(str(err)) from None


def check_grid(members: int, grid: int) -> None:
    """The grid's mixtures, C(grid + members - 1, members - 1), within ``meta.mixtures`` (grid 50
    of 8 members is 264 M of them: a MemoryError)."""
    count = math.comb(grid + members - 1, members - 1)
    try:
        BOUNDS["meta.mixtures"].check(count, "meta.mixtures")
    except InputError as err:
        raise EvaluationError(f"--grid {grid} of {members} members makes {count:,} mixtures: {err}; use a "
                              "coarser --grid") from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_outputs(args)
        get_game(args.game).check_players(args.players, "--players")
        if args.games or not args.cells:
            check_bounded("games", args.games)
        if not 2 <= len(args.members) <= 8 or len(set(args.members)) != len(args.members):
            raise EvaluationError("--members: give 2 to 8 distinct policy specs")
        check_grid(len(args.members), args.grid)
        floors = parse_floor(args.min_alone, args.members)
        started = time.time()
        empirical = read_cells(Path(args.cells), args.members, args.players) if args.cells else \
            EmpiricalGame.empty(args.members, args.players)
        if args.games:
            played = play_population(args.members, args.players, args.games, args.seed, args.workers, args.game)
            empirical.wins += played.wins
            empirical.seats += played.seats
        if args.pure_games:
            play_pure(empirical, args.pure_games, args.seed, args.workers, args.game)
        result = solve(empirical, args.grid, floors)
    except (EvaluationError, PolicyError, UnknownGameError, TableSizeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    result.update({"members": args.members, "players": args.players, "games": args.games, "seed": args.seed,
                   "pure_games": args.pure_games, "cells_from": args.cells,
                   "seconds": round(time.time() - started, 1), "min_alone": args.min_alone,
                   "cells": {"crowds": [[args.members[i] for i in c] for c in empirical.crowds],
                             "wins": empirical.wins.tolist(), "seats": empirical.seats.tolist()}})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").write_text(json.dumps(result, indent=1) + "\n")
    print("mixture:", {k: round(v, 3) for k, v in result["weights"].items() if v > 0})
    print(f"best lone deviator against its crowd: {result['best_deviator_rate']:.3f} (in-sample; parity "
          f"{1 / args.players:.3f})")
    for m, r in result["deviator_rates"].items():
        print(f"  {m} alone vs the mixture's crowd: {r:.3f};  the mixture alone vs {args.players - 1} {m}: "
              f"{result['alone'][m]:.3f}")
    meta = {k: result[k] for k in ("best_deviator_rate", "deviator_rates", "alone", "games", "players", "members",
                                   "seed")}
    if args.write_mixture:
        write_mixture(Path(args.write_mixture), args.members, result["weights"], args.game, {"meta": meta})
        print(f"wrote {args.write_mixture}: judge it on fresh games with dragonstones evaluate --panel")
    if args.into_mixture:
        try:
            into_mixture(Path(args.into_mixture), args.members, result["weights"], args.players, meta)
        except (EvaluationError, PolicyError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"wrote the weights at {args.players} players into {args.into_mixture}: judge it on fresh games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
