"""The contract every game keeps, run over every registered game (``games.all()``).

A game registered through :class:`~dragonstones_env.games.GameSpec` gets these tests for free:
the PettingZoo API and seed tests at every table size, shared spaces, masks that allow legal
options only and only to the agent to act, determinism (same seed, same game; deep copies go on
identically), illegal actions refused or penalised, zero-sum ends, JSON state, and its Gymnasium
id passing Gymnasium's and SB3's checkers. What only one game has (sealed bids, torch memory,
its rules) stays in that game's own tests.
"""

import pytest

from dragonstones_env import games
from tests.contract import example_deck, toy_auction

# The registered games, and a third that exists only here (tests/contract/toy_auction.py): it is
# registered for the duration of each test that takes it, so the rest of the suite never sees it.
TOY = toy_auction.SPEC
# Fist with the example custom characters (issue #16), registered the same way.
EXAMPLE = example_deck.SPEC
EXTRA = (TOY, EXAMPLE)


def pytest_generate_tests(metafunc):
    if "spec" in metafunc.fixturenames:
        specs = [*games.all(), *EXTRA]
        if "n" in metafunc.fixturenames:  # every table size of every game
            pairs = [(s, n) for s in specs for n in s.players]
            metafunc.parametrize(("spec", "n"), pairs, ids=[f"{s.id}-{n}p" for s, n in pairs])
        else:
            metafunc.parametrize("spec", specs, ids=[s.id for s in specs])


@pytest.fixture(autouse=True)
def _register_the_toy(request):
    spec = request.node.callspec.params.get("spec") if hasattr(request.node, "callspec") else None
    if spec in EXTRA:
        games.register(spec)
        yield
        games.unregister(spec.id)
    else:
        yield


@pytest.fixture
def sizes(spec):
    return list(spec.players)
