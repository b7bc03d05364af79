"""The panel: one candidate in every mix of k copies against n - k of each opponent, and its robustness."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dragonstones_env.games import get as get_game
from dragonstones_env.play.arena import wilson_interval
from dragonstones_env.policies import zoo

from .facts import CHUNK, PANEL_GAMES, EvaluationError, check_bounded, checked_options
from .journal import open_journal
from .report import write_panel
from .tournament import play_tasks, preload


# ---------------------------------------------------------------------------- the panel
def panel_opponents(game: str, baselines: Sequence[str] = ()) -> list[str]:
    """The panel's opponents: ``game``'s zoo bots, its heuristic, ``random``, then ``baselines`` (no repeats)."""
    return list(dict.fromkeys([*zoo(game), get_game(game).default_bot, "random", *map(str, baselines)]))


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


def table_figures(records: Sequence[dict[str, Any]], z: float = 1.96) -> dict[str, Any]:
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
    spec = get_game(game)  # an unknown game: the registry's error names the known ones
    if not players:
        raise EvaluationError("no table size given (players)")
    for n in players:
        spec.check_players(n, "players")
    check_bounded("games", games)
    check_bounded("workers", workers)
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
          copies: Sequence[str] | None = None, env_options: dict[str, Any] | None = None,
          resume: bool = False, factories: dict[str, str] | None = None) -> dict[str, Any]:
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
    files (see :func:`write_panel`), keeping a journal there while it plays: ``resume`` plays on
    from an interrupted run's, as :func:`evaluate` does. ``env_options``: the game's env options for every game (Fist's
    custom deck, ``{"characters": ..., "exclude": [...]}``), with any number of workers (as :func:`evaluate`).
    ``factories``: spec NAME -> ``"package.module:function"``, the user's code making NAME's policy (as
    :func:`evaluate`'s: it RUNS that code).
    Cheap enough to call from a training callback with a few dozen games; raises
    :class:`EvaluationError` or :class:`policies.PolicyError` before any game.
    """
    candidate = str(candidate)
    opponents = list(dict.fromkeys(str(o) for o in opponents))
    sizes = [players] if isinstance(players, int) and not isinstance(players, bool) else list(players)
    _check_panel(candidate, opponents, sizes, games, workers, game, ks)
    sizes = sorted(set(sizes))
    checked_options(game, sizes[0], env_options)  # a bad deck fails before any policy is loaded
    preloaded = preload([candidate, *opponents], game, deterministic, factories)

    # Every table: (n, opponent, k); k = n is the candidate's all-copies table, k = 0 an opponent's.
    tables: list[tuple[int, str | None, int]] = []
    for n in sizes:
        mix_ks = sorted(set(ks)) if ks else list(range(1, n))
        tables += [(n, opp, k) for opp in opponents for k in mix_ks]
        tables += [(n, None, n)] + [(n, opp, 0) for opp in opponents if copies is None or opp in copies]
    seatings = [mix_seats(candidate, opp or candidate, n, k, panel_games(games, n)) for n, opp, k in tables]
    tasks = [(t, [(g, s[0]) for g, s in enumerate(seating)][i : i + CHUNK])
             for t, seating in enumerate(seatings) for i in range(0, len(seating), CHUNK)]
    identity = {"evaluation": "panel", "game": game, "candidate": candidate, "opponents": opponents,
                "players": sizes, "games": games, "ks": None if ks is None else sorted(set(ks)), "seed": seed,
                "deterministic": deterministic, "copies": None if copies is None else list(copies),
                "env_options": env_options}
    if factories:  # a journal of other factories' games is another panel's
        identity["factories"] = dict(factories)
    journal = None if out is None else open_journal(out, identity, tasks, resume)
    resumed = 0 if journal is None else len(journal.done)
    start = time.perf_counter()
    played = play_tasks(tasks, game, sizes[0], seed, deterministic, preloaded, workers, progress,
                        f"panel {Path(candidate).name}", journal, env_options, factories)
    seconds = time.perf_counter() - start

    mixes, copy_rows = [], []
    for t, (n, opp, k) in enumerate(tables):
        records = played[t]
        row: dict[str, Any] = {"players": n, "opponent": opp, "k": k}
        if 0 < k < n:
            row |= {"games": len(records), **mix_result(records, [s[1] for s in seatings[t]], n, k)}
            row |= {key: v for key, v in table_figures(records).items() if key != "games"}
            mixes.append(row)
        else:
            row["policy"] = candidate if k == n else opp
            row["role"] = "candidate" if k == n else "opponent"
            row |= table_figures(records)
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
        "stall_signal": get_game(game).stall,
        "seconds": seconds,
        "resumed": resumed,
        "mixes": mixes,
        "tables": copy_rows,
        "copies": None if copies is None else list(copies),
        "env_options": dict(env_options) if env_options else None,
    }
    worst = worst_mix(result)
    result["robustness"] = {key: worst[key] for key in ("ratio", "ratio_low", "ratio_high", "players", "opponent", "k")}
    if out is not None:
        write_panel(result, out)
        journal.remove()
    return result
