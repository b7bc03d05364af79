"""Fist of Dragonstones in the app: its env, what one seat sees, its actions, its log.

Every value shown to a seat comes from that seat's observation (``observation.decode``) and
action mask; only :func:`hidden` (the whole-table view of a replay) reads the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dragonstones_env.games.fist import actions as A
from dragonstones_env.games.fist import custom
from dragonstones_env.games.fist.cards import CHARACTER_SLOTS
from dragonstones_env.games.fist.env import raw_env
from dragonstones_env.games.fist.observation import SEAT_FEATURES, decode

from .common import absolute, builder, button_groups, event_text, plain

GAME_ID = "dragonstones"  # the game it draws: its registry id, the name the API and records use
TITLE = "Fist of Dragonstones"
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = raw_env.MIN_PLAYERS, raw_env.MAX_PLAYERS, 4
ENV_NAME = raw_env.metadata["name"]
# The names bots give as their ``game`` (the heuristic says "dragonstones", checkpoints their env).
POLICY_GAMES = ("dragonstones", ENV_NAME)
DEFAULT_OPPONENT = "heuristic"
KIND_KEY = "type"  # the key naming an event's kind in this engine's records
INPUT_EVENTS = ("choice",)
_SEALED = ("bid", "tiebreak")  # decisions whose choice stays secret until the reveal (F43)
_TITLES = {f.name: f.help.split(" (")[0] for f in A.FAMILIES}
# Env options a new table may set (the custom deck, issue #16; docs/custom-characters.md).
ENV_OPTIONS = ("characters", "exclude")


def make_env(num_players: int, **options: Any) -> raw_env:
    """A table; ``options`` are the env's (checked by it). A ``characters`` file must be YAML or TOML:
    the server reads no other file of its disk (an error would quote it)."""
    chars = options.get("characters")
    if isinstance(chars, str) and not chars.lower().endswith((".yaml", ".yml", ".toml")) \
            and chars not in custom.PYTHON_CHARACTERS:
        raise ValueError(f"characters: {chars[:200]!r} is neither a .yaml, .yml or .toml file nor a registered "
                         "Python character")
    return raw_env(num_players=num_players, **options)


def is_record(record: list) -> bool:
    """Whether a record's first event is this engine's start event."""
    return isinstance(record[0], dict) and record[0].get("type") == "start"


def check_record(record: list) -> Any:
    """The engine's own replay check (raises ReplayError naming the first bad event); a custom
    deck in the start event is rebuilt (a card this process does not know is refused)."""
    return custom.replay(record)


def env_for_record(start: dict[str, Any]) -> raw_env:
    deck = custom.Deck.from_dict(start["deck"]) if "deck" in start else None
    options = {} if deck is None else {"characters": list(deck.custom), "exclude": list(deck.exclude)}
    env = raw_env(num_players=start["num_players"], max_turns=start["max_turns"], **options)
    env.reset(seed=start["seed"])
    return env


def encode(option: list, actor: int, num_players: int) -> int:
    return A.encode(tuple(option), actor, num_players)


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
    return {
        "turn": round(d["progress"]["turn_fraction"] * max_turns),
        "max_turns": max_turns,
        "decision": d["decision"],  # the kind, named by what is chosen (decisions.KINDS)
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
    """The score race: points towards 3, per seat."""
    return [[{"label": "points", "value": p["score"], "target": 3}] for p in v["players"]]


def groups(env: raw_env, seat: int, legal: np.ndarray) -> list[dict[str, Any]]:
    """The legal actions of ``seat``'s decision: a bid builder for bids, buttons otherwise."""
    kind = env.game.decision.kind
    if kind == "bid":
        b = builder(A.FAMILY["bid"], legal, [("fairy", "fairy gold"), ("common", "common gold"),
                                             ("black", "black coin"), ("amulet", "amulet")], "Your sealed bid")
        if b is not None:
            return [b]
    if kind == "tiebreak":
        b = builder(A.FAMILY["tiebreak"], legal, [("silver", "silver"), ("amulet", "amulet")],
                    "Your sealed tie-break bid")
        if b is not None:
            return [b]
    return button_groups(env, A.FAMILIES, legal, _TITLES)


def log_line(event: dict[str, Any], viewer: int | None, names: list[str]) -> str | None:
    """One event as a line of the log ``viewer`` may read (None: all events), or None when hidden.

    Only sealed choices are hidden (F43): a player's own bid is shown to that player alone.
    """
    kind = event.get("type")
    who = names[event["player"]] if isinstance(event.get("player"), int) else ""
    if kind in ("start",):
        return None
    if kind == "choice" and event.get("decision") in _SEALED:
        if viewer is not None and event["player"] != viewer:
            return None
        return f"{who} sealed {event['decision']} {event['option'][1:]}"
    if kind == "turn":
        return f"Turn {event['turn']}: specials {', '.join(event['specials'])}"
    if kind == "auction":
        return f"Auction: {event['card']}"
    if kind == "reveal":
        values = ", ".join(f"{names[p]} {v}" for p, v in enumerate(event["values"]))
        return f"{event['card']}: bids revealed ({values})"
    if kind == "outcome":
        w = event.get("winner")
        return f"{event['card']}: " + (f"won by {names[w]}" if w is not None else event["outcome"])
    if kind == "score":
        return f"{who} scores {event['points']} (total {event['total']})"
    if kind == "win":
        return f"{who} wins the game"
    if kind == "took_stone":
        return f"{who} takes {event['amount']} {event['colour']} stone"
    return event_text(event, "type", names)



def headline(v: dict[str, Any]) -> str:
    """One line for the terminal: turn, decision and the character it is about (and who asks)."""
    card = f" - {v['card']}" if v["card"] else ""
    if v["asks"] and v["asks"] != v["card"]:
        card += f" ({v['asks']} asks)"
    return f"Turn {v['turn']}/{v['max_turns']}: {v['decision'] or 'game over'}{card}"


def seat_line(v: dict[str, Any], p: int) -> str:
    """One seat for the terminal: score, stones, coins (or '?' behind a screen), sealed bid."""
    pl = v["players"][p]
    coins = " ".join(f"{'?' if pl[c] is None else pl[c]}{c[0]}" for c in ("fairy", "common", "silver"))
    extra = (" black" if pl["black"] else "") + (" amulet" if pl["amulets"] else "") + \
        (" [sealed]" if pl["has_bid"] else "")
    return f"score {pl['score']}/3  stones {pl['red']}r {pl['blue']}b {pl['yellow']}y  {coins}{extra}"
