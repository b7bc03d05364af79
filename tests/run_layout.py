"""What the trainers' runs are compared by (tests/test_run.py, tests/rllib/test_rllib.py): the run's
files of training/run.py's layout, eval.csv's header and the card's shared keys."""

from __future__ import annotations

import json
from typing import Any

from training import run as lifecycle


def layout(folders: lifecycle.Folders) -> dict[str, Any]:
    """The lifecycle's files a run wrote, its eval.csv header, its card's shared keys and curve's keys."""
    card = json.loads((folders.out / "card.json").read_text())
    return {"run": sorted(f for f in lifecycle.RUN_FILES if (folders.root / f).is_file()),
            "result": sorted(f for f in lifecycle.RESULT_FILES if (folders.out / f).is_file()),
            "eval.csv": folders.eval_csv.read_text().splitlines()[0],
            "card": sorted(k for k in card if k in lifecycle.CARD_KEYS),
            "curve": sorted({k for p in card["training_curve"] for k in p})}


EXPECTED = {"run": sorted(lifecycle.RUN_FILES), "result": sorted(lifecycle.RESULT_FILES),
            "eval.csv": lifecycle.EVAL_HEADER.strip(), "card": sorted(lifecycle.CARD_KEYS),
            "curve": ["ci95", "rate", "timesteps"]}
