"""Fixtures shared by the test modules."""

import os

import pytest

from dragonstones_env.policies.marks import KEY_ENV
from tests.support import check_games


@pytest.fixture
def conserved():
    """F2: every game made during the test keeps the whole stock (modules opt in with usefixtures)."""
    yield from check_games()


@pytest.fixture(autouse=True, scope="session")
def mark_key(tmp_path_factory):
    """The key of model.zip marks (dragonstones_env/policies/marks.py) in a temporary folder: the tests
    never make one in the user's ~/.config (subprocesses inherit it through the environment)."""
    path = tmp_path_factory.mktemp("mark-key") / "mark.key"
    old = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = str(path)
    yield path
    if old is None:
        os.environ.pop(KEY_ENV, None)
    else:
        os.environ[KEY_ENV] = old
