"""Custom characters (issue #16): primitives, the example cards, validation, the deck option,
record and replay, deep copies, the observation's reserved slots, bots, and a random soak."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from dragonstones_env import env as fist_env
from dragonstones_env.core import ReplayError
from dragonstones_env.games.dragonstones import custom, replay
from dragonstones_env.games.dragonstones.cards import CHARACTER_SLOTS
from dragonstones_env.games.dragonstones.engine import Auction, Game, PowerUse
from dragonstones_env.games.dragonstones.env import LAYOUT_SIGNATURE
from dragonstones_env.games.dragonstones.observation import decode
from tests.aec_support import live_decisions, play_out
from tests.extras import EVAL, EVAL_MODULE

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "characters.yaml"
NAMES = ("Banker", "Highwayman", "Jeweller")


def card(effects, name="Test Card", copies=1):
    return custom.card_from_dict({"name": name, "copies": copies, "text": "t", "effects": effects}, "test.yaml")


def use(c: custom.Custom, g: Game, p: int = 0) -> Game:
    """Use ``c``'s power for ``p`` outside the turn flow (decisions left pending)."""
    g.pending = None
    auction = Auction(c.name, bids=[[0, 0, 0, 0]] * g.num_players, values=[0] * g.num_players, outcome="won", winner=p)
    g.power = PowerUse(c.name, p, auction)
    c.power(g, p, auction)
    return g


def answer(g: Game, option: tuple) -> None:
    pending = g.pending
    assert option in pending.options, (option, pending.options)
    g.pending = None
    pending.handler(g, pending.decision.player, option, pending.data)


# ---------------------------------------------------------------------------- primitives
def test_gain_takes_what_the_bank_has_F4():
    g = Game(4, seed=1)
    g.bank.fairy = 2
    use(card([{"gain": {"coin": "fairy", "amount": 3}}]), g)
    assert g.players[0].fairy == 8 + 2 and g.bank.fairy == 0


def test_take_stone_of_a_colour_and_of_a_chosen_colour():
    g = Game(4, seed=1)
    before = list(g.players[0].stones)
    use(card([{"take_stone": {"colour": "blue", "amount": 2}}]), g)
    assert g.players[0].stones[1] == before[1] + 2
    g = Game(4, seed=1)
    use(card([{"take_stone": {"colour": "choice"}}]), g)
    assert g.pending.decision.kind == "choose_colour"
    red = g.players[0].stones[0]
    answer(g, ("colour", "red"))
    assert g.players[0].stones[0] == red + 1


def test_draw_stones_from_the_bag():
    g = Game(4, seed=1)
    total = sum(g.players[0].stones)
    bank = sum(g.bank.stones)
    use(card([{"draw_stones": {"amount": 3}}]), g)
    assert sum(g.players[0].stones) == total + 3 and sum(g.bank.stones) == bank - 3


def test_pay_stones_or_otherwise_F15():
    c = card([{"pay_stones": {"stones": "one_colour", "amount": 3, "points": 1,
                              "otherwise": [{"gain": {"coin": "common", "amount": 2}}]}}])
    g = Game(4, seed=1)
    g.players[0].stones = [3, 0, 0]
    g.bank.stones[0] -= 3
    use(c, g)
    assert g.pending.decision.kind == "pay_or_take"
    answer(g, ("pay", 3, 0, 0))
    assert g.players[0].score == 1 and g.players[0].stones == [0, 0, 0]
    g = Game(4, seed=1)
    g.players[0].stones = [1, 1, 0]
    use(c, g)  # cannot pay: the only option, taking, is applied at once (F15)
    assert g.pending is None and g.players[0].common == 4


def test_pay_stones_without_otherwise_is_mandatory_F40():
    g = Game(4, seed=1)
    g.players[0].stones = [1, 1, 1]
    use(card([{"pay_stones": {"stones": "each", "points": 2}}]), g)
    assert g.players[0].score == 2 and g.players[0].stones == [0, 0, 0]


def test_pay_coins_for_points_is_optional_F37():
    c = card([{"pay_coins": {"coin": "silver", "amount": 4, "points": 1}}])
    g = use(c, Game(4, seed=1))
    assert g.pending.decision.kind == "yes_no"
    answer(g, ("yes",))
    assert g.players[0].silver == 1 and g.players[0].score == 1
    g = use(c, Game(4, seed=1))
    answer(g, ("no",))
    assert g.players[0].silver == 5 and g.players[0].score == 0


def test_take_from_a_chosen_player_F27():
    c = card([{"take_from": {"what": "silver", "amount": 3}}])
    g = use(c, Game(4, seed=1))
    assert g.pending.decision.kind == "choose_seat"
    answer(g, ("target", 2))
    assert g.players[0].silver == 8 and g.players[2].silver == 2
    g = use(card([{"take_from": {"what": "stone", "amount": 2}}]), Game(4, seed=1))
    answer(g, ("target", 1))
    assert sum(g.players[0].stones) == 6 and sum(g.players[1].stones) == 2


def test_choose_between_two_effect_lists_and_the_rest_runs_after():
    c = card([{"choose": [[{"gain": {"coin": "silver", "amount": 2}}], [{"gain": {"coin": "common", "amount": 1}}]]},
              {"gain": {"coin": "fairy", "amount": 1}}])
    g = use(c, Game(4, seed=1))
    answer(g, ("no",))
    assert (g.players[0].silver, g.players[0].common, g.players[0].fairy) == (5, 3, 9)


# ---------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("effects", "message"), [
    ([{"steal_everything": {}}], "unknown effect 'steal_everything'"),
    ([{"gain": {"coin": "silver", "amount": 99}}], "impossible amount 99"),
    ([{"gain": {"coin": "rubies", "amount": 1}}], "'rubies' is not one of"),
    ([{"pay_stones": {"stones": "any", "amount": 6, "points": 1}}], "impossible amount 6"),
    ([{"pay_stones": {"stones": "any", "amount": 4, "points": 5}}], "points: impossible amount 5"),
    ([{"gain": {"coin": "silver"}}], "missing field(s) ['amount']"),
    ([{"gain": {"coin": "silver", "amount": 1, "colour": "red"}}], "unknown field(s) ['colour']"),
    ([], "non-empty list"),
])
def test_schema_errors_name_file_card_and_field(effects, message):
    with pytest.raises(custom.CharacterError) as err:
        card(effects, name="Bad")
    text = str(err.value)
    assert message in text and "test.yaml" in text and "'Bad'" in text and ".effects" in text


def test_name_clash_and_copies():
    with pytest.raises(custom.CharacterError, match="clashes"):
        card([{"gain": {"coin": "silver", "amount": 1}}], name="Troll")
    with pytest.raises(custom.CharacterError, match="copies: impossible amount 4"):
        card([{"gain": {"coin": "silver", "amount": 1}}], copies=4)


def test_conservation_check_refuses_a_python_power_that_creates_coins():
    with pytest.raises(custom.CharacterError, match="creates or destroys"):
        @custom.character("Counterfeiter", text="makes silver out of nothing")
        def counterfeiter(g, p, auction):
            g.players[p].silver += 1
    assert "Counterfeiter" not in custom.PYTHON_CHARACTERS


def test_a_python_power_that_raises_is_refused():
    with pytest.raises(custom.CharacterError, match="raised ZeroDivisionError"):
        @custom.character("Broken")
        def broken(g, p, auction):
            1 / 0  # noqa: B018


def test_file_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("characters:\n  - name: X\n    effects:\n      - gain: {coin: silver, amount: 0}\n")
    with pytest.raises(custom.CharacterError, match=r"bad\.yaml: character 'X'\.effects\[0\]\.gain\.amount"):
        custom.load_file(bad)
    (tmp_path / "empty.yaml").write_text("cards: []\n")
    with pytest.raises(custom.CharacterError, match="'characters' list"):
        custom.load_file(tmp_path / "empty.yaml")
    with pytest.raises(custom.CharacterError, match="cannot read"):
        custom.load_file(tmp_path / "missing.yaml")


def test_toml_file(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[[characters]]\nname = "Miner"\ntext = "2 stones"\n'
                 '[[characters.effects]]\ndraw_stones = {amount = 2}\n')
    (miner,) = custom.load_file(f)
    assert miner.name == "Miner" and miner.effects == ({"draw_stones": {"amount": 2}},)


def test_deck_limits():
    with pytest.raises(custom.CharacterError, match="cannot be excluded"):
        custom.make_deck(exclude=["Witch"])
    with pytest.raises(custom.CharacterError, match="at most 4"):
        custom.make_deck([{"name": f"C{i}", "effects": [{"gain": {"coin": "silver", "amount": 1}}]} for i in range(5)])


# ---------------------------------------------------------------------------- the example deck
def test_example_cards_load_with_rules_text():
    cards = custom.load_file(EXAMPLE)
    assert tuple(c.name for c in cards) == NAMES and all(c.text for c in cards)
    deck = custom.make_deck(EXAMPLE, exclude=["Troll"])
    assert "Troll" not in deck.specials and deck.specials.count("Banker") == 2
    assert [deck.slot_name(n) for n in NAMES] == list(CHARACTER_SLOTS[28:31])


def test_example_cards_each_work():
    cards = {c.name: c for c in custom.load_file(EXAMPLE)}
    g = use(cards["Banker"], Game(4, seed=1))
    assert g.players[0].fairy == 11
    g = use(cards["Highwayman"], Game(4, seed=1))
    answer(g, ("target", 3))
    assert sum(g.players[0].stones) == 6
    g = Game(4, seed=1)
    g.players[0].stones = [0, 3, 1]
    use(cards["Jeweller"], g)
    answer(g, ("pay", 0, 3, 0))
    assert g.players[0].score == 1


def test_layout_signature_unchanged():
    assert LAYOUT_SIGNATURE == "dragonstones_v1:6db71e5c8ea8"
    e = fist_env(characters=str(EXAMPLE))
    assert e.unwrapped.metadata["layout"] == LAYOUT_SIGNATURE


def _random_game(e, seed, rng):
    e.reset(seed=seed)
    play_out(e, rng)
    return e.unwrapped.game


def test_record_state_and_replay_carry_the_deck():
    e = fist_env(num_players=4, characters=str(EXAMPLE), exclude=["Troll"])
    rng = np.random.default_rng(0)
    used = set()
    for seed in range(12):
        g = _random_game(e, seed, rng)
        assert g.record[0]["deck"]["exclude"] == ["Troll"]
        assert replay(json.loads(json.dumps(g.record))).state_dict() == g.state_dict()
        used |= {ev["card"] for ev in g.record if ev["event"] == "power"}
    assert used & set(NAMES)
    assert "deck" in g.state_dict() and "deck" not in Game(4, seed=1).state_dict()


def test_unknown_card_in_a_record_is_refused():
    e = fist_env(characters=str(EXAMPLE))
    g = _random_game(e, 3, np.random.default_rng(3))
    record = copy.deepcopy(g.record)
    record[0]["deck"]["custom"].append({"name": "Phantom", "copies": 1, "text": "", "python": True})
    with pytest.raises(ReplayError, match="unknown card 'Phantom'"):
        replay(record)
    record = copy.deepcopy(g.record)
    record[0]["deck"]["custom"][0]["effects"] = [{"conjure": {}}]
    with pytest.raises(ReplayError, match="unknown effect 'conjure'"):
        replay(record)


def test_python_character_registered_plays_and_replays():
    @custom.character("Tax Collector", copies=2, text="every other player pays you 1 silver", value_hint=0.3)
    def tax_collector(g, p, auction):
        for q, pl in enumerate(g.players):
            if q != p and pl.silver:
                pl.silver -= 1
                g.players[p].silver += 1
        g.log("taxed", player=p)

    try:
        e = fist_env(characters=["Tax Collector"])
        g = _random_game(e, 5, np.random.default_rng(5))
        assert g.special_deck.count("Tax Collector") == 2
        assert replay(g.record).state_dict() == g.state_dict()
    finally:
        custom.PYTHON_CHARACTERS.pop("Tax Collector")


def test_deepcopy_goes_on_identically():
    e = fist_env(characters=str(EXAMPLE))
    e.reset(seed=7)
    rng = np.random.default_rng(7)
    for _ in range(150):
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            break
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    twin = copy.deepcopy(e)
    for _ in range(300):
        obs, _, term, trunc, _ = e.last()
        obs2, *_ = twin.last()
        assert np.array_equal(obs["observation"], obs2["observation"])
        if term or trunc:
            break
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        e.step(a)
        twin.step(a)


def test_observation_shows_custom_cards_in_reserved_slots_and_describe_names_them():
    e = fist_env(characters=str(EXAMPLE))
    rng = np.random.default_rng(11)
    for seed in range(30):
        e.reset(seed=seed)
        for _agent, obs in live_decisions(e):
            g = e.unwrapped.game
            d = g.decision
            if d.card in NAMES and d.kind not in ("bid", "tiebreak"):
                view = decode(obs["observation"])
                assert view["card"] == e.unwrapped.deck.slot_name(d.card)
                legal = np.flatnonzero(obs["action_mask"])
                assert e.unwrapped._describe(int(legal[0])).startswith(f"{d.card}: ")
                assert "custom deck: Banker" in e.unwrapped.render_text(0)
                return
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    pytest.fail("no custom power decision in 30 games")


def test_gymnasium_make_takes_the_deck():
    g = gymnasium.make("Dragonstones-v0", opponents="random", characters=str(EXAMPLE), exclude=["Troll"])
    assert g.unwrapped.aec.deck.exclude == ("Troll",)
    g.reset(seed=0)


@pytest.mark.parametrize("bots", [("heuristic", "value", "aggressor", "miser"), ("collector", "champion", "random",
                                                                               "heuristic")])
def test_bots_and_champion_play_legal_moves_with_the_example_deck(bots):
    from dragonstones_env.play.arena import play_game
    from dragonstones_env.policies import load_policy

    policies = [load_policy(b, seed=i) for i, b in enumerate(bots)]
    for seed in range(4):
        play_game(lambda: fist_env(num_players=4, characters=str(EXAMPLE)), policies, bots, seed=seed)


def test_random_soak_conserves_everything():
    """A small version of ``python -m tools.custom_soak --games 10000``."""
    from tools.custom_soak import soak

    result = soak(60, EXAMPLE)
    assert result["games"] == 60 and result["violations"] == 0


def test_training_config_and_evaluate_take_the_deck():
    pytest.importorskip(EVAL_MODULE, reason=EVAL)
    from dragonstones_env.evaluation import evaluate
    from training.config import ConfigError, RunConfig, validate_run

    cfg = RunConfig(characters=str(EXAMPLE), exclude=["Troll"])
    validate_run(cfg)
    assert cfg.env_options()["exclude"] == ["Troll"]
    with pytest.raises(ConfigError, match="characters"):
        validate_run(RunConfig(exclude=["Witch"]))
    summary = evaluate(["heuristic", "random"], players=4, games=4, progress=False,
                       env_options={"characters": str(EXAMPLE)})
    assert summary["games"] == 4 or len(summary["games"]) == 4


def test_both_trainers_evaluate_at_the_runs_deck(monkeypatch):
    """training/evals.py, the evaluations of both trainers (the RLlib trainer's played the box's deck
    until they shared it): the learner and its copies play the run's custom deck, and the rule bots
    at the table are told it."""
    from functools import partial

    from dragonstones_env.policies import seat_all
    from dragonstones_env.policies.checkpoint import CheckpointPolicy
    from tests.checkpoints import random_actor
    from training import evals
    from training.config import EvalConfig, RunConfig

    decks, told = [], []

    def table(make, *seats):
        e = make()
        decks.append(e.unwrapped.deck)
        policies = [p for seat in seats for p in (seat if isinstance(seat, list) else [seat])]
        # seated as the arena seats them before a game: the table's deck reaches the rule bots
        told.extend(getattr(p, "values", None) for p in seat_all(e, policies, 0))
        return {}

    monkeypatch.setattr(evals, "seat_rotated_match", lambda make, hero, others, *a, **k: table(make, hero, others))
    monkeypatch.setattr(evals, "copies_match", lambda make, copies, *a, **k: table(make, copies))
    learner = partial(CheckpointPolicy, random_actor(0))
    cfg = RunConfig(characters=str(EXAMPLE), eval=EvalConfig(players=3))  # both trainers' configs are RunConfigs
    evals.against_bots(learner, cfg, 1, "heuristic", seed=0)
    evals.copies(learner, cfg, 1, seed=0)
    assert [[c.name for c in d.custom] for d in decks] == [["Banker", "Highwayman", "Jeweller"]] * 2
    bots = [v for v in told if v is not None]
    assert len(bots) == 2 and all(decks[0].slot_name("Banker") in v.custom for v in bots)
    decks.clear()
    evals.against_bots(learner, RunConfig(eval=EvalConfig(players=3)), 1, "heuristic", seed=0)
    assert decks == [None]


def test_bots_value_data_cards_from_effects_and_python_cards_from_the_hint():
    from dragonstones_env.policies import Table, load_policy, seat
    from dragonstones_env.policies.bots.dragonstones.table import read

    deck = custom.make_deck(EXAMPLE)
    bot = load_policy("heuristic", seed=0)
    e = fist_env(characters=str(EXAMPLE))
    e.reset(seed=0)
    obs, *_ = e.last()
    t = read(decode(obs["observation"]))
    banker = deck.slot_name("Banker")
    assert bot.values.gain(banker, t.me, t) == 0.0  # not told about the deck: worth nothing, no crash
    seat(bot, Table("dragonstones", 4, deck=deck))  # seated at a table of this deck (policies.seat)
    assert bot.values.gain(banker, t.me, t) == pytest.approx(3 * bot.values.p.fairy)
    assert bot.values.gain(deck.slot_name("Highwayman"), t.me, t) > 0
    hinted = custom.Custom("Hinted", 1, "", function=lambda g, p, a: None, value_hint=1.0)
    seat(bot, Table("dragonstones", 4, deck=custom.Deck((hinted,))))
    assert bot.values.gain("custom_1", t.me, t) > 0
    zoo = load_policy("miser", seed=0)
    seat(zoo, Table("dragonstones", 4, deck=deck))
    for seed in range(2):
        from dragonstones_env.play.arena import play_game

        play_game(lambda: fist_env(characters=str(EXAMPLE)), [bot, zoo, bot, zoo], ["h", "m", "h", "m"], seed=seed)


def test_the_panel_plays_the_deck_and_training_opponents_are_told_it():
    """``--panel --characters`` plays the custom deck (it used to drop it), with the same figures as the
    same games played deck-by-path; the Gym env tells its rule-bot opponents the deck."""
    from dragonstones_env import evaluation as ev
    from dragonstones_env.evaluation import tournament

    kwargs = {"players": [4], "games": 4, "ks": [1], "copies": (), "progress": False}
    deck = ev.panel("heuristic", ["miser"], env_options={"characters": str(EXAMPLE)}, **kwargs)
    assert deck["env_options"] == {"characters": str(EXAMPLE)} and "Env options" in ev.format_panel(deck)
    plain = ev.panel("heuristic", ["miser"], **kwargs)
    assert plain["env_options"] is None
    seen = []
    real = tournament.play_game

    def spy(make_env, *args, **kw):
        seen.append(make_env().unwrapped.deck)
        return real(make_env, *args, **kw)

    tournament.play_game = spy
    try:
        again = ev.panel("heuristic", ["miser"], env_options={"characters": str(EXAMPLE)}, **kwargs)
    finally:
        tournament.play_game = real
    assert seen and all(d is not None and [c.name for c in d.custom] == ["Banker", "Highwayman", "Jeweller"]
                        for d in seen)
    assert [r["wins"] for r in again["mixes"]] == [r["wins"] for r in deck["mixes"]]
    # no module state: the deck travels with the evaluation, to any number of worker processes
    two = ev.panel("heuristic", ["miser"], workers=2, env_options={"characters": str(EXAMPLE)}, **kwargs)
    assert [r["wins"] for r in two["mixes"]] == [r["wins"] for r in deck["mixes"]]

    g = gymnasium.make("Dragonstones-v0", opponents="heuristic", characters=str(EXAMPLE))
    g.reset(seed=0)
    bots = [p for p in g.unwrapped.seat_policies if p is not None]
    banker = g.unwrapped.aec.deck.slot_name("Banker")
    assert bots and all(banker in bot.values.custom for bot in bots)
