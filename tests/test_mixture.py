"""A mixture policy (issue #28): a distribution over members shipped as one folder, one member per
seat per game; and the meta-solver that picks its weights (training/meta.py)."""

from __future__ import annotations

import json
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

from dragonstones_env.evaluation import tournament
from dragonstones_env.policies import PolicyError, Table, load_policy, mixture, seat, zoo
from dragonstones_env.policies.checkpoint import CheckpointPolicy, expected_layout
from dragonstones_env.policies.registry import shipped_dir
from tests.checkpoints import write_checkpoint
from training import meta
from training.league import League

ENV = "dragonstones_v1"


def make_mixture(folder, members, **extra):
    """A mixture folder; members are (spec, weight) with specs as the card lists them."""
    return mixture.write(folder, members, ENV, expected_layout(ENV), extra or None)


@pytest.fixture
def mix(tmp_path):
    write_checkpoint(tmp_path / "mix" / "members" / "net", seed=3)
    return make_mixture(tmp_path / "mix", [("members/net", 1.0), ("value", 1.0)])


def test_a_mixture_folder_loads_as_one_policy_of_its_members(mix):
    policy = load_policy(str(mix), seed=0)
    assert isinstance(policy, mixture.MixturePolicy)
    assert policy.game == ENV and policy.weights.tolist() == [0.5, 0.5]
    assert isinstance(policy.members[0], CheckpointPolicy) and policy.names == ["members/net", "value"]


def test_reset_draws_the_member_of_the_next_game_from_the_seed(mix):
    policy = load_policy(str(mix))
    drawn = []
    for seed in range(40):
        policy.reset(seed)
        drawn.append(policy.names[policy.members.index(policy.current)])
    again = []
    for seed in range(40):
        policy.reset(seed)
        again.append(policy.names[policy.members.index(policy.current)])
    assert drawn == again  # the seed decides
    assert 8 < drawn.count("value") < 32  # both members play, about half each


def test_a_member_of_weight_zero_never_plays(tmp_path):
    write_checkpoint(tmp_path / "m" / "members" / "net", seed=3)
    policy = load_policy(str(make_mixture(tmp_path / "m", [("members/net", 0.0), ("value", 2.0)])))
    for seed in range(30):
        policy.reset(seed)
        assert policy.current is policy.members[1]


def test_in_the_gym_env_each_seat_draws_its_own_member_each_game(mix):
    env = gym.make("Dragonstones-v0", num_players=4, opponents=str(mix))
    tables = []
    for seed in range(30):
        env.reset(seed=seed)
        tables.append(tuple(type(p).__name__ for p in env.unwrapped.seat_policies if p is not None))
    kinds = Counter(name for table in tables for name in table)
    assert set(kinds) == {"CheckpointPolicy", "ZooPolicy"}
    assert any(len(set(table)) == 2 for table in tables)  # seats of one table draw apart
    replay = []
    for seed in range(30):
        env.reset(seed=seed)
        replay.append(tuple(type(p).__name__ for p in env.unwrapped.seat_policies if p is not None))
    assert replay == tables  # the env's seed decides the draws


def test_a_league_pool_mixture_seats_its_members(mix, tmp_path):
    league = League(tmp_path / "run", {"pool": 1.0}, pool=[str(mix)])
    sampled = [p for g in range(20) for p in league.sample_lineup(np.random.default_rng(g), 3)]
    assert {type(p).__name__ for p in sampled} == {"MixturePolicy"}  # the table draws the member when it seats it
    seated = [type(seat(p, Table("dragonstones", 4, 1, seed=k))).__name__ for k, p in enumerate(sampled)]
    assert set(seated) == {"CheckpointPolicy", "ZooPolicy"}


def test_the_tournament_plays_a_mixture_like_any_policy(mix):
    result = tournament.evaluate([str(mix), "heuristic"], players=4, games=8, seed=2, progress=False)
    again = tournament.evaluate([str(mix), "heuristic"], players=4, games=8, seed=2, progress=False)
    assert [g["winners"] for g in result["games_played"]] == [g["winners"] for g in again["games_played"]]
    assert {row["spec"] for row in result["policies"]} == {str(mix), "heuristic"}


@pytest.mark.parametrize("members, why", [
    ([("../outside", 1.0)], "leaves the mixture's folder"),
    ([("/etc", 1.0)], "must be relative"),
    ([("no-such-bot", 1.0)], "neither a built-in or shipped name"),
    ([("value", 0.0)], "sum to 0"),
    ([("value", -1.0)], "finite number >= 0"),
    ([("ismcts", 1.0)], "searches the game"),
    ([], "a list of 1..64"),
])
def test_a_bad_mixture_is_refused_naming_what_is_wrong(tmp_path, members, why):
    folder = make_mixture(tmp_path / "bad", members)
    with pytest.raises(PolicyError, match=why):
        load_policy(str(folder))


def test_a_member_that_is_itself_a_mixture_or_a_symlink_out_is_refused(tmp_path, mix):
    outer = tmp_path / "outer"
    (outer / "members").mkdir(parents=True)
    (outer / "members" / "inner").symlink_to(mix, target_is_directory=True)
    with pytest.raises(PolicyError, match="leaves the mixture's folder"):
        load_policy(str(make_mixture(outer, [("members/inner", 1.0)])))
    nested = tmp_path / "nested"
    make_mixture(nested / "members" / "inner", [("value", 1.0)])
    with pytest.raises(PolicyError, match="is a mixture"):
        load_policy(str(make_mixture(nested, [("members/inner", 1.0)])))


def drawn_at(policy, players, tables=60):
    """The member names a mixture seats at ``tables`` tables of ``players`` (seeds 0..tables-1)."""
    return Counter(policy.names[policy.members.index(policy.draw(np.random.default_rng([s, 0x313]), players))]
                   for s in range(tables))


def test_a_table_size_with_its_own_weights_draws_with_them(tmp_path):
    # PSRO's meta-game solved at 3 players (issue 52): the heuristic bot there, the value bot elsewhere
    folder = make_mixture(tmp_path / "m", [("value", 1.0), ("heuristic", 0.0)], weights_at={"3": {"heuristic": 1.0}})
    policy = load_policy(str(folder), seed=0)
    assert set(drawn_at(policy, 3)) == {"heuristic"} and set(drawn_at(policy, 4)) == {"value"}
    seated = [type(seat(policy, Table("dragonstones", n, 0, seed=7))).__name__ for n in (3, 4)]
    assert seated == ["HeuristicPolicy", "ZooPolicy"]  # seating reads the table's size
    policy.reset(3)  # without a table: the card's own weights
    assert policy.names[policy.members.index(policy.current)] == "value"


@pytest.mark.parametrize("weights_at, why", [
    ({"7": {"value": 1.0}}, "'7' is not a table size of Fist of Dragonstones"),
    ({"three": {"value": 1.0}}, "is not a table size"),
    ({"3": {"miser": 1.0}}, r"must map members of the card \(value, heuristic\)"),
    ({"3": {}}, "must map members of the card"),
    ({"3": {"value": 0.0}}, "positive sum"),
    ({"3": {"value": -1.0, "heuristic": 2.0}}, ">= 0"),
    ({"3": {"value": True}}, ">= 0"),
    ([["3", 1.0]], "'weights_at' must map a table size"),
])
def test_bad_weights_at_a_table_size_are_refused_naming_what_is_allowed(tmp_path, weights_at, why):
    folder = make_mixture(tmp_path / "m", [("value", 1.0), ("heuristic", 1.0)], weights_at=weights_at)
    with pytest.raises(PolicyError, match=why):
        load_policy(str(folder))


def test_a_member_entry_with_other_keys_is_refused(tmp_path):
    folder = make_mixture(tmp_path / "m", [("value", 1.0)])
    card = json.loads((folder / "card.json").read_text())
    card["members"][0]["code"] = "x"
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(PolicyError, match=r"members\[0\]"):
        load_policy(str(folder))


# ------------------------------------------------------------------ the meta-solver
def test_the_simplex_grid_holds_every_mixture_of_the_step():
    grid = meta.simplex_grid(3, 4)
    assert len(grid) == 15  # C(4 + 2, 2)
    assert np.allclose(grid.sum(axis=1), 1) and len({tuple(r) for r in grid}) == 15


def test_crowd_probabilities_are_the_multinomial_of_the_mixture():
    game = meta.EmpiricalGame.empty(["a", "b"], players=4)  # crowds: aaa, aab, abb, bbb
    p = game.crowd_probabilities(np.array([[0.5, 0.5], [1.0, 0.0]]))
    assert p[0].tolist() == pytest.approx([1 / 8, 3 / 8, 3 / 8, 1 / 8])
    assert p[1].tolist() == pytest.approx([1, 0, 0, 0])


def test_each_seat_of_a_game_is_one_sample_of_its_member_against_the_others():
    game = meta.EmpiricalGame.empty(["a", "b"], players=3)  # crowds: aa, ab, bb
    game.add([0, 1, 1], winners=[0])
    game.add([1, 1, 0], winners=[0, 1])
    a_vs_bb = game.crowds.index((1, 1))
    b_vs_ab = game.crowds.index((0, 1))
    assert game.seats[0, a_vs_bb] == 2 and game.wins[0, a_vs_bb] == 1.0
    assert game.seats[1, b_vs_ab] == 4 and game.wins[1, b_vs_ab] == 1.0  # 1/2 + 1/2 of the shared win


def test_the_solver_finds_the_mixture_no_lone_member_exploits():
    """Each member beats a crowd of the other (0.6 against parity 1/3) and nothing else: the crowd
    no lone member exploits is half of each, and a pure crowd is exploited."""
    game = meta.EmpiricalGame.empty(["a", "b"], players=3)
    game.seats[:] = 10_000
    game.wins[:] = 10_000 / 3
    game.wins[0, game.crowds.index((1, 1))] = 6_000
    game.wins[1, game.crowds.index((0, 0))] = 6_000
    result = meta.solve(game, grid=10, min_alone={})
    assert result["weights"] == pytest.approx({"a": 0.5, "b": 0.5})
    assert result["best_deviator_rate"] < 0.6 * 0.25 + 0.75 / 3 + 1e-3
    pure = game.deviator_rates(np.array([[1.0, 0.0]]))[0]
    assert pure[1] == pytest.approx(0.6, abs=1e-3)


def test_the_solver_keeps_only_mixtures_that_meet_a_floor_alone():
    game = meta.EmpiricalGame.empty(["a", "b"], players=3)
    game.seats[:] = 10_000
    game.wins[:] = 10_000 / 3
    game.wins[0, game.crowds.index((1, 1))] = 6_000
    game.wins[1, game.crowds.index((0, 0))] = 6_000
    result = meta.solve(game, grid=10, min_alone={1: 0.5})  # alone against 2 b: only a wins there
    assert result["weights"]["a"] >= 0.6
    with pytest.raises(meta.EvaluationError, match="--min-alone"):
        meta.solve(game, grid=10, min_alone={1: 0.9})


def test_population_games_are_seeded_and_written_as_a_shippable_mixture(tmp_path):
    one = meta.play_population(["random", "heuristic"], players=3, games=6, seed=4, workers=1, game_id="dragonstones",
                               progress=False)
    two = meta.play_population(["random", "heuristic"], players=3, games=6, seed=4, workers=1, game_id="dragonstones",
                               progress=False)
    assert one.seats.sum() == 18 and np.array_equal(one.wins, two.wins)
    net = write_checkpoint(tmp_path / "net", seed=5)
    (net / "model.zip").write_bytes(b"a pickle: never copied")
    folder = meta.write_mixture(tmp_path / "mix", [str(net), "value", "miser", "champion"],
                                {str(net): 0.6, "value": 0.3, "miser": 0.0, "champion": 0.1}, "dragonstones",
                                {"note": 1})
    policy = load_policy(str(folder))
    # the shipped champion is copied: its name may pass to a newer checkpoint
    assert policy.names == ["members/0-net", "value", "members/3-champion"]
    assert policy.weights.tolist() == pytest.approx([0.6, 0.3, 0.1])
    assert sorted(p.name for p in (folder / "members").iterdir()) == ["0-net", "3-champion"]
    assert sorted(p.name for p in (folder / "members" / "0-net").iterdir()) == ["card.json", "policy.npz"]


def test_a_solve_at_another_table_size_is_written_into_a_mixture_as_its_weights_there(tmp_path, mix):
    net = str(mix / "members" / "net")
    meta.into_mixture(mix, [net, "value", "heuristic"], {net: 0.25, "value": 0.0, "heuristic": 0.75}, 3,
                      {"players": 3})
    policy = load_policy(str(mix), seed=0)
    assert policy.names == ["members/net", "value", "heuristic"]  # a new rule bot joins with weight 0 elsewhere
    assert policy.weights.tolist() == [0.5, 0.5, 0.0]
    assert policy.weights_at[3].tolist() == [0.25, 0.0, 0.75]
    assert json.loads((mix / "card.json").read_text())["meta_at"] == {"3": {"players": 3}}


def test_a_solve_is_not_written_into_a_mixture_that_cannot_hold_its_members(tmp_path, mix):
    before = (mix / "card.json").read_text()
    other = write_checkpoint(tmp_path / "other", seed=9)
    with pytest.raises(meta.EvaluationError, match="neither a folder inside"):
        meta.into_mixture(mix, [str(other), "value"], {str(other): 0.5, "value": 0.5}, 3, {})
    with pytest.raises(meta.EvaluationError, match="not a mixture folder"):
        meta.into_mixture(other, ["value"], {"value": 1.0}, 3, {})
    with pytest.raises(PolicyError, match="not a table size"):
        meta.into_mixture(mix, ["value"], {"value": 1.0}, 9, {})
    assert (mix / "card.json").read_text() == before  # nothing written


def test_the_meta_solver_refuses_to_write_into_the_shipped_mixture(tmp_path, capsys):
    code = meta.main(["--members", "value", "heuristic", "--players", "3", "--games", "6", "--out", str(tmp_path / "x"),
                      "--into-mixture", str(shipped_dir() / "champion-mixture")])
    assert code == 2 and "inside the shipped checkpoints' folder" in capsys.readouterr().err


def test_every_rule_bot_of_the_game_can_be_a_member(tmp_path):
    names = ["heuristic", *zoo("dragonstones")]
    policy = load_policy(str(make_mixture(tmp_path / "m", [(n, 1.0) for n in names])))
    assert policy.names == names


def test_alone_against_copies_games_fill_the_pure_crowd_cells(tmp_path):
    game = meta.EmpiricalGame.empty(["random", "heuristic"], players=3)
    meta.play_pure(game, games=3, seed=0, workers=1, game_id="dragonstones", progress=False)
    alone = {(m, c): game.seats[m, game.crowds.index((c, c))] for m in (0, 1) for c in (0, 1)}
    assert alone == {(0, 0): 0, (0, 1): 3, (1, 0): 3, (1, 1): 0}  # each member alone against the other's copies
    assert game.seats.sum() == 2 * 3 * 3  # and the copies' seats too (against one lone bot and a copy)


def test_a_previous_runs_cells_are_read_back_and_checked(tmp_path):
    game = meta.EmpiricalGame.empty(["a", "b"], players=3)
    game.add([0, 1, 1], winners=[2])
    cells = {"wins": game.wins.tolist(), "seats": game.seats.tolist()}
    (tmp_path / "meta.json").write_text(json.dumps({"members": ["a", "b"], "players": 3, "cells": cells}))
    back = meta.read_cells(tmp_path / "meta.json", ["a", "b"], 3)
    assert np.array_equal(back.wins, game.wins) and np.array_equal(back.seats, game.seats)
    with pytest.raises(meta.EvaluationError, match="members and players"):
        meta.read_cells(tmp_path / "meta.json", ["a", "c"], 3)
    (tmp_path / "bad.json").write_text(json.dumps({"members": ["a", "b"], "players": 3,
                                                   "cells": {"wins": (game.seats + 1).tolist(),
                                                             "seats": game.seats.tolist()}}))
    with pytest.raises(meta.EvaluationError, match="wins <= seat-games"):
        meta.read_cells(tmp_path / "bad.json", ["a", "b"], 3)


def test_the_shipped_mixture_plays_the_members_its_card_measured():
    # A member kept by a shipped name follows that name, so promoting a new champion would change
    # the mixture under its measured panel: the old champion is pinned in members/ (v4 was, for v5).
    policy = load_policy("champion-mixture")
    members = zip(policy.names, policy.members, strict=True)
    steps = {name: m.card["steps"] for name, m in members if isinstance(m, CheckpointPolicy)}
    card = json.loads((shipped_dir() / "champion-mixture" / "card.json").read_text())
    assert steps == card["member_steps"]
    assert policy.card == card  # its card, as a checkpoint's, for its panel and provenance
