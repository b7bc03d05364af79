"""Fist of Dragonstones shown to people (its :class:`~dragonstones_env.registry.Presenter`, for the web app,
the terminal and GIFs): what one seat sees, its actions, its log, in words.

Every value shown to a seat comes from that seat's observation (``observation.decode``) and
action mask; a spectator's (:func:`public_view`) from what every seat sees alike; only
:func:`hidden` (the whole-table view of a replay) reads the engine's hidden state. The words --
the cards' rules text, the prompts, the log's sentences -- come from the game's data
(:data:`cards.CHARACTERS`' texts, the decision kinds, the record's events), seats named by player.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from dragonstones_env.core.records import KIND_KEY
from dragonstones_env.presenting import absolute, builder, button_groups, event_text, joined, plain
from dragonstones_env.registry import Presenter

from . import actions as A
from . import custom
from .cards import CHARACTER_SLOTS, CHARACTERS, COLOURS
from .env import raw_env
from .observation import SEAT_FEATURES, decode
from .state import WIN_SCORE

INPUT_EVENTS = ("choice",)
_SEALED = ("bid", "tiebreak")  # decisions whose choice stays secret until the reveal (F43)
# Env options a new table may set (the custom deck, issue #16; docs/custom-characters.md).
TABLE_OPTIONS = ("characters", "exclude")
# How to play, for a first-time player (the setup page and an invitee's first screen)
HOW_TO = (
    "Each turn, characters come up for auction one at a time (the Witch first).",
    "Everyone seals a bid at once: fairy gold and common gold (an amulet doubles it, a black coin "
    "curses the card so nobody uses it), or nothing at all: the empty fist.",
    "The highest bid takes the character and uses its power at once; a tie is settled by a second "
    "bid in silver. Fairy gold you bid is spent until the turn ends; everything else goes to the bank.",
    "Powers give dragon stones, gold, silver and points: the first to 3 points wins. Tap a card, or "
    "focus it and press Enter, to read its power.",
)
# The rules text of the box's cards: the card data's own (cards.CHARACTERS), without the ruling number.
RULES = {c.name: re.sub(r"\s*\(F\d+\)$", "", c.power) for c in CHARACTERS}


def make_env(num_players: int, **options: Any) -> raw_env:
    """A table; ``options`` are the env's (checked by it). A ``characters`` file must be YAML or TOML:
    the server never passes one (it sends a deck's cards), the terminal's user may."""
    chars = options.get("characters")
    if isinstance(chars, str) and not chars.lower().endswith((".yaml", ".yml", ".toml")) \
            and chars not in custom.PYTHON_CHARACTERS:
        raise ValueError(f"characters: {chars[:200]!r} is neither a .yaml, .yml or .toml file nor a registered "
                         "Python character")
    return raw_env(num_players=num_players, **options)


def env_for_record(start: dict[str, Any]) -> raw_env:
    deck = custom.Deck.from_dict(start["deck"]) if "deck" in start else None
    options = {} if deck is None else {"characters": list(deck.custom), "exclude": list(deck.exclude)}
    env = raw_env(num_players=start["num_players"], max_turns=start["max_turns"], **options)
    env.reset(seed=start["seed"])
    return env


def _deck_text(text: str, fmt: str, label: str) -> list[Any]:
    """A deck's cards from its text, each checked (a deck of the server's folder, read once)."""
    cards = custom.parse_text(text, fmt, label)
    for card in cards:
        custom.card_from_dict(card, label)
    return cards


def option(key: str, value: Any, sources: Any) -> Any:
    """A table's env option from a request, sizes checked before anything is parsed (a ValueError
    says what is wrong). ``characters``: a deck's text (``{"format", "text"}``), a list of card
    objects or registered Python characters, or a name: a Python character, or a deck that
    ``sources.deck`` finds (the server's deck folder; the terminal's user: a file). ``exclude``: names."""
    if key == "exclude":
        if not (isinstance(value, list) and len(value) <= 40 and all(isinstance(x, str) and len(x) <= 40
                                                                     for x in value)):
            raise ValueError(f"exclude must be a list of special characters' names, got {value!r}"[:300])
        return value
    if isinstance(value, dict):
        stray = sorted(set(value) - {"format", "text"})
        if stray:
            raise ValueError(f"a deck's text is {{\"format\": one of {list(custom.DECK_FORMATS)}, \"text\": ...}}; "
                             f"unknown field(s) {stray}"[:300])
        return custom.parse_text(value.get("text"), value.get("format"), "the deck")
    if isinstance(value, list):
        if len(value) > custom.MAX_CUSTOM:
            raise ValueError(f"at most {custom.MAX_CUSTOM} custom characters (layout v1's reserved slots), "
                             f"got {len(value)}")
        if not all(isinstance(c, (str, dict)) for c in value):
            raise ValueError("characters lists card objects or registered Python characters' names")
        return value
    if not isinstance(value, str) or not value:
        raise ValueError("characters is a deck's name, a deck's text {\"format\": \"yaml\", \"text\": ...}, or "
                         f"a list of card objects, got {str(value)[:60]!r}")
    if value in custom.PYTHON_CHARACTERS:
        return [value]
    return sources.deck(value, _deck_text)


def encode(option: list, actor: int, num_players: int) -> int:
    return A.encode(tuple(option), actor, num_players)


def rules() -> dict[str, str]:
    """Every box card's rules text, by name (a table's custom cards carry theirs in its view), in
    plain words: a player does not read the rulings' numbers."""
    return dict(RULES)


def goal(env: raw_env) -> str:
    return (f"First to {WIN_SCORE} points wins, at once. Points come from the characters' powers; "
            f"after {env.options['max_turns']} turns the game stops and nobody wins.")


def view(env: raw_env, seat: int) -> dict[str, Any]:
    """What ``seat`` sees, from its observation, seats made absolute (seat 0 is player_0)."""
    n = env.num_players
    d = decode(env.observe(env.possible_agents[seat])["observation"])
    seats = d["seats"]
    # The table's custom cards (a public option of the table) by their layout slot (custom_k).
    deck = env.deck
    label = {} if deck is None else {deck.slot_name(c.name): c.name for c in deck.custom}

    def named(card: str | None) -> str | None:
        return label.get(card, card)

    def rel(p: int) -> int:
        return (p - seat) % n

    players = []
    for p in range(n):
        r = rel(p)
        row = {f: plain(seats[f][r]) for f in SEAT_FEATURES}
        known = bool(row.pop("coins_known"))
        for coin in ("fairy", "common", "silver"):
            if not known:
                row[coin] = None  # behind the screen ("table" mode)
        row["has_bid"] = bool(d["has_bid"][r])
        row["second_bidder"] = bool(d["second_bidders"][r])
        players.append(row)
    characters = []
    for i, name in enumerate(CHARACTER_SLOTS):
        for status, counts in d["turn_cards"].items():
            characters += [{"name": named(name), "status": status}] * round(counts[i])
    auctions = []
    held = [slot for slot, card in enumerate(d["bid_cards"]) if card is not None]
    for slot in held:
        bids = d["bids"]
        rows = [{k: plain(bids[k][slot][rel(p)]) for k in bids} for p in range(n)]
        # every auction of the turn is revealed but the last while its bids are being sealed
        revealed = slot != held[-1] or d["decision"] != "bid"
        auctions.append({"card": named(d["bid_cards"][slot]), "bids": rows if revealed else None})
    max_turns = env.options["max_turns"]  # a public option of the table
    decision = d["decision"]
    return {
        "turn": round(d["progress"]["turn_fraction"] * max_turns),
        "max_turns": max_turns,
        "win_score": WIN_SCORE,
        "decision": None if decision == "none" else decision,  # the kind, named by what is chosen (decisions.KINDS)
        "card": named(d["card"]),
        "asks": named(d["asks"]),  # the character asking: the card, but the Doppelganger for its offer (F28)
        "acting": absolute(d["acting_seat"], seat, n),
        "bank": plain(d["bank"]),
        "pending_stones": plain(d["pending_stones"]),
        "characters": characters,
        "auctions": auctions,
        "players": players,
        "own": plain(d["own"]),
        "power": {
            "source": d["power_source"],
            "auction": d["power_auction"],
            "uses_left": plain(d["power_uses_left"][0]),
            "rainbow_named": d["rainbow_named"],
            "merchant_bought": plain(d["merchant_bought"]),
            "merchant_paid": plain(d["merchant_paid"]),
            "necromancer_price": plain(d["necromancer_price"][0]),
        },
        "special_pile": _named(d["special_pile"], label),
        "special_discards": _named(d["special_discards"], label),
        "deck": None if deck is None else {
            "custom": [{"name": c.name, "slot": deck.slot_name(c.name), "copies": c.copies, "text": c.text}
                       for c in deck.custom],
            "exclude": list(deck.exclude)},
    }


def public_view(env: raw_env) -> dict[str, Any]:
    """What a spectator sees: what every seat sees alike. Seat 0's view, with each player's row as
    another seat sees it (coins behind a screen stay hidden in "table" mode) and no own holdings or
    sealed bid (F43)."""
    v = view(env, 0)
    v["players"][0] = view(env, 1)["players"][0]
    v["own"] = None
    return v


def _named(counts: np.ndarray, label: dict[str, str]) -> dict[str, int]:
    return {label.get(CHARACTER_SLOTS[i], CHARACTER_SLOTS[i]): round(c) for i, c in enumerate(counts) if c > 0.5}


def hidden(env: raw_env) -> dict[str, Any]:
    """The whole table of a replay: what no single seat knew (sealed bids, every screen)."""
    g = env.game
    sealed = {} if g.auction is None else {str(p): list(b) for p, b in g.auction._sealed.items()}
    return {
        "sealed_bids": sealed,
        "coins": [{"fairy": pl.fairy, "common": pl.common, "silver": pl.silver} for pl in g.players],
        "draw_pile": len(g.special_pile),
    }


def race(v: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The score race: points towards WIN_SCORE (F17), per seat."""
    return [[{"label": "points", "value": p["score"], "target": v["win_score"]}] for p in v["players"]]


# ---------------------------------------------------------------------------- prompts and choices
# The question each decision asks, by (kind, asking card); a kind's own row (card None) serves
# every other card, custom ones included ({text}: the asking card's rules text).
_PROMPTS: dict[tuple[str, str | None], str] = {
    ("bid", None): "The {card} is up for auction: seal your bid (fairy and common gold; the black coin curses it, "
                   "the amulet doubles it)",
    ("tiebreak", None): "Tie for the {card}: seal a tie-break bid in silver (the amulet doubles it)",
    ("pay_or_take", None): "{asks}: {text}. Pay, or take the coins instead?",
    ("choose_payment", None): "{asks}: {text}. Which stones do you pay?",
    ("choose_colour", "Ancient Dragon"): "Ancient Dragon: which colour of stone do you take from the bank?",
    ("choose_colour", "Rainbow Dragon"): "Rainbow Dragon: name a colour; drawing a stone of it returns every "
                                         "stone drawn",
    ("choose_colour", "Troll"): "Troll: which colour must every player (you too) return to the bank?",
    ("choose_colour", None): "{asks}: {text}. Which colour?",
    ("choose_seat", "Brigand"): "Brigand: whose common gold and silver do you take?",
    ("choose_seat", None): "{asks}: {text}. From whom?",
    ("choose_loot", None): "Thief: what do you take from a second bidder: a stone (or, with none, a coin)?",
    ("choose_card", "Ghost"): "Ghost: use the power of which character auctioned this turn?",
    ("choose_card", "Imp"): "Imp: use the power of which character not yet auctioned?",
    ("choose_card", None): "{asks}: use the power of which character?",
    ("buy_or_stop", None): "Merchant: buy a stone (1 common gold, 1 fairy gold or 3 silver), or stop",
    ("draw_or_stop", None): "Rainbow Dragon: draw another stone, or keep those drawn?",
    ("yes_no", "Doppelganger"): "Doppelganger: play it now, to use the {card}'s power a second time?",
    ("yes_no", "Necromancer"): "Necromancer: pay the coins you bid ({price} fairy gold) for 1 point?",
    ("yes_no", None): "{asks}: {text}. Yes or no?",
}
# The words of the yes/no and draw/stop buttons, by asking card.
_WORDS: dict[tuple[str, str | None], str] = {
    ("yes", "Doppelganger"): "play the Doppelganger: use the power twice",
    ("no", "Doppelganger"): "keep the Doppelganger for later",
    ("yes", "Necromancer"): "pay the coins bid: +1 point",
    ("no", "Necromancer"): "decline",
    ("draw", None): "draw another stone",
    ("stop", "Rainbow Dragon"): "keep the stones drawn",
    ("stop", None): "stop buying",
    ("take", None): "take the coins instead",
}
_COLOUR_WORDS = {"Ancient Dragon": "take a {c} stone", "Rainbow Dragon": "name {c}",
                 "Troll": "everyone returns their {c} stones"}


def _text(card: str | None, customs: dict[str, str]) -> str:
    """A card's rules text: the box's (its data), or a custom card's own."""
    if card in RULES:
        return RULES[card]
    return customs.get(card, "").rstrip(".") or "use its power"


def prompt(v: dict[str, Any], names: list[str]) -> str | None:
    """The question of the decision in words, put to whoever decides (public: every seat sees the decision)."""
    kind = v["decision"]
    if kind is None:
        return None
    asks = v["asks"] or v["card"]
    template = _PROMPTS.get((kind, asks)) or _PROMPTS[(kind, None)]
    customs = {c["name"]: c["text"] for c in (v["deck"] or {}).get("custom", [])}
    return template.format(card=v["card"], asks=asks, text=_text(asks, customs), price=v["power"]["necromancer_price"])


def _stones(counts: list[int]) -> str:
    parts = [f"{k} {c}" for k, c in zip(counts, COLOURS, strict=True) if k]
    return joined(parts) + (" stone" if sum(counts) == 1 else " stones") if parts else "no stones"


def action_text(env: raw_env, action: int, names: list[str]) -> str:
    """An action of the seat deciding now, in words, other seats by name."""
    g = env.game
    actor = g.decision.player if g.decision is not None else 0
    option = A.decode(int(action), actor, env.num_players)
    kind, asks = option[0], None if g.decision is None else g.decision.card
    if kind == "pay":
        return f"pay {_stones(list(option[1:]))}"
    if kind == "take":
        power = RULES.get(asks, "")
        return f"{power.split('; or ')[1]} instead" if "; or " in power else _WORDS[("take", None)]
    if kind == "colour":
        return _COLOUR_WORDS.get(asks, "{c}").format(c=option[1])
    if kind == "target":
        victim = names[option[1]]
        return f"take {victim}'s common gold and silver" if asks == "Brigand" else f"take from {victim}"
    if kind == "steal":
        what = "a coin" if option[2] == "coin" else f"a {option[2]} stone"
        return f"{what} from {names[option[1]]}"
    if kind == "character":
        card = option[1] if env.deck is None else env.deck.card_name(option[1])
        return f"the {card}'s power"
    if kind in ("yes", "no", "draw", "stop"):
        return _WORDS.get((kind, asks)) or _WORDS.get((kind, None)) or kind
    return env.describe_action(int(action))


def groups(env: raw_env, seat: int, legal: np.ndarray, names: list[str]) -> list[dict[str, Any]]:
    """The legal actions of ``seat``'s decision: a bid builder for bids, buttons otherwise (in words)."""
    kind = env.game.decision.kind
    card = env.game.decision.card
    if kind == "bid":
        fields = [("fairy", "fairy gold"), ("common", "common gold"), ("black", "black coin"), ("amulet", "amulet")]
        b = builder(A.FAMILY["bid"], legal, fields, f"Your sealed bid for the {card}")
        if b is not None:
            return [b]
    if kind == "tiebreak":
        b = builder(A.FAMILY["tiebreak"], legal, [("silver", "silver"), ("amulet", "amulet")],
                    f"Your sealed tie-break bid for the {card}")
        if b is not None:
            return [b]
    out = button_groups(env, A.FAMILIES, legal, {})
    for group in out:
        group["title"] = "Your choice"
        for a in group["actions"]:
            a["text"] = action_text(env, a["action"], names)
    return out


# ---------------------------------------------------------------------------- the log, in sentences
_COINS = {"fairy": "fairy gold", "common": "common gold", "silver": "silver", "amulets": "amulet",
          "fairy_spent": "spent fairy gold"}


def _coins(amount: int, coin: str) -> str:
    word = _COINS.get(coin, coin)
    return f"{amount} {word}{'s' if coin == 'amulets' and amount != 1 else ''}"


def _bid(b: list[int]) -> str:
    f, c, black, amulet = b
    parts = ([f"{f} fairy"] if f else []) + ([f"{c} common"] if c else []) + (["black coin"] if black else []) \
        + (["amulet"] if amulet else [])
    return " + ".join(parts) or "nothing"


def _outcome(ev: dict[str, Any], names: list[str]) -> str:
    card, outcome = ev["card"], ev["outcome"]
    if outcome == "won":
        return f"{names[ev['winner']]} wins the {card}."
    if outcome == "cursed":
        return f"The {card} is cursed by a black coin: nobody uses its power."
    if outcome == "passed":
        return f"Nobody bid for the {card}: it is passed."
    return f"The tie for the {card} stands: nobody uses its power."


def _stole(ev: dict[str, Any], names: list[str]) -> str:
    who, victim, what = names[ev["player"]], names[ev["victim"]], ev["what"]
    if what in COLOURS:
        return f"{who} steals a {what} stone from {victim}."
    if what == "stones":
        return f"{who} takes {_stones(ev['stones'])} from {victim}."
    if what == "nothing":
        return f"{who} finds nothing to steal from {victim}."
    return f"{who} steals {_coins(ev.get('amount', 1), what)} from {victim}."


# event type -> its sentence (``who``: the player's name; ``n``: every name)
_SENTENCES: dict[str, Any] = {
    "setup": lambda ev, who, n: "Each player takes 8 fairy gold, 2 common gold, 5 silver and 4 stones: "
                                + "; ".join(f"{n[p]} {_stones(s)}" for p, s in enumerate(ev["stones"])) + ".",
    "turn": lambda ev, who, n: f"Turn {ev['turn']} begins; this turn's specials: {' and '.join(ev['specials'])}.",
    "auction": lambda ev, who, n: f"The {ev['card']} is up for auction.",
    "reveal": lambda ev, who, n: f"Bids for the {ev['card']}: " + "; ".join(
        f"{n[p]} {value} ({_bid(b)})" if any(b) else f"{n[p]} nothing"
        for p, (b, value) in enumerate(zip(ev["bids"], ev["values"], strict=True))) + ".",
    "tiebreak": lambda ev, who, n: f"{joined([n[p] for p in ev['players']])} tie for the {ev['card']}: "
                                   "they bid again in silver.",
    "tiebreak_reveal": lambda ev, who, n: f"Tie-break bids for the {ev['card']}: " + "; ".join(
        f"{n[int(p)]} {b[0]} silver" + (" + amulet" if b[1] else "") for p, b in ev["bids"].items()) + ".",
    "outcome": lambda ev, who, n: _outcome(ev, n),
    "power": lambda ev, who, n: f"{who} uses the {ev['card']}'s power.",
    "black_coin": lambda ev, who, n: f"{who} takes a black coin.",
    "took": lambda ev, who, n: f"{who} takes {_coins(ev['amount'], ev['coin'])}.",
    "took_stone": lambda ev, who, n: f"{who} takes {ev['amount']} {ev['colour']} stone{'s' * (ev['amount'] != 1)}.",
    "took_stones": lambda ev, who, n: f"{who} draws {_stones(ev['stones'])}.",
    "stole": lambda ev, who, n: _stole(ev, n),
    "robbed": lambda ev, who, n: f"{who} takes {_coins(ev['common'], 'common')} and {_coins(ev['silver'], 'silver')} "
                                 f"from {n[ev['victim']]}.",
    "paid_stones": lambda ev, who, n: f"{who} pays {_stones(ev['stones'])}.",
    "paid": lambda ev, who, n: f"{who} pays {_coins(ev['amount'], ev['coin'])}.",
    "score": lambda ev, who, n: f"{who} scores {ev['points']} point{'s' * (ev['points'] != 1)} "
                                f"({ev['total']} in all).",
    "declined": lambda ev, who, n: f"{who} declines the {ev['card']}'s offer.",
    "necromancer_pays": lambda ev, who, n: f"{who} pays the coins bid ({ev['fairy']} fairy gold) to the Necromancer.",
    "kept_doppelganger": lambda ev, who, n: f"{who} keeps the Doppelganger face up, to play it later.",
    "played_doppelganger": lambda ev, who, n: f"{who} plays the Doppelganger: the {ev['card']}'s power once more.",
    "ghost_copies": lambda ev, who, n: f"{who}'s Ghost uses the {ev['card']}'s power.",
    "goblin_draws": lambda ev, who, n: f"{who}'s Goblin draws the {ev['card']}.",
    "imp_picks": lambda ev, who, n: f"{who}'s Imp picks the {ev['card']}.",
    "merchant_stops": lambda ev, who, n: f"{who} stops buying.",
    "bought": lambda ev, who, n: f"{who} buys a {ev['colour']} stone with "
                                 + ("3 silver" if ev["coin"] == "silver" else f"1 {ev['coin']} gold") + ".",
    "rainbow_names": lambda ev, who, n: f"{who} names {ev['colour']} for the Rainbow Dragon.",
    "rainbow_draws": lambda ev, who, n: f"{who} draws a {ev['colour']} stone.",
    "rainbow_bust": lambda ev, who, n: f"{who} drew the named colour: every stone drawn goes back to the bank.",
    "rainbow_keeps": lambda ev, who, n: f"{who} keeps {_stones(ev['stones'])}.",
    "troll": lambda ev, who, n: f"{who} picks {ev['colour']}: every player returns their {ev['colour']} stones ("
                                + ", ".join(f"{n[p]} {k}" for p, k in enumerate(ev["lost"])) + ").",
    "reshuffle": lambda ev, who, n: f"The discarded specials are shuffled into a new pile ({ev['cards']} cards).",
    "end_turn": lambda ev, who, n: f"End of turn {ev['turn']}.",
    "no_effect": lambda ev, who, n: f"{ev['card']}: no effect for {who} ({ev['why']}).",
    "end": lambda ev, who, n: (f"The game stops after {ev['turn']} turns: nobody wins." if ev["reason"] == "truncated"
                               else " and ".join(n[p] for p in ev["winners"]) + " wins the game."),
}


def log_line(event: dict[str, Any], viewer: Any, names: list[str]) -> str | None:
    """One event as a sentence of the log ``viewer`` may read (a seat, "all" for the whole table,
    None for a spectator), or None when it is hidden or said by the events that follow.

    Only sealed choices are hidden (F43): a player's own bid is shown to that player alone.
    """
    kind = event.get(KIND_KEY)
    who = names[event["player"]] if isinstance(event.get("player"), int) else ""
    if kind == "start":
        return None
    if kind == "choice" and event.get("decision") in _SEALED:
        if viewer != "all" and event["player"] != viewer:
            return None
        option = event["option"]
        if option[0] == "tiebreak":
            return f"{who} seals a tie-break bid of {option[1]} silver" + (" + amulet." if option[2] else ".")
        return f"{who} seals a bid of {_bid(option[1:])}."
    if kind in ("choice", "auto"):
        return None  # the events that follow say what happened
    sentence = _SENTENCES.get(kind)
    return sentence(event, who, names) if sentence else event_text(event, KIND_KEY, names)


def outcome(env: raw_env, names: list[str]) -> dict[str, Any]:
    """The end of the game in words and points (F17, F18)."""
    g = env.game
    points = [pl.score for pl in g.players]
    winners = list(g.winners)
    others = "; ".join(f"{names[p]} {s}" for p, s in enumerate(points) if p not in winners)
    if winners:
        text = (f"{joined([names[w] for w in winners])} wins with {points[winners[0]]} points "
                f"(the first to {WIN_SCORE}). " + (f"The others: {others}." if others else ""))
    else:
        text = (f"Nobody wins: the game stopped after {g.turn} turns before anyone reached {WIN_SCORE} points "
                f"(F18). Points: {others}.")
    return {"winners": winners, "points": points, "unit": "points", "truncated": bool(g.truncated),
            "text": text.strip()}


def headline(v: dict[str, Any]) -> str:
    """One line for the terminal: turn, decision and the character it is about (and who asks)."""
    card = f" - {v['card']}" if v["card"] else ""
    if v["asks"] and v["asks"] != v["card"]:
        card += f" ({v['asks']} asks)"
    return f"Turn {v['turn']}/{v['max_turns']}: {(v['decision'] or 'game over').replace('_', ' ')}{card}"


def seat_line(v: dict[str, Any], p: int) -> str:
    """One seat for the terminal: score, stones, coins (or '?' behind a screen), sealed bid."""
    pl = v["players"][p]
    coins = " ".join(f"{'?' if pl[c] is None else pl[c]}{c[0]}" for c in ("fairy", "common", "silver"))
    extra = (" black" if pl["black"] else "") + (" amulet" if pl["amulets"] else "") + \
        (" [sealed]" if pl["has_bid"] else "")
    return f"score {pl['score']}/{v['win_score']}  stones {pl['red']}r {pl['blue']}b {pl['yellow']}y  {coins}{extra}"


PRESENTER = Presenter(
    how_to=HOW_TO, kind_key=KIND_KEY, input_events=INPUT_EVENTS, env_for_record=env_for_record, encode=encode,
    rules=rules, goal=goal, view=view, public_view=public_view, hidden=hidden, race=race, prompt=prompt,
    action_text=action_text, groups=groups, log_line=log_line, outcome=outcome, headline=headline,
    seat_line=seat_line, table_options=TABLE_OPTIONS, option=option, make_env=make_env,
)
