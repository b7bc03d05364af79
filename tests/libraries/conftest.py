"""Third-party learners on the envs through the libraries' OWN adapters, no wrapper of ours (issue #47):
Tianshou's ``PettingZooEnv`` with its multi-agent algorithm, TorchRL's ``PettingZooWrapper``, and the
examples that use them (examples/tianshou_selfplay.py, examples/torchrl_rollout.py).

They need libraries the package does not depend on: `make test-libraries` installs them in their own
virtual environment (.venv-libraries) and runs this folder; the main `make test` leaves it out
(``--ignore=tests/libraries`` in pyproject.toml's pytest addopts). A test file whose library is
missing is not collected, unless LIBRARIES_REQUIRED=1 (as `make test-libraries` sets), which makes
a missing library an error.
"""

from __future__ import annotations

import importlib.util
import os

# test file -> the libraries it needs
NEEDS = {
    "test_tianshou.py": ("tianshou",),
    "test_torchrl.py": ("torchrl", "tensordict"),
    "test_examples.py": ("tianshou", "torchrl", "tensordict"),
}

missing = {name: [lib for lib in libs if importlib.util.find_spec(lib) is None] for name, libs in NEEDS.items()}
if os.environ.get("LIBRARIES_REQUIRED") and any(missing.values()):
    raise ImportError(f"LIBRARIES_REQUIRED=1 but {sorted({lib for libs in missing.values() for lib in libs})} "
                      "cannot be imported: `make test-libraries` installs them (.venv-libraries)")
collect_ignore = [name for name, libs in missing.items() if libs]
