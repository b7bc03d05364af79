"""Whole games between policies over worker processes: win rates with Wilson intervals and OpenSkill
ratings (:func:`evaluate`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from dragonstones_env.core import same_game
from dragonstones_env.games import game_id
from dragonstones_env.games import get as get_game
from dragonstones_env.play.arena import GameResult, play_game, wilson_interval
from dragonstones_env.play.vector import worker_context
from dragonstones_env.policies import load_policy

from .factories import check_factories, make_policy
from .facts import (
    CHUNK,
    EvaluationError,
    check_bounded,
    checked_options,
    env_factory,
    lineups,
)
from .journal import Journal, open_journal
from .report import write_outputs


# ---------------------------------------------------------------------------- playing (workers)
class _Player:
    """The policies of one process: per spec, one instance per copy seated in the same game.

    Each game seats them anew (the arena's :func:`~dragonstones_env.policies.seat`, each seat's seed by
    the one rule, :func:`~dragonstones_env.policies.seat_seed` of the game's seed), so a game's play
    does not depend on which worker played it or what it played before.
    """

    def __init__(self, game: str, players: int, seed: int, deterministic: bool,
                 env_options: dict[str, Any] | None = None, preloaded: dict[str, Any] | None = None,
                 factories: dict[str, str] | None = None):
        self.game = game
        self.factories = factories or {}  # NAME -> "module:function": resolved in this process (factories.py)
        # the env options (a custom deck's cards) checked and loaded once per process
        self.options, _ = checked_options(game, players, env_options)
        self.make_env = {players: env_factory(game, players, self.options)}  # per table size (a panel plays several)
        self.figures = get_game(game).figures
        self.seed = seed
        self.deterministic = deterministic
        self.cache: dict[str, list[Any]] = {spec: [p] for spec, p in (preloaded or {}).items()}

    def _load(self, spec: str) -> Any:
        policy = _load(spec, self.deterministic, self.factories)  # reseeded when seated
        if "torch" in sys.modules:  # several processes share few cores: one thread each
            sys.modules["torch"].set_num_threads(1)
        return policy

    def _policy(self, spec: str, copy: int) -> Any:
        instances = self.cache.setdefault(spec, [])
        while len(instances) <= copy:
            instances.append(self._load(spec))
        return instances[copy]

    def play(self, game_index: int, seats: Sequence[str]) -> dict[str, Any]:
        copies: dict[str, int] = {}
        policies = []
        for spec in seats:
            copy = copies[spec] = copies.get(spec, -1) + 1
            policies.append(self._policy(spec, copy))
        n = len(seats)
        if n not in self.make_env:
            self.make_env[n] = env_factory(self.game, n, self.options)
        result: GameResult = play_game(self.make_env[n], policies, list(seats), self.seed + game_index,
                                       inspect=self.figures)
        return {"game": game_index, **result.to_dict()}

    def play_chunk(self, chunk: Sequence[tuple[int, Sequence[str]]]) -> list[dict[str, Any]]:
        return [self.play(g, seats) for g, seats in chunk]


_WORKER: _Player | None = None


_WORKER_ERROR: BaseException | None = None


def _worker_init(game: str, players: int, seed: int, deterministic: bool,
                 env_options: dict[str, Any] | None = None, factories: dict[str, str] | None = None) -> None:
    global _WORKER, _WORKER_ERROR
    threadpool_limits(1, user_api="blas")  # see play_tasks
    try:
        _WORKER = _Player(game, players, seed, deterministic, env_options, factories=factories)
    except Exception as err:  # a pool whose initializer raises respawns workers for ever:
        _WORKER_ERROR = err  # the error is raised by the first task instead, in the caller


def _load(spec: str, deterministic: bool, factories: dict[str, str]) -> Any:
    """A spec's policy: a --policy-factory NAME's (the user's code, factories.py), else load_policy's."""
    if spec in factories:
        return make_policy(spec, factories[spec], seed=0)
    return load_policy(spec, seed=0, deterministic=deterministic)


def _worker_chunk(chunk: Sequence[tuple[int, Sequence[str]]]) -> list[dict[str, Any]]:
    if _WORKER is None:
        raise _WORKER_ERROR or RuntimeError("the evaluation's worker was not initialised")
    return _WORKER.play_chunk(chunk)


def _worker_table_chunk(task: tuple[int, Sequence[tuple[int, Sequence[str]]]]) -> tuple[int, list[dict[str, Any]]]:
    table, chunk = task
    return table, _worker_chunk(chunk)


def preload(specs: Sequence[str], game: str, deterministic: bool,
            factories: dict[str, str] | None = None) -> dict[str, Any]:
    """Each spec loaded once, so that a bad one (or a factory that fails) fails before any game (and one
    process reuses them)."""
    factories = check_factories(factories)
    preloaded = {spec: _load(spec, deterministic, factories) for spec in dict.fromkeys(specs)}
    for spec, policy in preloaded.items():
        if policy.game is not None and not same_game(policy.game, game):  # None: a policy of any game
            raise EvaluationError(f"policy {spec!r} plays {game_id(policy.game)}, not {game_id(game)}")
    return preloaded


class _NoBar:
    """What a progress bar does when none is shown."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        return None


def progress_bar(total: int, desc: str, shown: bool) -> Any:
    """A tqdm bar on stderr (the eval extra), or one that shows nothing: games play without tqdm."""
    if not shown:
        return _NoBar()
    from tqdm import tqdm  # the eval extra, only when a bar is shown

    return tqdm(total=total, desc=desc, unit="game", file=sys.stderr)


def play_tasks(tasks: Sequence[tuple[int, Sequence[tuple[int, Sequence[str]]]]], game: str, players: int, seed: int,
               deterministic: bool, preloaded: dict[str, Any], workers: int, progress: bool,
               desc: str, journal: Journal | None = None,
               env_options: dict[str, Any] | None = None,
               factories: dict[str, str] | None = None) -> dict[int, list[dict[str, Any]]]:
    """Play ``(table, [(game_index, seats), ...])`` tasks in this process or in ``workers`` processes.

    Returns each table's game records in game order: the order tasks finish in never shows. With
    a ``journal`` (:mod:`.journal`), the games it holds are not played again, and every chunk played
    is written to it as it finishes.

    ``env_options`` (Fist's custom deck) are checked and loaded once in each process that plays.
    Every process that plays uses one BLAS thread, as the vector env's workers do: a
    policy's forward pass is one observation, and numpy's OpenBLAS would otherwise start a thread
    per core in each process, threads that spin on the cores the other processes need (the
    DrachenSchatten champion's forward pass on a busy 2-core machine: 1.34 ms with OpenBLAS's
    threads, 0.15 ms with one; a search rolling out with it, 0.46 s a decision against 0.06).
    ``factories`` (NAME -> ``module:function`` text) are resolved in each worker from their text.
    """
    out: dict[int, list[dict[str, Any]]] = {table: [] for table, _ in tasks}
    if journal is not None:
        for (table, _), record in journal.done.items():
            out[table].append(record)
        tasks = journal.remaining(tasks)
    note = journal.write if journal is not None else lambda table, records: None
    total = sum(len(chunk) for _, chunk in tasks)
    with progress_bar(total, desc, progress) as bar:
        if workers == 1:
            player = _Player(game, players, seed, deterministic, env_options, preloaded, factories)
            with threadpool_limits(1, user_api="blas"):  # this process's own limit comes back after
                for table, chunk in tasks:
                    done = player.play_chunk(chunk)
                    note(table, done)
                    out[table].extend(done)
                    bar.update(len(chunk))
        elif tasks:  # a journal holding every game leaves none: the report is written from it
            with worker_context().Pool(min(workers, len(tasks)), _worker_init,
                                 (game, players, seed, deterministic, env_options, factories)) as pool:
                for table, done in pool.imap_unordered(_worker_table_chunk, tasks):
                    note(table, done)
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
             env_options: dict[str, Any] | None = None, resume: bool = False,
             factories: dict[str, str] | None = None) -> dict[str, Any]:
    """Play ``games`` games between ``specs`` at a table of ``players`` and summarize them.

    ``env_options``: options of the game's env for every game, such as Fist's custom deck
    (``{"characters": "examples/characters.yaml", "exclude": ["Troll"]}``), with any number of workers
    (each process loads the deck once; rule bots are told it when seated).

    ``specs`` are policy specs for :func:`policies.load_policy` (names or checkpoint paths);
    ``lineup`` optionally fixes the spec of each seat (rotated from game to game, see
    :func:`lineups`). ``factories`` maps a spec NAME to ``"package.module:function"``: that function of
    the user's code, imported and called (RUNNING IT; :mod:`.factories`), makes NAME's policy.
    Returns a dict with the settings, ``"policies"`` (one row per distinct spec, best rating first:
    ``spec, games, wins, win_rate, ci_low, ci_high, truncated, mean_reward, mu, sigma, rating``),
    ``"truncated"`` (games without a winner) and
    ``"games"`` (one record per game). With ``out``, also writes the report files there (see
    :func:`write_outputs`), keeping a journal there while it plays (:mod:`.journal`): ``resume``
    plays on from the journal an interrupted run of the same evaluation left, and without it a
    journal there is an error (``"resumed"``: the games read from it; ``"seconds"`` counts this
    run's). Raises :class:`EvaluationError` (or :class:`policies.PolicyError`
    for a spec that cannot be loaded, or the registry's ``UnknownGameError`` / ``TableSizeError`` for a
    game or table size it does not have; all ValueErrors) before any game is played.
    """
    specs = [str(s) for s in specs]
    lineup = None if lineup is None else [str(s) for s in lineup]
    get_game(game).check_players(players, "players")
    check_bounded("games", games)
    check_bounded("workers", workers)
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

    checked_options(game, players, env_options)  # a bad deck fails before any policy is loaded
    preloaded = preload(specs, game, deterministic, factories)
    seats = lineups(specs, players, games, seed, lineup)
    tasks = [(0, list(enumerate(seats))[i : i + CHUNK]) for i in range(0, games, CHUNK)]
    identity = {"evaluation": "tournament", "game": game, "players": players, "games": games, "seed": seed,
                "deterministic": deterministic, "specs": specs, "lineup": lineup, "env_options": env_options}
    if factories:  # a journal of other factories' games is another evaluation's
        identity["factories"] = dict(factories)
    journal = None if out is None else open_journal(out, identity, tasks, resume)
    resumed = 0 if journal is None else len(journal.done)
    start = time.perf_counter()
    records = play_tasks(tasks, game, players, seed, deterministic, preloaded, workers, progress,
                         f"{game} x{players}", journal, env_options, factories)[0]
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
        "resumed": resumed,
        "env_options": dict(env_options) if env_options else None,
        "policies": summarize(records, specs),
        "games_played": records,
    }
    if out is not None:
        write_outputs(summary, out, run_dir)
        journal.remove()
    return summary
