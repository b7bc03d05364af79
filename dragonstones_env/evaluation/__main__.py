"""``python -m dragonstones_env.evaluation``: see :mod:`dragonstones_env.evaluation.cli`."""

import sys

from dragonstones_env.evaluation.cli import main

sys.exit(main())
