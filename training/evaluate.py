"""Evaluate policies against each other: win rates with 95% intervals and OpenSkill ratings.

    python -m training.evaluate --policies heuristic random policies/my-run random --players 4 \\
        --games 1000 --workers 2 --seed 0 --out runs/eval-my-run

Every game seats ``--players`` policies drawn from the given specs (see :func:`lineups`), the
seats rotating from game to game; the games are spread over ``--workers`` processes, each of
which loads its policies once. Game ``g`` is played with seed ``seed + g`` and every policy is
``reset`` with a seed derived from ``(seed, g, seat)``, so the results depend on ``--seed`` only,
never on the number of workers.

Per policy (distinct spec) it reports the seat-games played, the wins (a game won by ``k``
players counts ``1/k`` to each; a truncated game is no win), the win rate with its 95% Wilson
interval, the mean final reward, and an OpenSkill Plackett–Luce rating (``mu``, ``sigma`` and
the conservative ``mu - 3 sigma`` the table is sorted by). In ``--out`` it writes
``results.md``, ``games.csv``, ``games.json``, ``summary.json`` and ``ratings.png`` (and
``training_curve.png`` from ``<run-dir>/eval.csv`` with ``--run-dir``).

``--panel CANDIDATE`` plays one candidate against each opponent of the game's panel (its zoo
bots, its heuristic, ``random``, any ``--baseline``) in every mix of k candidates against n-k
opponents, and reports the per-seat win rate's ratio to parity per mix, the worst of them (the
robustness figure) and all-copies tables (game length, unwon auctions, truncation); see
:func:`panel` (``panel.md``, ``panel.csv``, ``panel.json``, ``panel_<n>p.png``).

From Python::

    from training.evaluate import evaluate, format_table, panel, robustness
    print(robustness(panel("champion", ["heuristic", "random"], players=[4], games=40)))
    summary = evaluate(["heuristic", "random"], players=4, games=200, lineup=["heuristic"] + ["random"] * 3)
    print(format_table(summary))
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import multiprocessing as mp
import sys
import time
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env import games
from dragonstones_env.core import same_game
from dragonstones_env.games import GameSpec
from play.arena import GameResult, play_game, wilson_interval
from policies import PolicyError, load_policy, zoo

CHUNK = 8  # games per task sent to a worker (the progress bar moves a chunk at a time)
PANEL_GAMES = 200  # games per panel mix by default: enough to spot a weakness, not to claim one (use >= 1000)


# ---------------------------------------------------------------------------- per-game facts
# What evaluation needs to know about a game -- its bot, its figures (turns, auctions, unwon), what
# stalling means there, its table sizes -- is its GameSpec, in the game registry.
GAMES = games.ids()  # the games registered at import (the command line's choices)


def game_facts(game: str) -> GameSpec:
    """The spec of ``game`` (an EvaluationError naming the known games if there is none)."""
    try:
        return games.get(game)
    except games.UnknownGameError:
        raise EvaluationError(f"unknown game {game!r}; choose one of {', '.join(games.ids())}") from None


def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EvaluationError(f"{name} must be a positive int, got {value!r}")


class EvaluationError(ValueError):
    """A bad evaluation request (unknown spec, table size, line-up); the message says what to fix."""


# ---------------------------------------------------------------------------- games and line-ups
def player_range(game: str) -> tuple[int, int]:
    """The table sizes ``game`` allows (inclusive)."""
    players = game_facts(game).players
    return players.start, players.stop - 1


# Env options of every game evaluate() plays in this process (Fist's custom deck, issue #16:
# ``characters``, ``exclude``); set by evaluate(env_options=...), in-process only (workers=1).
ENV_OPTIONS: dict[str, Any] = {}
# The custom deck of those options (or None): bots that can value one are told it (use_deck).
ENV_DECK: list[Any] = [None]


def checked_options(game: str, players: int, env_options: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """``env_options`` checked (a bad option fails here), with a custom deck's cards loaded once, and that deck.

    Every game builds a new env; a deck file given as a path would be read and validated (its
    conservation check: a fraction of a second) for each of them, so the options hold the
    deck's checked cards instead. The deck is None for the box's.
    """
    probe = game_facts(game).env(num_players=players, **env_options)
    deck = getattr(probe.unwrapped, "deck", None)
    options = dict(env_options)
    if deck is not None:
        options.update(characters=list(deck.custom), exclude=list(deck.exclude))
    return options, deck


@contextlib.contextmanager
def custom_deck(game: str, players: int, env_options: dict[str, Any] | None, workers: int) -> Iterator[None]:
    """Play this process's games with ``env_options`` (Fist's custom deck) while inside; checked first.

    The options live in this process only (``ENV_OPTIONS``), so they need ``workers=1``; a bad option
    fails here, before any game, and rule bots are told the deck (``ENV_DECK``, ``use_deck``).
    """
    if env_options and workers > 1:
        raise EvaluationError("env_options (a custom deck) are played with workers=1")
    ENV_OPTIONS.clear()
    if env_options:
        options, ENV_DECK[0] = checked_options(game, players, env_options)
        ENV_OPTIONS.update(options)
    try:
        yield
    finally:
        ENV_OPTIONS.clear()  # this evaluation's deck only
        ENV_DECK[0] = None


def env_factory(game: str, players: int):
    """A picklable zero-argument function building a new environment of ``game``."""
    return partial(game_facts(game).env, num_players=players, **ENV_OPTIONS)


def lineups(specs: Sequence[str], players: int, games: int, seed: int = 0,
            lineup: Sequence[str] | None = None) -> list[tuple[str, ...]]:
    """The spec seated at each seat of each game.

    * ``lineup`` given (one spec per seat): game ``g`` seats ``lineup[(i + g) % players]`` at seat ``i``.
    * exactly ``players`` specs: the same with ``lineup = specs`` (every game seats all of them,
      and every ``players`` consecutive games cover all rotations).
    * fewer specs than seats: the specs repeated in turn to fill the table, then rotated.
    * more specs than seats: groups of ``players`` specs, each time those that have played
      least (ties broken by a generator seeded with ``seed``), in a shuffled order, each group
      playing ``players`` consecutive games in all its rotations.
    """
    specs = list(specs)
    if lineup is None and len(specs) <= players:
        lineup = [specs[i % len(specs)] for i in range(players)]
    if lineup is not None:
        return [tuple(lineup[(i + g) % players] for i in range(players)) for g in range(games)]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x11E0]))
    counts = np.zeros(len(specs))
    out: list[tuple[str, ...]] = []
    while len(out) < games:
        order = np.lexsort((rng.random(len(specs)), counts))  # least played first, random among equals
        group = [int(k) for k in rng.permutation(order[:players])]
        counts[group] += 1
        for r in range(min(players, games - len(out))):
            out.append(tuple(specs[group[(i + r) % players]] for i in range(players)))
    return out


def policy_seed(seed: int, game_index: int, seat: int) -> int:
    """The seed a policy is reset with for one game and seat."""
    return int(np.random.SeedSequence([seed, game_index, seat]).generate_state(1)[0])


# ---------------------------------------------------------------------------- playing (workers)
class _Player:
    """The policies of one process: per spec, one instance per copy seated in the same game."""

    def __init__(self, game: str, players: int, seed: int, deterministic: bool,
                 preloaded: dict[str, Any] | None = None):
        self.game = game
        self.make_env = {players: env_factory(game, players)}  # per table size (a panel plays several)
        self.figures = game_facts(game).figures
        self.seed = seed
        self.deterministic = deterministic
        self.cache: dict[str, list[Any]] = {spec: [p] for spec, p in (preloaded or {}).items()}

    def _load(self, spec: str, seed: int | None) -> Any:

        policy = load_policy(spec, seed=seed, deterministic=self.deterministic)
        if "torch" in sys.modules:  # several processes share few cores: one thread each
            sys.modules["torch"].set_num_threads(1)
        return policy

    def _policy(self, spec: str, copy: int, seed: int) -> Any:
        instances = self.cache.setdefault(spec, [])
        while len(instances) <= copy:
            instances.append(self._load(spec, seed))
        policy = instances[copy]
        if callable(getattr(policy, "reset", None)):
            policy.reset(seed)
        else:  # no reset(): a new instance per game keeps results independent of the worker
            policy = instances[copy] = self._load(spec, seed)
        if ENV_DECK[0] is not None and callable(getattr(policy, "use_deck", None)):
            policy.use_deck(ENV_DECK[0])  # a rule bot values the custom cards (after its reset)
        return policy

    def play(self, game_index: int, seats: Sequence[str]) -> dict[str, Any]:
        copies: dict[str, int] = {}
        policies = []
        for seat, spec in enumerate(seats):
            copy = copies[spec] = copies.get(spec, -1) + 1
            policies.append(self._policy(spec, copy, policy_seed(self.seed, game_index, seat)))
        n = len(seats)
        if n not in self.make_env:
            self.make_env[n] = env_factory(self.game, n)
        result: GameResult = play_game(self.make_env[n], policies, list(seats), self.seed + game_index,
                                       inspect=self.figures)
        return {"game": game_index, **result.to_dict()}

    def play_chunk(self, chunk: Sequence[tuple[int, Sequence[str]]]) -> list[dict[str, Any]]:
        return [self.play(g, seats) for g, seats in chunk]


_WORKER: _Player | None = None


def _worker_init(game: str, players: int, seed: int, deterministic: bool) -> None:
    global _WORKER
    _WORKER = _Player(game, players, seed, deterministic)


def _worker_chunk(chunk: Sequence[tuple[int, Sequence[str]]]) -> list[dict[str, Any]]:
    assert _WORKER is not None
    return _WORKER.play_chunk(chunk)


def _worker_table_chunk(task: tuple[int, Sequence[tuple[int, Sequence[str]]]]) -> tuple[int, list[dict[str, Any]]]:
    table, chunk = task
    return table, _worker_chunk(chunk)


def _context() -> mp.context.BaseContext:
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


def preload(specs: Sequence[str], game: str, deterministic: bool) -> dict[str, Any]:
    """Each spec loaded once, so that a bad one fails before any game (and one process reuses them)."""
    preloaded = {spec: load_policy(spec, seed=0, deterministic=deterministic) for spec in dict.fromkeys(specs)}
    for spec, policy in preloaded.items():
        plays = getattr(policy, "game", None)  # None: a policy of any game (random, user objects)
        if plays is not None and not same_game(plays, game):
            raise EvaluationError(f"policy {spec!r} plays {plays}, not {game}")
    return preloaded


def play_tasks(tasks: Sequence[tuple[int, Sequence[tuple[int, Sequence[str]]]]], game: str, players: int, seed: int,
               deterministic: bool, preloaded: dict[str, Any], workers: int, progress: bool,
               desc: str) -> dict[int, list[dict[str, Any]]]:
    """Play ``(table, [(game_index, seats), ...])`` tasks in this process or in ``workers`` processes.

    Returns each table's game records in game order: the order tasks finish in never shows.
    """
    from tqdm import tqdm  # the train extra: evaluation imports it only when it shows progress

    out: dict[int, list[dict[str, Any]]] = {table: [] for table, _ in tasks}
    total = sum(len(chunk) for _, chunk in tasks)
    with tqdm(total=total, desc=desc, unit="game", disable=not progress, file=sys.stderr) as bar:
        if workers == 1:
            player = _Player(game, players, seed, deterministic, preloaded)
            for table, chunk in tasks:
                out[table].extend(player.play_chunk(chunk))
                bar.update(len(chunk))
        else:
            with _context().Pool(min(workers, len(tasks)), _worker_init,
                                 (game, players, seed, deterministic)) as pool:
                for table, done in pool.imap_unordered(_worker_table_chunk, tasks):
                    out[table].extend(done)
                    bar.update(len(done))
    for records in out.values():
        records.sort(key=lambda rec: rec["game"])
    return out


# ---------------------------------------------------------------------------- statistics
def summarize(records: Sequence[dict[str, Any]], specs: Sequence[str]) -> list[dict[str, Any]]:
    """Per distinct spec: games, wins, win rate and interval, mean reward, OpenSkill rating; best first."""
    from openskill.models import PlackettLuce  # the train extra, needed only for ratings

    distinct = list(dict.fromkeys(specs))
    model = PlackettLuce()
    ratings = {spec: model.rating(name=spec) for spec in distinct}
    stats = {spec: {"games": 0, "wins": 0.0, "reward": 0.0, "truncated": 0} for spec in distinct}
    for rec in records:
        winners = set(rec["winners"])
        for seat, spec in enumerate(rec["seats"]):
            s = stats[spec]
            s["games"] += 1
            s["reward"] += rec["rewards"][seat]
            s["truncated"] += bool(rec["truncated"])
            if seat in winners:
                s["wins"] += 1.0 / len(winners)
        # One OpenSkill player per distinct spec in the game: rank 1 if one of its seats won, else 2.
        present = list(dict.fromkeys(rec["seats"]))
        if len(present) >= 2:
            won = {rec["seats"][w] for w in winners}
            new = model.rate([[ratings[spec]] for spec in present], ranks=[1 if spec in won else 2 for spec in present])
            for spec, team in zip(present, new, strict=True):
                ratings[spec] = team[0]
    rows = []
    for spec in distinct:
        s, r = stats[spec], ratings[spec]
        n = s["games"]
        low, high = wilson_interval(s["wins"], n)
        rows.append({
            "spec": spec,
            "games": n,
            "wins": s["wins"],
            "win_rate": s["wins"] / n if n else 0.0,
            "ci_low": low,
            "ci_high": high,
            "truncated": s["truncated"],
            "mean_reward": s["reward"] / n if n else 0.0,
            "mu": r.mu,
            "sigma": r.sigma,
            "rating": r.mu - 3 * r.sigma,
        })
    rows.sort(key=lambda row: (-row["rating"], -row["win_rate"], row["spec"]))
    return rows


# ---------------------------------------------------------------------------- the evaluation
def evaluate(specs: Sequence[str], players: int, games: int, workers: int = 1, seed: int = 0,
             lineup: Sequence[str] | None = None, game: str = "dragonstones", deterministic: bool = False,
             out: str | Path | None = None, run_dir: str | Path | None = None, progress: bool = True,
             env_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play ``games`` games between ``specs`` at a table of ``players`` and summarize them.

    ``env_options``: options of the game's env for every game, such as Fist's custom deck
    (``{"characters": "examples/characters.yaml", "exclude": ["Troll"]}``); with ``workers=1``.

    ``specs`` are policy specs for :func:`policies.load_policy` (names or checkpoint paths);
    ``lineup`` optionally fixes the spec of each seat (rotated from game to game, see
    :func:`lineups`). Returns a dict with the settings, ``"policies"`` (one row per distinct
    spec, best rating first: ``spec, games, wins, win_rate, ci_low, ci_high, truncated,
    mean_reward, mu, sigma, rating``), ``"truncated"`` (games without a winner) and
    ``"games"`` (one record per game). With ``out``, also writes the report files there (see
    :func:`write_outputs`). Raises :class:`EvaluationError` (or :class:`policies.PolicyError`
    for a spec that cannot be loaded) before any game is played.
    """
    specs = [str(s) for s in specs]
    lineup = None if lineup is None else [str(s) for s in lineup]
    low, high = player_range(game)
    if isinstance(players, bool) or not isinstance(players, int) or not low <= players <= high:
        raise EvaluationError(f"{game} is played by {low} to {high} players, got players={players!r}")
    _check_positive_int("games", games)
    _check_positive_int("workers", workers)
    if not specs and lineup:
        specs = list(dict.fromkeys(lineup))
    if not specs:
        raise EvaluationError("no policy specs given")
    if lineup is not None:
        if len(lineup) != players:
            raise EvaluationError(f"the line-up has {len(lineup)} specs but the table has {players} seats")
        stray = sorted(set(lineup) - set(specs))
        unused = sorted(set(specs) - set(lineup))
        if stray or unused:
            raise EvaluationError(
                "the line-up and the policies must name the same specs"
                + (f"; in the line-up only: {', '.join(stray)}" if stray else "")
                + (f"; never seated by the line-up: {', '.join(unused)}" if unused else "")
            )
    if run_dir is not None and not (Path(run_dir) / "eval.csv").is_file():
        raise EvaluationError(f"--run-dir {run_dir}: there is no {Path(run_dir) / 'eval.csv'}")

    with custom_deck(game, players, env_options, workers):
        pass  # a bad deck fails before any policy is loaded
    preloaded = preload(specs, game, deterministic)
    seats = lineups(specs, players, games, seed, lineup)
    tasks = [(0, list(enumerate(seats))[i : i + CHUNK]) for i in range(0, games, CHUNK)]
    start = time.perf_counter()
    with custom_deck(game, players, env_options, workers):
        records = play_tasks(tasks, game, players, seed, deterministic, preloaded, workers, progress,
                             f"{game} x{players}")[0]
    seconds = time.perf_counter() - start

    summary = {
        "game": game,
        "players": players,
        "games": games,
        "seed": seed,
        "workers": workers,
        "deterministic": deterministic,
        "specs": specs,
        "lineup": lineup,
        "truncated": sum(bool(rec["truncated"]) for rec in records),
        "mean_steps": sum(rec["steps"] for rec in records) / games,
        "seconds": seconds,
        "env_options": dict(env_options) if env_options else None,
        "policies": summarize(records, specs),
        "games_played": records,
    }
    if out is not None:
        write_outputs(summary, out, run_dir)
    return summary


# ---------------------------------------------------------------------------- the panel
def panel_opponents(game: str, baselines: Sequence[str] = ()) -> list[str]:
    """The panel's opponents: ``game``'s zoo bots, its heuristic, ``random``, then ``baselines`` (no repeats)."""
    facts = game_facts(game)
    return list(dict.fromkeys([*zoo(game), facts.default_bot, "random", *map(str, baselines)]))


def mix_seats(candidate: str, opponent: str, players: int, k: int,
              games: int) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    """Per game: the spec at each seat and the candidate's seats, for ``k`` candidates against ``players - k``
    copies of ``opponent``. Game ``g`` rotates the line-up by ``g``, so every ``players`` consecutive games
    seat the candidate ``k`` times at each seat position."""
    base = [candidate] * k + [opponent] * (players - k)
    out = []
    for g in range(games):
        order = [(i + g) % players for i in range(players)]
        out.append((tuple(base[j] for j in order), tuple(i for i, j in enumerate(order) if j < k)))
    return out


def panel_games(games: int, players: int) -> int:
    """Games per mix at a table of ``players``: ``games`` rounded up to a multiple of ``players`` (whole rotations)."""
    return -(-games // players) * players


def _table_figures(records: Sequence[dict[str, Any]], z: float = 1.96) -> dict[str, Any]:
    """Length, stalling and truncation of a set of games."""
    n = len(records)
    turns = np.array([rec["turns"] for rec in records], float)
    truncated = sum(bool(rec["truncated"]) for rec in records)
    std = float(turns.std(ddof=1)) if n > 1 else 0.0
    auctions = sum(rec.get("auctions", 0) for rec in records)
    unwon = sum(rec.get("unwon", 0) for rec in records)
    has_auctions = all("auctions" in rec for rec in records)
    low, high = wilson_interval(truncated, n)
    return {
        "games": n,
        "mean_turns": float(turns.mean()),
        "std_turns": std,
        "turns_ci": [float(turns.mean() - z * std / math.sqrt(n)), float(turns.mean() + z * std / math.sqrt(n))],
        "auctions": auctions if has_auctions else None,
        "unwon_auctions": unwon if has_auctions else None,
        "unwon_share": (unwon / auctions if auctions else 0.0) if has_auctions else None,
        "truncated": truncated,
        "truncation_rate": truncated / n,
        "truncation_ci": [low, high],
    }


def mix_result(records: Sequence[dict[str, Any]], seats: Sequence[tuple[int, ...]], players: int,
               k: int) -> dict[str, Any]:
    """The candidate's per-seat win rate in one mix, its ratio to parity, and 95% Wilson intervals.

    A game won by several seats counts ``1/winners`` to each. The interval is taken over games
    (the candidate's share of each game's win), then divided by ``k``: the ``k`` seats of one
    game are not independent trials (at most one of them wins), so counting ``games * k``
    trials would make the interval too narrow.
    """
    wins = 0.0
    for rec, mine in zip(records, seats, strict=True):
        winners = rec["winners"]
        wins += sum(1.0 / len(winners) for seat in winners if seat in mine)
    games = len(records)
    low, high = wilson_interval(wins, games)
    rate = wins / (games * k)
    return {
        "wins": wins,
        "seat_games": games * k,
        "win_rate": rate,
        "ci_low": low / k,
        "ci_high": high / k,
        "parity": 1 / players,
        "ratio": rate * players,
        "ratio_low": low / k * players,
        "ratio_high": high / k * players,
    }


def robustness(panel_result: dict[str, Any]) -> float:
    """The panel's robustness figure: the worst per-seat win rate ratio to parity over all its mixes."""
    return worst_mix(panel_result)["ratio"]


def worst_mix(panel_result: dict[str, Any]) -> dict[str, Any]:
    """The mix row with the lowest ratio to parity (the first such, in the panel's order)."""
    mixes = panel_result.get("mixes") or []
    if not mixes:
        raise EvaluationError("this panel result has no mixes")
    return min(mixes, key=lambda row: row["ratio"])


def _check_panel(candidate: str, opponents: Sequence[str], players: Sequence[int], games: int, workers: int,
                 game: str, ks: Sequence[int] | None) -> None:
    game_facts(game)
    low, high = player_range(game)
    if not players:
        raise EvaluationError("no table size given (players)")
    for n in players:
        if isinstance(n, bool) or not isinstance(n, int) or not low <= n <= high:
            raise EvaluationError(f"{game} is played by {low} to {high} players, got a table of {n!r}")
    _check_positive_int("games", games)
    _check_positive_int("workers", workers)
    if not candidate:
        raise EvaluationError("no candidate spec given")
    if not opponents:
        raise EvaluationError("the panel has no opponents")
    for k in ks or ():
        bad = [n for n in players if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n - 1]
        if bad:
            raise EvaluationError(
                f"k={k!r} is impossible at a {bad[0]}-player table: the candidate takes k = 1..{bad[0] - 1} seats "
                f"(k copies of the candidate against {bad[0]} - k copies of an opponent)")


def panel(candidate: str, opponents: Sequence[str], players: int | Sequence[int], games: int = PANEL_GAMES,
          workers: int = 1, seed: int = 0, *, game: str = "dragonstones", ks: Sequence[int] | None = None,
          deterministic: bool = False, progress: bool = False, out: str | Path | None = None,
          copies: Sequence[str] | None = None, env_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play ``candidate`` against each opponent in every mix, and the all-copies tables; summarize.

    For each table size ``n`` in ``players`` and each opponent, a mix seats ``k`` copies of the
    candidate against ``n - k`` copies of the opponent, for every ``k`` in ``ks`` (default
    ``1 .. n-1``), over ``games`` games rounded up to a multiple of ``n`` (the line-up rotates
    one seat per game, so every seat position is covered equally). Game ``g`` of every table
    uses the same deal (seed ``seed + g``), so tables differ by their policies, not their luck;
    results depend on ``seed`` only, never on ``workers``.

    Returns a dict: the settings; ``"mixes"`` (per mix: ``players, opponent, k, games`` and the
    candidate's ``wins, seat_games, win_rate, ci_low, ci_high, parity, ratio, ratio_low,
    ratio_high``, plus the game figures below); ``"tables"`` (the all-copies tables of the
    candidate and of each opponent: ``mean_turns, std_turns, turns_ci, unwon_share`` (None
    where the game has no auctions), ``truncation_rate, truncation_ci``); ``"robustness"`` (the
    worst mix: its ratio, table size, opponent and k). ``copies`` names the opponents whose
    all-copies table is played (default: every one; ``()`` for none: the robustness figure needs
    none of them, and a training callback saves the time). With ``out``, also writes the report
    files (see :func:`write_panel`). ``env_options``: the game's env options for every game (Fist's
    custom deck, ``{"characters": ..., "exclude": [...]}``), with ``workers=1`` (as :func:`evaluate`).
    Cheap enough to call from a training callback with a few dozen games; raises
    :class:`EvaluationError` or :class:`policies.PolicyError` before any game.
    """
    candidate = str(candidate)
    opponents = list(dict.fromkeys(str(o) for o in opponents))
    sizes = [players] if isinstance(players, int) and not isinstance(players, bool) else list(players)
    _check_panel(candidate, opponents, sizes, games, workers, game, ks)
    sizes = sorted(set(sizes))
    with custom_deck(game, sizes[0], env_options, workers):
        pass  # a bad deck fails before any policy is loaded
    preloaded = preload([candidate, *opponents], game, deterministic)

    # Every table: (n, opponent, k); k = n is the candidate's all-copies table, k = 0 an opponent's.
    tables: list[tuple[int, str | None, int]] = []
    for n in sizes:
        mix_ks = sorted(set(ks)) if ks else list(range(1, n))
        tables += [(n, opp, k) for opp in opponents for k in mix_ks]
        tables += [(n, None, n)] + [(n, opp, 0) for opp in opponents if copies is None or opp in copies]
    seatings = [mix_seats(candidate, opp or candidate, n, k, panel_games(games, n)) for n, opp, k in tables]
    tasks = [(t, [(g, s[0]) for g, s in enumerate(seating)][i : i + CHUNK])
             for t, seating in enumerate(seatings) for i in range(0, len(seating), CHUNK)]
    start = time.perf_counter()
    with custom_deck(game, sizes[0], env_options, workers):
        played = play_tasks(tasks, game, sizes[0], seed, deterministic, preloaded, workers, progress,
                            f"panel {Path(candidate).name}")
    seconds = time.perf_counter() - start

    mixes, copy_rows = [], []
    for t, (n, opp, k) in enumerate(tables):
        records = played[t]
        row: dict[str, Any] = {"players": n, "opponent": opp, "k": k}
        if 0 < k < n:
            row |= {"games": len(records), **mix_result(records, [s[1] for s in seatings[t]], n, k)}
            row |= {key: v for key, v in _table_figures(records).items() if key != "games"}
            mixes.append(row)
        else:
            row["policy"] = candidate if k == n else opp
            row["role"] = "candidate" if k == n else "opponent"
            row |= _table_figures(records)
            copy_rows.append(row)
    result = {
        "candidate": candidate,
        "game": game,
        "players": sizes,
        "games": games,
        "ks": None if ks is None else sorted(set(ks)),
        "seed": seed,
        "workers": workers,
        "deterministic": deterministic,
        "opponents": opponents,
        "stall_signal": game_facts(game).stall,
        "seconds": seconds,
        "mixes": mixes,
        "tables": copy_rows,
        "copies": None if copies is None else list(copies),
        "env_options": dict(env_options) if env_options else None,
    }
    worst = worst_mix(result)
    result["robustness"] = {key: worst[key] for key in ("ratio", "ratio_low", "ratio_high", "players", "opponent", "k")}
    if out is not None:
        write_panel(result, out)
    return result


# ---------------------------------------------------------------------------- reporting
def format_table(summary: dict[str, Any]) -> str:
    """The per-policy results as a Markdown table (with a one-line caption)."""
    lines = [
        f"{summary['game']}, {summary['players']} players, {summary['games']} games "
        f"(seats rotated, seed {summary['seed']}); {summary['truncated']} truncated (no win)",
        "",
        "| # | policy | games | wins | win rate | 95% CI | mean reward | mu | sigma | rating (mu-3σ) |",
        "|--:|:--|--:|--:|--:|:--:|--:|--:|--:|--:|",
    ]
    for k, row in enumerate(summary["policies"], 1):
        wins = f"{row['wins']:.0f}" if float(row["wins"]).is_integer() else f"{row['wins']:.2f}"
        lines.append(
            f"| {k} | {row['spec']} | {row['games']} | {wins} | {row['win_rate']:.3f} "
            f"| [{row['ci_low']:.3f}, {row['ci_high']:.3f}] | {row['mean_reward']:+.3f} "
            f"| {row['mu']:.2f} | {row['sigma']:.2f} | {row['rating']:.2f} |"
        )
    return "\n".join(lines)


def write_outputs(summary: dict[str, Any], out: str | Path, run_dir: str | Path | None = None) -> list[Path]:
    """Write ``results.md``, ``games.csv``, ``games.json``, ``summary.json`` and ``ratings.png`` to ``out``
    (and ``training_curve.png`` from ``<run_dir>/eval.csv``); returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records = summary["games_played"]
    paths = [out / name for name in ("results.md", "games.csv", "games.json", "summary.json", "ratings.png")]
    paths[0].write_text(format_table(summary) + "\n")
    with paths[1].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["game", "seed", "lineup", "rewards", "winners", "truncated", "steps"])
        for rec in records:
            w.writerow([rec["game"], rec["seed"], ";".join(rec["seats"]), ";".join(f"{r:g}" for r in rec["rewards"]),
                        ";".join(map(str, rec["winners"])), int(rec["truncated"]), rec["steps"]])
    # each entry regenerates its game in the web app by itself, so each carries the deck it was dealt from
    deck = {"env_options": summary["env_options"]} if summary.get("env_options") else {}
    games_json = [{"game": r["game"], "seed": r["seed"], "lineup": r["seats"], "rewards": r["rewards"],
                   "winners": r["winners"], "truncated": r["truncated"], "steps": r["steps"], **deck} for r in records]
    paths[2].write_text(json.dumps(games_json, indent=1) + "\n")
    paths[3].write_text(json.dumps({k: v for k, v in summary.items() if k != "games_played"}, indent=2) + "\n")
    plot_ratings(summary, paths[4])
    if run_dir is not None:
        paths.append(out / "training_curve.png")
        plot_training_curve(read_eval_csv(Path(run_dir) / "eval.csv"), paths[-1])
    return paths


def _pyplot():
    import matplotlib  # the train extra, slow to import: only for figures

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_ratings(summary: dict[str, Any], path: str | Path) -> None:
    """Two panels: OpenSkill mu ± 2σ (and mu − 3σ) per policy; win rate with its 95% interval."""
    plt = _pyplot()
    rows = summary["policies"][::-1]  # best at the top
    y = np.arange(len(rows))
    names = [row["spec"] if len(row["spec"]) <= 32 else "…" + row["spec"][-31:] for row in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 1.8 + 0.45 * len(rows)), sharey=True)
    mu = np.array([row["mu"] for row in rows])
    sigma = np.array([row["sigma"] for row in rows])
    ax1.errorbar(mu, y, xerr=2 * sigma, fmt="o", capsize=4, label="mu ± 2σ")
    ax1.plot(mu - 3 * sigma, y, "k|", markersize=12, label="mu − 3σ (sorted by)")
    ax1.set_yticks(y, names)
    ax1.set_xlabel("OpenSkill Plackett–Luce rating")
    ax1.legend(loc="lower right", fontsize=8)
    rate = np.array([row["win_rate"] for row in rows])
    err = np.array([[r - row["ci_low"] for r, row in zip(rate, rows, strict=True)],
                    [row["ci_high"] - r for r, row in zip(rate, rows, strict=True)]])
    ax2.barh(y, rate, xerr=err, capsize=4, color="tab:green", alpha=0.7)
    ax2.axvline(1 / summary["players"], color="grey", linestyle="--", label=f"1/{summary['players']} (chance)")
    ax2.set_xlim(0, 1)
    ax2.set_xlabel("win rate (95% Wilson interval)")
    ax2.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{summary['game']}, {summary['players']} players, {summary['games']} games")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def read_eval_csv(path: str | Path) -> list[dict[str, float]]:
    """Rows ``timesteps, win_rate, ci_low, ci_high`` (header optional) of a training run's ``eval.csv``."""
    keys = ("timesteps", "win_rate", "ci_low", "ci_high")
    rows = []
    with Path(path).open(newline="") as f:
        for line in csv.reader(f):
            if not line or line[0].strip() in ("", "timesteps"):
                continue
            try:
                rows.append(dict(zip(keys, map(float, line[:4]), strict=True)))
            except ValueError:
                raise EvaluationError(f"{path}: cannot read the row {line!r} as {', '.join(keys)}") from None
    return rows


def plot_training_curve(rows: Sequence[dict[str, float]], path: str | Path, ylabel: str = "win rate vs heuristic",
                        title: str = "training curve", parity: float | None = None) -> None:
    """A run's win rate over timesteps, with its 95% band (and a parity line if given)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if rows:
        t = [r["timesteps"] for r in rows]
        ax.plot(t, [r["win_rate"] for r in rows], "o-", label="win rate")
        ax.fill_between(t, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows], alpha=0.25, label="95% CI")
    if parity is not None:
        ax.axhline(parity, color="grey", linestyle="--", label=f"parity {parity:.3f}")
    if rows or parity is not None:
        ax.legend(loc="lower right")
    ax.set_xlabel("timesteps")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------- panel reports
def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "n/a" if x is None else format(x, spec)


def format_panel(result: dict[str, Any]) -> str:
    """The panel as Markdown: the robustness figure, one mix table per table size, the all-copies tables."""
    worst = result["robustness"]
    lines = [
        f"# Panel: {result['candidate']} ({result['game']})",
        "",
        f"Opponents: {', '.join(result['opponents'])}; tables of {', '.join(map(str, result['players']))}; "
        f"{result['games']} games per mix (rounded up to whole seat rotations), seed {result['seed']}, "
        f"{result['seconds']:.1f} s."
        + (f" Env options: {json.dumps(result['env_options'])}." if result.get("env_options") else ""),
        *([f"At {result['games']} games a mix the intervals are wide: claims need at least 1000."]
          if result["games"] < 1000 else []),
        "",
        f"**Robustness: {worst['ratio']:.3f}** [{worst['ratio_low']:.3f}, {worst['ratio_high']:.3f}], the worst "
        f"per-seat win rate ratio to parity, at {worst['k']} {result['candidate']} vs "
        f"{worst['players'] - worst['k']} {worst['opponent']} ({worst['players']} players).",
        "",
        "Per-seat win rate: the candidate's wins / (games × k), a shared win counting 1/winners; parity is 1/n. "
        "Intervals: 95% Wilson over games.",
    ]
    for n in result["players"]:
        lines += [
            "",
            f"## {n} players (parity {1 / n:.3f})",
            "",
            "| opponent | k | games | per-seat win rate | 95% CI | ratio to parity | 95% CI | mean turns | truncated |",
            "|:--|--:|--:|--:|:--:|--:|:--:|--:|--:|",
        ]
        for row in (r for r in result["mixes"] if r["players"] == n):
            lines.append(
                f"| {row['opponent']} | {row['k']} | {row['games']} | {row['win_rate']:.3f} "
                f"| [{row['ci_low']:.3f}, {row['ci_high']:.3f}] | {row['ratio']:.2f} "
                f"| [{row['ratio_low']:.2f}, {row['ratio_high']:.2f}] | {row['mean_turns']:.1f} "
                f"| {row['truncation_rate']:.3f} |")
        lines += [
            "",
            f"All-copies tables ({n} copies of one policy):",
            "",
            "| policy | games | mean turns ± std | 95% CI of mean | unwon auctions | truncation rate | 95% CI |",
            "|:--|--:|--:|:--:|--:|--:|:--:|",
        ]
        for row in (r for r in result["tables"] if r["players"] == n):
            name = f"{row['policy']} (candidate)" if row["role"] == "candidate" else row["policy"]
            lines.append(
                f"| {name} | {row['games']} | {row['mean_turns']:.1f} ± {row['std_turns']:.1f} "
                f"| [{row['turns_ci'][0]:.1f}, {row['turns_ci'][1]:.1f}] | {_fmt(row['unwon_share'])} "
                f"| {row['truncation_rate']:.3f} | [{row['truncation_ci'][0]:.3f}, {row['truncation_ci'][1]:.3f}] |")
    lines += ["", f"Unwon auctions: {result['stall_signal']}."]
    return "\n".join(lines)


PANEL_CSV = ("kind", "players", "opponent", "policy", "k", "games", "wins", "win_rate", "ci_low", "ci_high",
             "parity", "ratio", "ratio_low", "ratio_high", "mean_turns", "std_turns", "unwon_share",
             "truncated", "truncation_rate")


def write_panel(result: dict[str, Any], out: str | Path) -> list[Path]:
    """Write ``panel.md``, ``panel.csv`` (one row per mix, then per all-copies table), ``panel.json`` and
    ``panel_<n>p.png`` per table size to ``out``; returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "panel.md", out / "panel.csv", out / "panel.json"]
    paths[0].write_text(format_panel(result) + "\n")
    with paths[1].open("w", newline="") as f:
        w = csv.DictWriter(f, PANEL_CSV, extrasaction="ignore")
        w.writeheader()
        for row in result["mixes"]:
            w.writerow({"kind": "mix", "policy": result["candidate"], **row})
        for row in result["tables"]:
            w.writerow({"kind": "all-copies", **row, "opponent": ""})
    paths[2].write_text(json.dumps(result, indent=2) + "\n")
    for n in result["players"]:
        paths.append(out / f"panel_{n}p.png")
        plot_panel(result, n, paths[-1])
    return paths


def plot_panel(result: dict[str, Any], players: int, path: str | Path) -> None:
    """Heat map of one table size: rows opponents, columns k, colour and text the ratio to parity."""
    from matplotlib.colors import TwoSlopeNorm  # the train extra: only for figures

    plt = _pyplot()
    rows = [r for r in result["mixes"] if r["players"] == players]
    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    ks = sorted({r["k"] for r in rows})
    grid = np.full((len(opponents), len(ks)), np.nan)
    for r in rows:
        grid[opponents.index(r["opponent"]), ks.index(r["k"])] = r["ratio"]
    fig, ax = plt.subplots(figsize=(2.2 + 1.5 * len(ks), 1.4 + 0.7 * len(opponents)))
    # Diverging around parity (ratio 1): red below, blue above.
    norm = TwoSlopeNorm(vmin=0.0, vcenter=1.0, vmax=max(2.0, float(np.nanmax(grid))))
    image = ax.imshow(grid, cmap="RdBu", norm=norm, aspect="auto")
    for r in rows:
        i, j = opponents.index(r["opponent"]), ks.index(r["k"])
        shade = float(norm(r["ratio"]))
        ax.text(j, i, f"{r['ratio']:.2f}\n[{r['ratio_low']:.2f}, {r['ratio_high']:.2f}]", ha="center",
                va="center", fontsize=8, color="white" if shade < 0.2 or shade > 0.8 else "black")
    ax.set_xticks(range(len(ks)), [f"k={k}" for k in ks])
    ax.set_yticks(range(len(opponents)), [o if len(o) <= 24 else "…" + o[-23:] for o in opponents])
    ax.set_xlabel(f"copies of the candidate (against {players} - k of the opponent)")
    fig.colorbar(image, ax=ax, label="per-seat win rate / parity")
    deck = result.get("env_options") or {}
    deck = f", deck {Path(str(deck['characters'])).name}" if deck.get("characters") else ""
    ax.set_title(f"{Path(result['candidate']).name}, {players} players, {rows[0]['games'] if rows else 0} games a mix"
                 f"{deck}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m training.evaluate",
        description="Play policies against each other (seats rotated) and report win rates with 95% intervals "
                    "and OpenSkill ratings; or, with --panel, play one candidate against every opponent in "
                    "every mix and report its robustness.",
    )
    p.add_argument("--policies", nargs="+", default=[], metavar="SPEC",
                   help="policy specs: random, heuristic, ds-heuristic, a shipped name or a checkpoint folder; "
                        "repeat a spec to seat it several times")
    p.add_argument("--panel", default=None, metavar="CANDIDATE",
                   help="the panel: CANDIDATE (any policy spec) against the game's zoo bots, its heuristic, "
                        "random and any --baseline, k copies against n-k for every k and table size")
    p.add_argument("--baseline", nargs="+", action="extend", default=[], metavar="SPEC",
                   help="with --panel: more opponents (checkpoints, shipped names)")
    p.add_argument("--k", nargs="+", type=int, default=None, metavar="K",
                   help="with --panel: only these candidate counts (default: every k = 1..n-1)")
    p.add_argument("--copies", nargs="*", default=None, metavar="SPEC",
                   help="with --panel: the opponents whose all-copies table is played (default: every one; "
                        "give the flag alone for none)")
    p.add_argument("--players", nargs="+", type=int, default=[4],
                   help="seats at the table (default: 4); --panel takes several sizes, e.g. 3 4 6")
    p.add_argument("--games", type=int, default=None,
                   help=f"games to play (default: 1000); with --panel, games per mix (default: {PANEL_GAMES}; "
                        "claims need at least 1000)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    p.add_argument("--seed", type=int, default=0, help="base seed; game g uses seed+g (default: 0)")
    p.add_argument("--lineup", default=None, metavar="SPEC,SPEC,...",
                   help="one spec per seat, comma-separated, rotated across seats from game to game "
                        "(e.g. champion,heuristic,heuristic,heuristic)")
    p.add_argument("--game", choices=games.ids(), default="dragonstones", help="which game (default: dragonstones)")
    p.add_argument("--out", default=None,
                   help="folder for results.md, games.csv, games.json, summary.json and ratings.png "
                        "(default: runs/eval-<policies>); with --panel for panel.md, panel.csv, panel.json "
                        "and panel_<n>p.png (default: runs/panel-<candidate>)")
    p.add_argument("--characters", default=None, metavar="FILE",
                   help="Fist: custom characters (YAML/TOML) added to the special pile (docs/custom-characters.md)")
    p.add_argument("--exclude", nargs="+", default=[], metavar="NAME",
                   help="Fist: standard specials taken out of the special pile, e.g. Troll")
    p.add_argument("--run-dir", default=None,
                   help="a training run folder: plot its eval.csv into training_curve.png")
    p.add_argument("--deterministic", action="store_true",
                   help="checkpoints take their most likely action instead of sampling")
    p.add_argument("--no-progress", "--quiet", action="store_true",
                   help="no progress bar (there is none either when stderr is not a terminal)")
    return p


def default_out(specs: Sequence[str]) -> Path:
    name = "-".join(Path(s).name for s in dict.fromkeys(specs)) or "policies"
    return Path("runs") / f"eval-{name[:80]}"


def deck_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The env options of --characters and --exclude (Fist's custom deck), or None."""
    options = {"characters": args.characters} if args.characters else {}
    if args.exclude:
        options["exclude"] = list(args.exclude)
    return options or None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    progress = not args.no_progress and sys.stderr.isatty()
    if args.panel is not None:
        return panel_main(parser, args, progress)
    if args.baseline or args.k:
        parser.error("--baseline and --k go with --panel")
    lineup = None if args.lineup is None else [s.strip() for s in args.lineup.split(",") if s.strip()]
    if not args.policies and not lineup:
        parser.error("give --policies (and/or --lineup), or --panel CANDIDATE")
    if len(args.players) != 1:
        parser.error(f"--players takes one table size here (several go with --panel), got {args.players}")
    games = 1000 if args.games is None else args.games
    out = Path(args.out) if args.out else default_out(args.policies or lineup)
    try:
        summary = evaluate(args.policies, args.players[0], games, workers=args.workers, seed=args.seed,
                           lineup=lineup, game=args.game, deterministic=args.deterministic, out=out,
                           run_dir=args.run_dir, progress=progress, env_options=deck_options(args))
    except (EvaluationError, PolicyError, ValueError) as err:
        parser.error(str(err))
    print(format_table(summary))
    print(f"\n{summary['games']} games in {summary['seconds']:.1f} s with {args.workers} worker(s); "
          f"results in {out}/")
    return 0


def panel_main(parser: argparse.ArgumentParser, args: argparse.Namespace, progress: bool) -> int:
    if args.policies or args.lineup or args.run_dir:
        parser.error("--panel plays its own line-ups: drop --policies, --lineup and --run-dir")
    out = Path(args.out) if args.out else Path("runs") / f"panel-{Path(args.panel).name}"
    try:
        opponents = panel_opponents(args.game, args.baseline)
        result = panel(args.panel, opponents, args.players, PANEL_GAMES if args.games is None else args.games,
                       args.workers, args.seed, game=args.game, ks=args.k, deterministic=args.deterministic,
                       progress=progress, out=out, copies=args.copies, env_options=deck_options(args))
    except (EvaluationError, PolicyError, ValueError) as err:
        parser.error(str(err))
    print(format_panel(result))
    print(f"\n{sum(r['games'] for r in result['mixes'] + result['tables'])} games in {result['seconds']:.1f} s "
          f"with {args.workers} worker(s); results in {out}/")
    return 0


if __name__ == "__main__":
    # Run through the package module so worker processes unpickle training.evaluate, not __main__.
    from training.evaluate import main as _main

    sys.exit(_main())
