"""The policy contract (dragonstones_env/policies/base.py): one base, named capabilities, one way to seat.

Every table seats its policies through ``seat``/``seat_all`` before each game, with each seat's seed from the
game's by one rule (``seat_seed``), and never probes a policy's attributes to find what it can do.
"""

import re
from pathlib import Path

import numpy as np
import pytest

from dragonstones_env import drachenschatten, env
from dragonstones_env.evaluation import evaluate
from dragonstones_env.play.arena import play_game
from dragonstones_env.play.single_agent import make as make_gym
from dragonstones_env.policies import (
    Capabilities,
    Policy,
    PolicyError,
    RandomPolicy,
    Table,
    as_policy,
    load_policy,
    seat,
    seat_all,
    seat_seed,
)

ROOT = Path(__file__).resolve().parents[1]


class FirstLegal(Policy):
    """A user's policy: act alone, and a record of every table it is seated at."""

    def __init__(self):
        self.tables: list[Table] = []

    def sit(self, table: Table) -> Policy:
        self.tables.append(table)
        return super().sit(table)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_capabilities_are_what_a_class_overrides():
    assert FirstLegal().capabilities == Capabilities()
    assert load_policy("random").capabilities == Capabilities(batch=True)
    assert load_policy("heuristic").capabilities == Capabilities(win_chance=True, batch_each=True)
    champion = load_policy("champion").capabilities
    assert champion.batch and champion.probabilities and champion.value and champion.judges
    assert load_policy("ismcts").capabilities == Capabilities(information_state=True)
    assert not load_policy("champion-mixture").capabilities.information_state


def test_the_defaults_refuse_what_a_policy_does_not_offer():
    p = FirstLegal()
    obs = {"observation": np.zeros(3, np.float32), "action_mask": np.array([0, 1, 1], np.int8)}
    assert p.act_batch(obs["observation"][None].repeat(2, 0), obs["action_mask"][None].repeat(2, 0)).tolist() == [1, 1]
    assert FirstLegal.act_each([p, FirstLegal()], obs["observation"][None].repeat(2, 0),
                               np.array([[0, 1, 1], [1, 0, 1]], np.int8)) == [1, 0]
    for ask in (lambda: p.probabilities(obs["observation"][None], obs["action_mask"][None]),
                lambda: p.value(obs), lambda: p.win_chance(obs)):
        with pytest.raises(PolicyError, match="FirstLegal"):
            ask()
    with pytest.raises(NotImplementedError, match="act"):
        Policy().act(obs)


def test_any_object_with_act_or_a_function_is_a_policy():
    class Duck:
        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[-1])

    def last(observation):
        return int(np.flatnonzero(observation["action_mask"])[-1])

    for obj in (Duck(), last):
        p = as_policy(obj)
        assert isinstance(p, Policy) and p.capabilities == Capabilities() and p.game is None
        assert load_policy(obj).act({"action_mask": np.array([1, 1, 0])}) == 1
    with pytest.raises(PolicyError, match="got int"):
        as_policy(3)


def test_seat_refuses_a_policy_of_another_game():
    with pytest.raises(PolicyError, match="plays drachenschatten"):
        seat(load_policy("ds-heuristic"), Table("dragonstones", 4))
    with pytest.raises(PolicyError, match="plays dragonstones"):
        play_game(lambda: drachenschatten.env(num_players=2), [load_policy("heuristic"), RandomPolicy(0)],
                  ["a", "b"], seed=0)


def test_the_arena_seats_every_seat_with_its_seed_by_the_one_rule():
    users = [FirstLegal() for _ in range(4)]
    play_game(lambda: env(num_players=4, max_turns=2), users, ["u"] * 4, seed=11)
    for i, u in enumerate(users):
        (t,) = u.tables
        assert (t.game, t.num_players, t.seat, t.seed, t.deck) == ("dragonstones", 4, i, seat_seed(11, i), None)
    assert seat_seed(11, 0) != seat_seed(11, 1) != seat_seed(12, 1) and seat_seed(None, 0) is None


def test_a_game_is_the_same_wherever_it_is_played():
    """The tournament's game g is the arena's game at seed + g: the same seeds reach the same seats,
    whatever the worker count or the games played before (it used to reseed differently)."""
    specs = ["heuristic", "value", "random"]
    summary = evaluate(specs, players=3, games=4, seed=40, progress=False)
    two = evaluate(specs, players=3, games=4, seed=40, workers=2, progress=False)
    assert summary["games_played"] == two["games_played"]
    for rec in summary["games_played"]:
        policies = [load_policy(s, seed=999) for s in rec["seats"]]  # any seed: seating reseeds them
        alone = play_game(lambda: env(num_players=3), policies, rec["seats"], rec["seed"])
        assert list(alone.winners) == rec["winners"] and alone.steps == rec["steps"]


def test_the_gym_env_seats_its_opponents_every_episode_from_its_seed():
    user = FirstLegal()
    g = make_gym("dragonstones", num_players=3, opponents=user, seat=0)
    g.reset(seed=5)
    first = list(user.tables)
    g.reset(seed=5)
    assert [t.seed for t in user.tables[len(first):]] == [t.seed for t in first]  # the same episode seed
    assert sorted(t.seat for t in first) == [1, 2] and all(t.game == "dragonstones" for t in first)


def test_a_mixture_draws_each_seats_member_from_the_table_seed():
    mixture = load_policy("champion-mixture")
    members = [type(seat(mixture, Table("dragonstones", 4, 1, seed=s))).__name__ for s in range(40)]
    again = [type(seat(mixture, Table("dragonstones", 4, 1, seed=s))).__name__ for s in range(40)]
    assert members == again and len(set(members)) > 1 and "MixturePolicy" not in members


def test_seats_of_a_person_stay_empty():
    e = env(num_players=3)
    e.reset(seed=0)
    seated = seat_all(e, [None, RandomPolicy(1), None], 7)
    assert seated[0] is None and seated[2] is None and isinstance(seated[1], RandomPolicy)


# What a table once asked a policy with getattr/hasattr: now the methods and capabilities of the base.
CAPABILITY_NAMES = ("use_deck", "act_batch", "probabilities", "observe_game", "reset", "win_chance", "root_visits",
                    "has_value", "sample_lineup", '"game"', "'game'", '"act"', "'act'")
PROBE = re.compile(r"\b(getattr|hasattr)\(([^)]*)\)")


def test_no_capability_is_probed_outside_the_policy_base():
    found = []
    for path in [*(ROOT / "dragonstones_env").rglob("*.py"), *(ROOT / "training").rglob("*.py")]:
        if path.name == "base.py" and path.parent.name == "policies":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for _, args in PROBE.findall(line):
                if any(name in args for name in CAPABILITY_NAMES):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, found
