"""Decision kinds named by what is chosen (issue #13): one vocabulary, the card says who asks.

The observation's decision slots and the record's ``decision`` field keep layout v1's
per-character names; ``tests/golden/v1_records.json.gz`` holds games recorded before the
change (random play at commit e44aea4: four box games that name all 15 v1 decisions, and one
with ``examples/characters.yaml``), which must replay and read back as today's kinds.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from dragonstones_env import env as fist_env
from dragonstones_env.games.dragonstones import custom, replay
from dragonstones_env.games.dragonstones.custom import Deck
from dragonstones_env.games.dragonstones.decisions import KINDS, V1_KIND, V1_NAMES, V1_NAMES_TABLE, kinds_table, v1_name
from dragonstones_env.games.dragonstones.engine import DECISION_KINDS, Game
from dragonstones_env.games.dragonstones.flow import read
from dragonstones_env.games.dragonstones.observation import DECISION_LABELS, Observer, decode
from dragonstones_env.policies import Table, load_policy, seat
from dragonstones_env.policies.bots.dragonstones import choices
from dragonstones_env.policies.bots.dragonstones.table import for_decision
from tests.aec_support import live_decisions
from tests.support import at, choose, give_doppelganger, make_game, run_to, win

ROOT = Path(__file__).resolve().parents[1]
with gzip.open(ROOT / "tests" / "golden" / "v1_records.json.gz", "rt") as f:
    OLD_RECORDS = json.load(f)


def test_the_vocabulary_is_one_table_and_the_docs_show_it():
    assert tuple(KINDS) == DECISION_KINDS
    assert all(isinstance(meaning, str) and meaning for meaning in KINDS.values())
    assert kinds_table() in (ROOT / "docs" / "adding-a-game.md").read_text()


def test_the_v1_names_are_the_observation_slots_and_each_reads_back_as_its_kind():
    assert (*V1_NAMES, "none") == DECISION_LABELS
    assert len(set(V1_NAMES)) == len(V1_NAMES) == 15
    for name, kind, card in V1_NAMES_TABLE:
        assert kind in KINDS and V1_KIND[name] == kind
        assert v1_name(kind, card) == name  # each slot is reached by its row
    assert v1_name("choose_colour", "Banker") == "ancient_colour"  # any other card: the kind's name


def test_ask_refuses_a_kind_outside_the_vocabulary():
    g = make_game()
    with pytest.raises(ValueError, match="unknown decision kind 'paint'"):
        g.ask("paint", 0, "Troll", [("colour", "red"), ("colour", "blue")], lambda *a: None)
    with pytest.raises(ValueError, match="'troll_colour' \\(now 'choose_colour'"):
        g.ask("troll_colour", 0, "Troll", [("colour", "red"), ("colour", "blue")], lambda *a: None)


def _old_decisions(record: list[dict]) -> list[tuple[str, str, str | None]]:
    """Re-run an old record: for each choice, (its recorded name, the kind and card asked now)."""
    start = record[0]
    deck = Deck.from_dict(start["deck"]) if "deck" in start else None
    g = Game(start["num_players"], seed=start["seed"], max_turns=start["max_turns"], deck=deck)
    out = []
    for ev in record:
        if ev["type"] == "choice":
            out.append((ev["decision"], g.decision.kind, g.decision.card))
            g.apply(tuple(ev["option"]))
    return out


@pytest.mark.parametrize("i", range(len(OLD_RECORDS)))
def test_records_made_before_the_new_kinds_replay_and_read_back_as_kinds(i):
    record = OLD_RECORDS[i]
    # the same events, today's names for their kinds and end (dragonstones_env/core/records.py)
    assert replay(record).record == read(record)
    for name, kind, card in _old_decisions(record):
        assert V1_KIND[name] == kind and v1_name(kind, card) == name


def test_the_old_records_name_every_v1_decision():
    names = {ev["decision"] for r in OLD_RECORDS for ev in r if ev["type"] in ("choice", "auto")}
    assert names == set(V1_NAMES)
    assert any("deck" in r[0] for r in OLD_RECORDS)


def test_the_doppelganger_asks_its_offer_about_the_won_card():
    """F28: kind yes_no, asked by the Doppelganger; the observation's card is the won card."""
    game = make_game()
    give_doppelganger(game, 0)
    run_to(game, "Red Dragon")
    win(game, 0)
    d = game.decision
    assert (d.kind, d.card) == ("yes_no", "Doppelganger")
    view = decode(Observer().observe(game, 0))
    assert (view["decision"], view["asks"], view["card"]) == ("yes_no", "Doppelganger", "Red Dragon")
    choose(game, ("no",))


def test_the_troll_asks_choose_colour():
    game = at("Troll")
    win(game, 1)
    assert (game.decision.kind, game.decision.card) == ("choose_colour", "Troll")
    view = decode(Observer().observe(game, 1))
    assert (view["decision"], view["asks"], view["card"]) == ("choose_colour", "Troll", "Troll")


@pytest.fixture
def painter():
    """A new Python character that asks a colour: it needs no new kind."""

    @custom.character("Painter", copies=3, text="take a stone of a colour of your choice", value_hint=0.4)
    def painter_power(g, p, auction):
        options = [("colour", c) for i, c in enumerate(("red", "blue", "yellow")) if g.bank.stones[i]]
        if options:
            g.ask("choose_colour", p, g.power.card, options, _paint)

    yield "Painter"
    custom.PYTHON_CHARACTERS.pop("Painter", None)


def _paint(g, p, option, data):
    g.gain_stone(p, ("red", "blue", "yellow").index(option[1]))
    g.log("took_stone", player=p, colour=option[1], amount=1)


def test_a_python_character_with_a_new_kind_is_refused():
    with pytest.raises(custom.CharacterError, match="unknown decision kind 'paint_colour'"):
        @custom.character("Bad Painter")
        def bad_painter(g, p, auction):
            g.ask("paint_colour", p, g.power.card, [("colour", "red"), ("colour", "blue")], _paint)
    assert "Bad Painter" not in custom.PYTHON_CHARACTERS


def test_a_new_character_reuses_the_kinds_and_the_bots_answer_it(painter):
    """The Painter's decision is choose_colour: the observation's slot and the bots' rows exist."""
    e = fist_env(num_players=4, characters=[painter])
    deck = e.unwrapped.deck
    bots = [load_policy(spec, seed=i) for i, spec in enumerate(("heuristic", "aggressor", "collector", "random"))]
    bots = [seat(bot, Table("dragonstones", 4, i, deck=deck)) for i, bot in enumerate(bots)]
    seen = 0
    for seed in range(40):
        e.reset(seed=seed)
        for agent, obs in live_decisions(e):
            d = e.unwrapped.game.decision
            bot = bots[e.possible_agents.index(agent)]
            if d.card == painter and d.kind == "choose_colour":
                view = decode(obs["observation"])
                assert (view["decision"], view["asks"]) == ("choose_colour", deck.slot_name(painter))
                seen += 1
            e.step(int(bot.act(obs)))
        if seen >= 3:
            break
    assert seen >= 3
    assert all(getattr(b, "fallbacks", 0) == 0 for b in bots)
    assert choices.CHOOSERS["choose_colour"] is choices._take_colour  # the row that answered


def test_bots_look_up_kind_and_card_then_the_kind():
    class T:
        decision, asks = "choose_colour", "Troll"

    assert for_decision(choices.CHOOSERS, T) is choices._troll
    T.asks = "Painter"
    assert for_decision(choices.CHOOSERS, T) is choices._take_colour
    T.decision = "bid"
    assert for_decision(choices.CHOOSERS, T) is None
    assert np.all([k in KINDS or k[0] in KINDS for k in choices.CHOOSERS])
