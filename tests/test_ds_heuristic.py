"""The rule-based DrachenSchatten bot (``dragonstones_env.policies.bots.drachenschatten``): legality, seeding,
strength, decisions."""

from __future__ import annotations

import numpy as np
import pytest

from dragonstones_env import drachenschatten
from dragonstones_env.games.drachenschatten import TYPE_INDEX as T
from dragonstones_env.games.drachenschatten import actions as A
from dragonstones_env.games.drachenschatten.observation import decode, view
from dragonstones_env.play.arena import seat_rotated_match
from dragonstones_env.policies import load_policy
from dragonstones_env.policies.bots.drachenschatten import DrachenSchattenHeuristic, read
from tests.aec_support import act_ds, arranged_ds

# ---------------------------------------------------------------- helpers


def arranged(n, stacks=None, colls=None, current=0, filler=True):
    """``stacks``: {stack: [card types, top first]}; a filler village stack keeps D7 from ending the game."""
    return arranged_ds(n, stacks, colls, current, 7 if filler else None)


act = act_ds


def bot_option(e, seed=0) -> tuple:
    """The bot's choice at the current decision, as an engine option with absolute seats."""
    raw = e.unwrapped
    obs = e.observe(e.agent_selection)
    a = DrachenSchattenHeuristic(seed=seed).act(obs)
    assert obs["action_mask"][a] == 1
    return A.decode(a, raw.game.decision.player, raw.num_players)


def play(n, policies, seed):
    """One game; returns every (seat, action) and checks each action against the mask."""
    e = drachenschatten.env(num_players=n)
    e.reset(seed=seed)
    moves = []
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        seat = e.possible_agents.index(agent)
        a = policies[seat].act(obs)
        assert obs["action_mask"][a] == 1, (seat, a, e.unwrapped.describe_action(a))
        moves.append((seat, a))
        e.step(a)
    return moves


# ---------------------------------------------------------------- legality, seeding, strength


@pytest.mark.parametrize("n, games", [(2, 120), (3, 100), (4, 80)])
def test_never_a_masked_action(n, games):
    bot = load_policy("ds-heuristic", seed=1)
    assert isinstance(bot, DrachenSchattenHeuristic)
    randoms = [load_policy("random", seed=10 + i) for i in range(n)]
    for g in range(games):
        seats = list(randoms[: n - 1])
        seats.insert(g % n, bot)
        if g % 5 == 0:  # some games with the bot in every seat (its own decays, trades, ...)
            seats = [bot] * n
        play(n, seats, seed=1000 * n + g)


def test_reproducible_per_seed_and_after_reset():
    def moves(bot, seed):
        return play(2, [bot, load_policy("random", seed=4)], seed)

    a = moves(DrachenSchattenHeuristic(seed=7), 3)
    assert a == moves(DrachenSchattenHeuristic(seed=7), 3)
    bot = DrachenSchattenHeuristic(seed=99)
    moves(bot, 5)  # move its generator on
    bot.reset(7)
    assert moves(bot, 3) == a
    # the generator only breaks ties: the opening pick (all village stacks unknown) depends on it
    e = drachenschatten.env(num_players=2)
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    picks = {DrachenSchattenHeuristic(seed=s).act(obs) for s in range(20)}
    assert len(picks) > 1 and all(A.family_of(p).name == "pick" for p in picks)


def test_beats_random_heads_up():
    result = seat_rotated_match(lambda: drachenschatten.env(num_players=2), load_policy("ds-heuristic", seed=0),
                                [load_policy("random", seed=1)], games=200, seed=0)
    assert result["rate"] > 0.6, result  # about 0.8 over 1,000 games


def test_read_gives_the_table():
    e = arranged(3, {8: ["dragon"], 0: ["gem trade"]},
                 [["key restore", ("shield protect-dragon", False), "treasure"], [], [("torch view-1", False)]],
                 current=0)
    tab = read(decode(e.observe("player_0")["observation"]))
    assert tab.n == 3 and tab.decision == "turn" and not tab.turned_over
    assert tab.ready[0][T["key restore"]] == 1 and tab.other[0][T["shield protect-dragon"]] == 1
    assert tab.other[0][T["treasure"]] == 1 and tab.other[2][T["torch view-1"]] == 1
    assert tab.stacks[8] == 1 and tab.stacks[0] == 1 and tab.stacks[7] == 2
    assert tab.memory == [None] * 16


# ---------------------------------------------------------------- decisions on crafted tables


def remember(e, stack):
    """Player 0 looks at ``stack`` with its ready torch view-1 (D4)."""
    act(e, ("use", T["torch view-1"]))
    act(e, ("view", stack))
    assert view(e.observe("player_0")["observation"], "memory")[stack].any()


def test_no_remembered_dragon_without_protection_but_slays_it_with_one():
    beasts = [("dragon", False), ("hydra", False)]
    # Without ready protection a remembered dragon would cost the whole collection (D5): never.
    e = arranged(2, {8: ["dragon"], 9: ["treasure"], 0: ["key restore"]},
                 [["torch view-1", "gem trade", ("boots turn-over", False), *beasts], []])
    remember(e, 8)
    assert all(bot_option(e, seed) != ("turn_over", 8) for seed in range(5))
    # With a ready shield the same dragon is the third beast: a win (D6).
    e = arranged(2, {8: ["dragon"], 9: ["treasure"], 0: ["key restore"]},
                 [["torch view-1", "shield protect-dragon", *beasts], []])
    remember(e, 8)
    assert bot_option(e) == ("turn_over", 8)


def test_takes_a_remembered_treasure():
    e = arranged(2, {9: ["treasure"], 10: ["dragon"], 0: ["key restore"]},
                 [["torch view-1", "boots turn-over"], []])
    remember(e, 9)
    assert bot_option(e) == ("turn_over", 9)


def test_keeps_to_the_village_without_protection():
    # Something to lose and no protection: the unknown caves (beasts, D1) are avoided.
    colls = [["boots turn-over", "key restore", "gem trade"], []]
    stacks = {0: ["helmet protect-dragon"], 1: ["shield protect-dragon"], 8: ["dragon"], 9: ["hydra"],
              10: ["treasure"]}
    for seed in range(5):
        assert bot_option(arranged(2, stacks, colls), seed) in {("turn_over", 0), ("turn_over", 1), ("turn_over", 7)}


def test_protects_with_a_duplicate_rather_than_its_only_shield():
    e = arranged(2, {8: ["dragon"]},
                 [["shield protect-dragon", "helmet protect-dragon", "helmet protect-dragon"], []])
    act(e, ("turn_over", 8))
    assert e.unwrapped.game.decision.kind == "protect"
    assert bot_option(e) == ("protect", T["helmet protect-dragon"])


def test_trade_picks_a_missing_kind_and_gives_a_duplicate():
    e = arranged(2, {0: ["shield protect-dragon"]},
                 [["gem trade", ("boots turn-over", False), "boots turn-over", "helmet protect-dragon"],
                  [("key restore", False), ("helmet protect-dragon", False), ("helmet protect-dragon", False)]])
    assert bot_option(e) == ("use", T["gem trade"], T["boots turn-over"], 1, T["key restore"])


def test_destroys_the_only_used_kind_of_an_opponent_close_to_seven():
    opp = [("key restore", False), "torch view-1", "boots turn-over", "gem trade", "shield protect-dragon",
           ("magic potion protect-hydra", False), ("magic potion protect-hydra", False)]  # six kinds
    e = arranged(2, {0: ["boots turn-over"]}, [["spell book destroy", "sword protect-dragon"], opp])
    assert bot_option(e) == ("use", T["spell book destroy"], 1, T["key restore"])


def test_key_restores_protection_first():
    e = arranged(2, {0: ["boots turn-over"], 8: ["treasure"]},
                 [["key restore", ("shield protect-dragon", False), ("boots turn-over", False),
                   ("torch view-2", False)], []])
    assert bot_option(e) == ("use", T["key restore"], T["shield protect-dragon"])


def test_decay_forfeits_the_least_useful_used_object():
    e = arranged(2, {0: ["boots turn-over"]},
                 [[("key restore", False), ("boots turn-over", False), "boots turn-over"], ["magic wand decay"]],
                 current=1)
    act(e, ("use", T["magic wand decay"]))
    assert e.unwrapped.game.decision.kind == "forfeit" and e.agent_selection == "player_0"
    assert bot_option(e) == ("forfeit", T["boots turn-over"])


def test_extra_turn_overs_only_when_safe():
    colls = [["boots turn-over", "gem trade", "helmet protect-dragon"], []]
    caves = {8: ["hydra", "hydra"], 9: ["dragon"], 10: ["treasure"]}
    # New kinds left in the village: the boots turn one over (the village holds no beasts, D1).
    e = arranged(2, {0: ["sword trade", "magic potion protect-hydra"], 1: ["key restore"], **caves}, colls,
                 filler=False)
    act(e, ("turn_over", 0))
    opt = bot_option(e)
    assert opt[:2] == ("use", T["boots turn-over"]) and opt[2] in (0, 1)
    # Only the caves are left, mostly beasts and no hydra protection: the turn ends, the boots stay ready.
    e = arranged(2, {0: ["sword trade"], **caves}, colls, filler=False)
    act(e, ("turn_over", 0))
    assert bot_option(e) == ("end_turn",)


def test_rejects_an_empty_mask():
    obs = {"observation": np.zeros(drachenschatten.env().observation_space("player_0")["observation"].shape,
                                   np.float32), "action_mask": np.zeros(A.NUM_ACTIONS, np.int8)}
    with pytest.raises(ValueError, match="no legal action"):
        DrachenSchattenHeuristic(0).act(obs)
