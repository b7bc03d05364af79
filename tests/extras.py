"""The optional extras a test needs: with only the core install, tests that need the trainers are
skipped with this reason instead of failing (``pytest.importorskip(TRAIN_MODULE, reason=TRAIN)``)."""

TRAIN_MODULE = "sb3_contrib"  # with torch and stable-baselines3: what the train extra brings
TRAIN = "needs the train extra (torch, stable-baselines3, sb3-contrib): pip install -e '.[train]'"
EVAL_MODULE = "openskill"  # with matplotlib and tqdm: what the eval extra brings (ratings, figures)
EVAL = "needs the eval extra (openskill, matplotlib, tqdm): pip install -e '.[eval]'"
