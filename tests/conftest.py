"""Fixtures shared by the test modules."""

import pytest

from tests.support import check_games


@pytest.fixture
def conserved():
    """F2: every game made during the test keeps the whole stock (modules opt in with usefixtures)."""
    yield from check_games()
