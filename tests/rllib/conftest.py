"""The RLlib tests need the optional ``rllib`` extra (``pip install .[rllib]``): `make test-rllib`
runs them in their own virtual environment (.venv-rllib). The main `make test` leaves this
folder out (``--ignore=tests/rllib`` in pyproject.toml's pytest addopts). Without Ray they are
skipped, unless RLLIB_REQUIRED=1 (as `make test-rllib` sets), which makes a missing Ray an error.
"""

from __future__ import annotations

import os

import pytest

try:
    import ray.rllib  # noqa: F401
except ImportError:
    if os.environ.get("RLLIB_REQUIRED"):
        raise
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray instance (2 CPUs: two env runners of 1 CPU each) for the whole session."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()
