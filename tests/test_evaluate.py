"""``dragonstones_env.evaluation``: line-ups, statistics, determinism across workers, report files, errors."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

pytest.importorskip("openskill")
pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")

from dragonstones_env.evaluation import (
    EvaluationError,
    evaluate,
    format_table,
    lineups,
    main,
    panel,
    summarize,
    tournament,
)
from dragonstones_env.evaluation.facts import CHUNK
from dragonstones_env.evaluation.journal import JOURNAL
from dragonstones_env.evaluation.tournament import _worker_init, play_tasks
from dragonstones_env.play.vector import worker_context
from dragonstones_env.policies import PolicyError
from dragonstones_env.registry import TableSizeError

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module", params=[3, 4])
def runs(request):
    """The same small evaluation with 1 and with 2 workers."""
    n = request.param
    specs = ["random"] * n
    one = evaluate(specs, players=n, games=12, workers=1, seed=5, progress=False)
    two = evaluate(specs, players=n, games=12, workers=2, seed=5, progress=False)
    return n, one, two


def test_worker_count_does_not_change_results(runs):
    _, one, two = runs
    assert one["games_played"] == two["games_played"]
    assert one["policies"] == two["policies"]
    assert [g["seed"] for g in one["games_played"]] == list(range(5, 17))


def test_statistics_are_consistent(runs):
    n, one, _ = runs
    (row,) = one["policies"]  # one distinct spec
    assert row["spec"] == "random"
    assert row["games"] == 12 * n
    assert 0.0 <= row["win_rate"] <= 1.0
    assert row["ci_low"] <= row["win_rate"] <= row["ci_high"]
    assert row["wins"] == pytest.approx(12 - one["truncated"])  # every finished game has 1 win shared out
    assert row["rating"] == pytest.approx(row["mu"] - 3 * row["sigma"])
    assert all(len(g["seats"]) == len(g["rewards"]) == n for g in one["games_played"])


def test_summarize_splits_shared_wins_and_sorts_by_rating():
    def rec(seats, winners, truncated=False):
        rewards = [1.0 if i in winners else -0.5 for i in range(len(seats))]
        return {"seats": seats, "winners": winners, "rewards": rewards, "truncated": truncated, "steps": 1}

    records = [rec(("a", "b", "c"), [0]), rec(("b", "c", "a"), [2]), rec(("c", "a", "b"), [0, 1]),
               rec(("a", "b", "c"), [], truncated=True), rec(("b", "c", "a"), [1])]
    rows = summarize(records, ["c", "b", "a"])
    by = {row["spec"]: row for row in rows}
    assert by["a"]["wins"] == pytest.approx(2.5)
    assert by["b"]["wins"] == pytest.approx(0.0)
    assert by["c"]["wins"] == pytest.approx(1.5)
    assert all(row["games"] == 5 and row["truncated"] == 1 for row in rows)
    assert [row["spec"] for row in rows] == ["a", "c", "b"]
    ratings = [row["rating"] for row in rows]
    assert ratings == sorted(ratings, reverse=True)
    for row in rows:
        assert 0.0 <= row["win_rate"] <= 1.0
        assert row["ci_low"] <= row["win_rate"] <= row["ci_high"]


def test_lineup_rotation_covers_every_seat():
    seats = lineups(["champ", "h"], 4, 8, lineup=["champ", "h", "h", "h"])
    assert Counter(s.index("champ") for s in seats) == {0: 2, 1: 2, 2: 2, 3: 2}
    assert all(Counter(s) == {"champ": 1, "h": 3} for s in seats)
    # as many specs as seats: game g seats spec (i + g) mod n at seat i
    seats = lineups(["a", "b", "c"], 3, 3)
    assert seats == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    assert {s.index(x) for s in seats for x in "abc"} == {0, 1, 2}


def test_more_specs_than_seats_play_equally_often():
    seats = lineups(list("abcde"), 3, 30, seed=1)
    assert len(seats) == 30 and all(len(set(s)) == 3 for s in seats)
    counts = Counter(x for s in seats for x in s)
    assert set(counts) == set("abcde") and max(counts.values()) - min(counts.values()) <= 3
    assert seats == lineups(list("abcde"), 3, 30, seed=1)  # seeded
    for x in "abcde":  # every spec sits in every seat
        assert {s.index(x) for s in seats if x in s} == {0, 1, 2}


def test_files_are_written(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.csv").write_text("timesteps,win_rate,ci_low,ci_high\n1000,0.1,0.05,0.2\n2000,0.3,0.2,0.4\n")
    out = tmp_path / "eval"
    summary = evaluate(["random", "random", "random"], players=3, games=4, seed=2, out=out, run_dir=run,
                       progress=False)
    for name in ("results.md", "games.csv", "games.json", "summary.json", "ratings.png", "training_curve.png"):
        assert (out / name).is_file(), name
    for name in ("ratings.png", "training_curve.png"):
        assert (out / name).read_bytes()[:8] == PNG
    games = json.loads((out / "games.json").read_text())
    assert len(games) == 4 and set(games[0]) >= {"seed", "lineup", "rewards", "winners", "truncated", "steps",
                                                   "turns", "auctions", "unwon"}  # the game's figures too
    assert len((out / "games.csv").read_text().splitlines()) == 5
    assert json.loads((out / "summary.json").read_text())["policies"] == summary["policies"]
    table = (out / "results.md").read_text()
    assert table.strip() == format_table(summary) and "| random |" in table


def test_cli(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["--policies", "random", "--players", "3", "--games", "3", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "| random |" in printed and (out / "ratings.png").read_bytes()[:8] == PNG


def test_unknown_spec_is_named_before_any_game(tmp_path):
    with pytest.raises(PolicyError, match="no-such-bot"):
        evaluate(["random", "no-such-bot", "random"], players=3, games=2, out=tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()
    with pytest.raises(SystemExit):
        main(["--policies", "random", "no-such-bot", "--players", "3", "--games", "1", "--no-progress"])


def test_bad_requests():
    with pytest.raises(TableSizeError, match="players must be an integer from 3 to 6"):
        evaluate(["random"], players=2, games=1, progress=False)
    with pytest.raises(EvaluationError, match="seats"):
        evaluate(["random"], players=3, games=1, lineup=["random"] * 4, progress=False)
    with pytest.raises(EvaluationError, match="only: heuristic"):
        evaluate(["random"], players=3, games=1, lineup=["random", "random", "heuristic"], progress=False)


def test_wilson_interval_holds_the_rate_at_the_extremes():
    """0 wins and all wins: rounding must not put a bound on the wrong side (matplotlib refuses it)."""
    from dragonstones_env.play.arena import wilson_interval

    for games in (1, 7, 300, 900, 2000):
        for wins in (0, games):
            low, high = wilson_interval(wins, games)
            assert 0.0 <= low <= wins / games <= high <= 1.0


# ---------------------------------------------------------------------------- one BLAS thread
class _BlasProbe:
    """A random mover that notes how many threads numpy's BLAS has while it plays."""

    def __init__(self) -> None:
        self.threads: set[int] = set()
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        self.threads.update(_blas_threads())
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))


def _blas_threads(info: list[dict] | None = None) -> set[int]:
    return {d["num_threads"] for d in (threadpool_info() if info is None else info) if d["user_api"] == "blas"}


def test_games_play_with_one_blas_thread_and_the_callers_limit_comes_back():
    """A policy's forward pass is one observation: OpenBLAS's threads only spin on cores other
    processes need (play_tasks' docstring), so every process that plays uses one."""
    before = _blas_threads()
    probe = _BlasProbe()
    with threadpool_limits(2, user_api="blas"):  # a caller with more than one (if the library allows)
        caller = _blas_threads()
        out = play_tasks([(0, [(0, ["probe", "random", "random"]), (1, ["random", "probe", "random"])])],
                         "dragonstones", 3, 0, False, {"probe": probe}, workers=1, progress=False, desc="")
        assert _blas_threads() == caller
    assert len(out[0]) == 2 and probe.threads == {1}
    assert _blas_threads() == before
    with worker_context().Pool(1, _worker_init, ("dragonstones", 3, 0, False)) as pool:
        assert _blas_threads(pool.apply(threadpool_info)) == {1}


# ---------------------------------------------------------------------------- the journal (--resume)
def _stop_after(monkeypatch, chunks: int) -> None:
    """Make the in-process player stop (as Ctrl-C would) when it starts chunk number ``chunks + 1``."""
    real = tournament._Player.play_chunk
    played = []

    def play_chunk(self, chunk):
        if len(played) == chunks:
            raise KeyboardInterrupt
        played.append(chunk)
        return real(self, chunk)

    monkeypatch.setattr(tournament._Player, "play_chunk", play_chunk)


def test_an_interrupted_evaluation_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch):
    kwargs = dict(players=3, games=30, seed=3, lineup=["heuristic", "random", "random"])
    whole = evaluate(["heuristic", "random"], workers=1, out=tmp_path / "whole", progress=False, **kwargs)
    assert not (tmp_path / "whole" / JOURNAL).exists() and whole["resumed"] == 0
    cut = tmp_path / "cut"
    with monkeypatch.context() as m:
        _stop_after(m, 2)
        with pytest.raises(KeyboardInterrupt):
            evaluate(["heuristic", "random"], workers=1, out=cut, progress=False, **kwargs)
    lines = (cut / JOURNAL).read_text().splitlines()
    assert len(lines) == 1 + 2 * CHUNK and not (cut / "summary.json").exists()
    with pytest.raises(EvaluationError, match="unfinished evaluation's journal"):
        evaluate(["heuristic", "random"], workers=1, out=cut, progress=False, **kwargs)
    assert (cut / JOURNAL).read_text().splitlines() == lines  # the refusal changed nothing
    with (cut / JOURNAL).open("a") as f:
        f.write('{"table": 0, "record": {"game": 16, "se')  # a line cut short by the stop
    resumed = evaluate(["heuristic", "random"], workers=2, out=cut, progress=False, resume=True, **kwargs)
    assert resumed["resumed"] == 2 * CHUNK
    assert resumed["games_played"] == whole["games_played"] and resumed["policies"] == whole["policies"]
    assert not (cut / JOURNAL).exists()
    assert json.loads((cut / "games.json").read_text()) == json.loads((tmp_path / "whole" / "games.json").read_text())


def _journal_with_games(tmp_path, monkeypatch, **kwargs):
    out = tmp_path / "cut"
    with monkeypatch.context() as m:
        _stop_after(m, 1)
        with pytest.raises(KeyboardInterrupt):
            evaluate(["heuristic", "random"], workers=1, out=out, progress=False, **kwargs)
    return out


@pytest.mark.parametrize("edit, message", [
    (lambda rec: rec.update(seats=["random", "random", "heuristic"]), "seats"),
    (lambda rec: rec.update(rewards=[1.0, "x", 0.0]), "rewards"),
    (lambda rec: rec.update(winners=[0, 0]), "winners"),
    (lambda rec: rec.update(game=999), "not a game of this evaluation"),
    (lambda rec: rec.update(turns="many"), "figures"),
])
def test_a_journal_is_checked_before_it_is_trusted(tmp_path, monkeypatch, edit, message):
    kwargs = dict(players=3, games=16, seed=0, lineup=["heuristic", "random", "random"])
    out = _journal_with_games(tmp_path, monkeypatch, **kwargs)
    lines = (out / JOURNAL).read_text().splitlines()
    entry = json.loads(lines[3])
    edit(entry["record"])
    lines[3] = json.dumps(entry)
    (out / JOURNAL).write_text("\n".join(lines) + "\n")
    with pytest.raises(EvaluationError, match=f"line 4.*{message}"):
        evaluate(["heuristic", "random"], workers=1, out=out, progress=False, resume=True, **kwargs)
    assert (out / JOURNAL).read_text() == "\n".join(lines) + "\n"


def test_a_journal_of_another_evaluation_is_refused(tmp_path, monkeypatch):
    kwargs = dict(players=3, games=16, lineup=["heuristic", "random", "random"])
    out = _journal_with_games(tmp_path, monkeypatch, seed=0, **kwargs)
    with pytest.raises(EvaluationError, match=r"another evaluation \(it differs in seed\)"):
        evaluate(["heuristic", "random"], workers=1, out=out, progress=False, resume=True, seed=1, **kwargs)
    with pytest.raises(EvaluationError, match=r"another evaluation \(it differs in games, plan\)"):
        evaluate(["heuristic", "random"], workers=1, out=out, progress=False, resume=True, seed=0,
                 **(kwargs | {"games": 24}))
    (out / JOURNAL).write_text("not json\n")
    with pytest.raises(EvaluationError, match="line 1 is not the JSON header"):
        evaluate(["heuristic", "random"], workers=1, out=out, progress=False, resume=True, seed=0, **kwargs)


def test_a_journal_holding_every_game_resumes_to_its_report_with_two_workers(tmp_path, monkeypatch):
    """A stop after the last game and before the report: --resume plays nothing and writes the report
    (with workers > 1 it used to ask for a pool of no process)."""
    kwargs = dict(players=3, games=16, seed=0, lineup=["heuristic", "random", "random"])
    whole = evaluate(["heuristic", "random"], workers=1, out=tmp_path / "whole", progress=False, **kwargs)
    out = tmp_path / "cut"
    def stop_before_the_report(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(tournament, "write_outputs", stop_before_the_report)
        with pytest.raises(KeyboardInterrupt):
            evaluate(["heuristic", "random"], workers=1, out=out, progress=False, **kwargs)
    resumed = evaluate(["heuristic", "random"], workers=2, out=out, progress=False, resume=True, **kwargs)
    assert resumed["resumed"] == 16 and resumed["policies"] == whole["policies"]
    assert json.loads((out / "games.json").read_text()) == json.loads((tmp_path / "whole" / "games.json").read_text())


def test_resume_without_a_journal_plays_every_game(tmp_path):
    summary = evaluate(["random"], players=3, games=6, seed=0, out=tmp_path / "new", progress=False, resume=True)
    assert summary["resumed"] == 0 and len(summary["games_played"]) == 6


def test_an_interrupted_panel_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch):
    kwargs = dict(games=9, seed=2, copies=["random"])
    whole = panel("heuristic", ["random"], [3], out=tmp_path / "whole", **kwargs)
    cut = tmp_path / "cut"
    with monkeypatch.context() as m:
        _stop_after(m, 3)
        with pytest.raises(KeyboardInterrupt):
            panel("heuristic", ["random"], [3], out=cut, **kwargs)
    resumed = panel("heuristic", ["random"], [3], out=cut, resume=True, **kwargs)
    assert resumed["resumed"] == 2 * CHUNK + 1  # three chunks: 8 games of a table, its ninth, 8 of the next
    assert {k: v for k, v in resumed.items() if k not in ("seconds", "resumed")} == \
        {k: v for k, v in whole.items() if k not in ("seconds", "resumed")}
    assert not (cut / JOURNAL).exists()


def test_cli_resume(tmp_path, monkeypatch, capsys):
    out = _journal_with_games(tmp_path, monkeypatch, players=3, games=16, seed=0,
                              lineup=["heuristic", "random", "random"])
    argv = ["--policies", "heuristic", "random", "--lineup", "heuristic,random,random", "--players", "3",
            "--games", "16", "--out", str(out), "--no-progress"]
    with pytest.raises(SystemExit):
        main(argv)
    assert "--resume" in capsys.readouterr().err
    assert main([*argv, "--resume"]) == 0
    assert f"16 games ({CHUNK} of them from the journal)" in capsys.readouterr().out
