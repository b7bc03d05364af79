"""Evaluate policies against each other: win rates with 95% intervals and OpenSkill ratings.

    python -m dragonstones_env.evaluation --policies heuristic random policies/my-run random --players 4 \\
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
``training_curve.png`` from ``<run-dir>/eval.csv`` with ``--run-dir``), and while it plays a
journal of the games played, from which ``--resume`` plays on after a stop.

``--panel CANDIDATE`` plays one candidate against each opponent of the game's panel (its zoo
bots, its heuristic, ``random``, any ``--baseline``) in every mix of k candidates against n-k
opponents, and reports the per-seat win rate's ratio to parity per mix, the worst of them (the
robustness figure) and all-copies tables (game length, unwon auctions, truncation); see
:func:`panel` (``panel.md``, ``panel.csv``, ``panel.json``, ``panel_<n>p.png``).

The package: :mod:`.facts` (a game's spec, line-ups, seeds) < :mod:`.journal` (an unfinished
evaluation's games, for ``--resume``) < :mod:`.plots` < :mod:`.report` (files and tables) <
:mod:`.tournament` (:func:`evaluate`) < :mod:`.panel` < :mod:`.cli`.

From Python::

    from dragonstones_env.evaluation import evaluate, format_table, panel, robustness
    print(robustness(panel("champion", ["heuristic", "random"], players=[4], games=40)))
    summary = evaluate(["heuristic", "random"], players=4, games=200, lineup=["heuristic"] + ["random"] * 3)
    print(format_table(summary))
"""

from .cli import main
from .facts import PANEL_GAMES, EvaluationError, lineups, player_range
from .panel import mix_result, mix_seats, panel, panel_games, panel_opponents, robustness, table_figures, worst_mix
from .report import format_panel, format_table, read_eval_csv, write_outputs, write_panel
from .tournament import evaluate, summarize

__all__ = ["PANEL_GAMES", "EvaluationError", "evaluate", "format_panel", "format_table", "lineups", "main",
           "mix_result", "mix_seats", "panel", "panel_games", "panel_opponents", "player_range",
           "read_eval_csv", "robustness", "summarize", "table_figures", "worst_mix", "write_outputs", "write_panel"]
