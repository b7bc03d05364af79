"""DrachenSchatten shown to people (its :class:`~dragonstones_env.registry.Presenter`, for the web app, the
terminal and GIFs): what one seat sees, its actions, its log, in words.

Every value shown to a seat comes from that seat's observation (``observation.decode``) and
action mask; a spectator's (:func:`public_view`) from what every seat sees alike; only
:func:`hidden` (the whole-table view of a replay) reads the engine. The cards' rules text is the
game's data (:data:`cards.SYMBOL_TEXT`), seats are named by player.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from dragonstones_env.core.records import KIND_KEY
from dragonstones_env.presenting import absolute, button_groups, event_text, joined, plain
from dragonstones_env.registry import Presenter

from . import actions as A
from .cards import CARD_NAMES, CARDS, SYMBOL_TEXT
from .env import raw_env
from .observation import SEAT_TOTALS, decode

# How to play, for a first-time player (the setup page and an invitee's first screen)
HOW_TO = (
    "First everyone picks an opening card from a village stack (top row).",
    "On your turn, use any ready objects, turn over exactly one top card of a stack (click it), then "
    "end your turn.",
    "A dragon or hydra attacks at once: protect yourself with a ready object against it, or lose "
    "the beast and your whole collection.",
    "Seven different object kinds, three beasts or three treasures win at once; when every stack "
    "is empty, the most cards win. Tap a card, or focus it and press Enter, to read what it does.",
)
INPUT_EVENTS = ("option",)
_TITLES = {
    "pick": "Opening pick", "turn_over": "Turn over a card", "use_view": "Use a torch",
    "use_turn_over": "Extra turn-over", "use_trade": "Trade", "use_steal": "Steal", "use_destroy": "Destroy",
    "use_decay": "Decay", "use_restore": "Restore", "end_turn": "End the turn", "view": "Look at a stack",
    "stop_view": "Stop looking", "protect": "Protect", "forfeit": "Forfeit",
}
_SECRET = ("view",)  # decisions whose choice (the stack looked at) only the chooser knows (D4)
WIN = {"kinds": 7, "beasts": 3, "treasures": 3}  # D6
_REASONS = {"seven_kinds": "seven different object kinds", "three_beasts": "three beasts",
            "three_treasures": "three treasures"}


def env_for_record(start: dict[str, Any]) -> raw_env:
    env = raw_env(num_players=start["num_players"], max_steps=start["max_steps"])
    env.reset(seed=start["seed"])
    return env


def encode(option: list, actor: int, num_players: int) -> int:
    return A.encode(tuple(option), actor, num_players)


_RULING = re.compile(r"\s*\(D\d+\)")  # a ruling's number: for the code and its readers, not for players


def rules() -> dict[str, str]:
    """Every card type's rules text, by name: its action symbol's (objects), or the beast's or treasure's."""
    out = {}
    for c in CARDS:
        if c.category == "object":
            out[c.name] = f"{c.kind} (an object kind): {_RULING.sub('', SYMBOL_TEXT[c.action])}"
        else:
            out[c.name] = _RULING.sub("", SYMBOL_TEXT[c.beast or c.name])
    return out


def goal(env: raw_env) -> str:
    return ("Seven different object kinds, three beasts or three treasures win at once; when every stack "
            "is empty, the most cards wins.")


def _stack(s: int) -> str:
    return f"{'village' if s < 8 else 'caves'} stack {s % 8 + 1}"


def view(env: raw_env, seat: int) -> dict[str, Any]:
    """What ``seat`` sees, from its observation, seats made absolute."""
    n = env.num_players
    d = decode(env.observe(env.possible_agents[seat])["observation"])
    players = []
    for p in range(n):
        r = (p - seat) % n
        collection = []
        for t, c in enumerate(CARDS):
            ready, other = round(d["collection"]["ready"][r][t]), round(d["collection"]["other"][r][t])
            if ready or other:
                collection.append({"type": t, "name": c.name, "category": c.category, "ready": ready, "other": other})
        players.append({
            "collection": collection,
            **{k: plain(d["totals"][k][r]) for k in SEAT_TOTALS},
            "forfeit": bool(d["forfeits"][r]),
        })
    card = d["card"]
    return {
        "turn": plain(d["progress"]["turn"]),
        "decision": None if d["decision"] in (None, "none") else d["decision"],
        "card": None if card is None else CARD_NAMES[card],
        "acting": absolute(d["acting_seat"], seat, n),
        "active": absolute(d["active_seat"], seat, n),
        "first": absolute(d["first_player"], seat, n),
        "turned_over": bool(d["turned_over"][0]),
        "view_left": plain(d["view_left"][0]),
        "stacks": [round(x) for x in d["stacks"]],
        "removed": plain(d["removed"][0]),
        "removed_cards": {CARD_NAMES[t]: round(c) for t, c in enumerate(d["removed_cards"]) if c > 0.5},
        "players": players,
        "memory": [None if t is None else CARD_NAMES[t] for t in d["memory"]],
    }


def public_view(env: raw_env) -> dict[str, Any]:
    """What a spectator sees: a seat's view without its torch memory, the only private piece (D4)."""
    v = view(env, 0)
    v["memory"] = [None] * len(v["memory"])
    return v


def hidden(env: raw_env) -> dict[str, Any]:
    """The whole table of a replay: every stack's cards (top first) and every torch memory."""
    state = env.game.debug_state()
    return {
        "stack_cards": [[CARD_NAMES[t] for t in s] for s in state["stack_cards"]],
        "memories": [{s: CARD_NAMES[t] for s, t in m.items()} for m in state["memories"]],
    }


def race(v: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The race to the D6 wins: object kinds towards 7, beasts towards 3, treasures towards 3."""
    return [[{"label": k, "value": p[k], "target": target} for k, target in WIN.items()] for p in v["players"]]


_PROMPTS = {
    "pick": "Pick an opening card: the top card of a village stack",
    "turn": "Use ready objects, turn over exactly one top card, then end the turn",
    "view": "Look at a stack's top card with the torch ({left} more at most; D4)",
    "protect": "A beast attacks: which ready object protects against it?",
    "forfeit": "Decay: remove one of your used objects from the game",
}


def prompt(v: dict[str, Any], names: list[str]) -> str | None:
    """The question of the decision in words, put to whoever decides (public)."""
    if v["decision"] is None or v["acting"] is None:
        return None
    return _PROMPTS.get(v["decision"], "Decide").format(left=v["view_left"])


_STACK_FAMILIES = ("pick", "turn_over", "view")  # decisions that name one stack: clickable on the table


def action_text(env: raw_env, action: int, names: list[str]) -> str:
    """An action of the seat deciding now, in words, other players by name."""
    g = env.game
    actor = g.decision.player if g.decision is not None else 0
    family = A.family_of(int(action)).name
    option = A.decode(int(action), actor, env.num_players)
    if family in ("pick", "turn_over", "view"):
        verb = {"pick": "pick", "turn_over": "turn over", "view": "look at"}[family]
        return f"{verb} the top card of {_stack(option[1])}"
    if family == "use_turn_over":
        return f"use {CARD_NAMES[option[1]]}: turn over the top card of {_stack(option[2])}"
    if family == "use_trade":
        own = "this card" if option[2] == option[1] else f"your used {CARD_NAMES[option[2]]}"
        return f"use {CARD_NAMES[option[1]]}: give {own} to {names[option[3]]} for their used {CARD_NAMES[option[4]]}"
    if family == "use_steal":
        return f"use {CARD_NAMES[option[1]]}: take {names[option[2]]}'s used {CARD_NAMES[option[3]]}"
    if family == "use_destroy":
        return f"use {CARD_NAMES[option[1]]}: destroy {names[option[2]]}'s used {CARD_NAMES[option[3]]}"
    return env.describe_action(int(action))


def groups(env: raw_env, seat: int, legal: np.ndarray, names: list[str]) -> list[dict[str, Any]]:
    """Buttons per action family, in words; an action about one stack also names it, so the page can
    make that stack clickable."""
    out = button_groups(env, A.FAMILIES, legal, _TITLES)
    for group in out:
        for a in group["actions"]:
            a["text"] = action_text(env, a["action"], names)
            if group["family"] in _STACK_FAMILIES:
                a["stack"] = A.decode(a["action"], seat, env.num_players)[1]
    return out


def _use(event: dict[str, Any], who: str, names: list[str]) -> str:
    card, action = CARD_NAMES[event["card"]], event["action"]
    if action == "trade":
        return (f"{who} uses {card}: gives their used {CARD_NAMES[event['gave']]} to {names[event['other']]} "
                f"for their used {CARD_NAMES[event['got']]}.")
    if action == "steal":
        return f"{who} uses {card}: takes {names[event['other']]}'s used {CARD_NAMES[event['got']]}."
    if action == "destroy":
        return f"{who} uses {card}: destroys {names[event['other']]}'s used {CARD_NAMES[event['target']]}."
    if action == "restore":
        return f"{who} uses {card}: their used {CARD_NAMES[event['target']]} is ready again."
    if action == "decay":
        return f"{who} uses {card}: every other player removes one of their used objects."
    if action == "turn-over":
        return f"{who} uses {card} to turn over one more card."
    return f"{who} uses {card} to look at stacks in secret."


def _end(event: dict[str, Any], names: list[str]) -> str:
    won = joined([names[p] for p in event["winners"]]) or "nobody"
    reason = event["reason"]
    if reason in _REASONS:
        return f"{won} wins with {_REASONS[reason]}."
    if reason == "stacks_empty":
        return f"Every stack is empty: {won} wins with the most cards."
    return "The game stops at its step limit: nobody wins."


def log_line(event: dict[str, Any], viewer: Any, names: list[str]) -> str | None:
    """One event as a sentence of the log ``viewer`` may read (a seat, "all" for the whole table,
    None for a spectator), or None when it is hidden or said by the events that follow.

    A torch's stacks and the cards seen are the viewer's alone (D4); test arrangements are hidden.
    """
    kind = event.get("event")
    who = names[event["player"]] if isinstance(event.get("player"), int) else ""
    if kind in ("start", "arrange", "option", "auto"):
        return None  # the events that follow say what happened (a torch's choices are secret, D4)
    if kind == "view":
        if viewer != "all" and event.get("player") != viewer:
            return None
        return f"{who} sees {CARD_NAMES[event['card']]} on {_stack(event['stack'])}."
    if kind == "setup":
        return f"{names[event['first_player']]} plays first (drawn at random)."
    if kind == "turn":
        return f"Turn {event['turn']}: {who}'s turn."
    if kind == "pick":
        return f"{who} picks {CARD_NAMES[event['card']]} from {_stack(event['stack'])}."
    if kind == "turn_over":
        return f"{who} turns over {CARD_NAMES[event['card']]} on {_stack(event['stack'])}."
    if kind == "use":
        return _use(event, who, names)
    if kind == "battle":
        beast = CARD_NAMES[event["beast"]]
        if event.get("won"):
            return f"{who} fights the {beast} with {CARD_NAMES[event['protect']]} and keeps it."
        lost = len(event.get("lost") or [])
        return f"{who} fights the {beast} unprotected and loses it with their whole collection ({lost} cards)."
    if kind == "forfeit":
        return f"{who} removes their used {CARD_NAMES[event['card']]} from the game (decay)."
    if kind == "end":
        return _end(event, names)
    return event_text(event, "event", names)


def outcome(env: raw_env, names: list[str]) -> dict[str, Any]:
    """The end of the game in words, and each player's cards (D6, D7)."""
    g = env.game
    state = g.state_dict()
    points = [p["cards"] for p in state["players"]]
    winners = list(state["winners"])
    reason = state["end_reason"]
    text = _end({"winners": winners, "reason": reason}, names)
    others = "; ".join(f"{names[p]} {k}" for p, k in enumerate(points))
    return {"winners": winners, "points": points, "unit": "cards", "truncated": bool(state["truncated"]),
            "text": f"{text} Cards collected: {others}."}


def headline(v: dict[str, Any]) -> str:
    """One line for the terminal: turn, decision, and the stacks' heights."""
    card = f" - {v['card']}" if v["card"] else ""
    seen = ", ".join(f"stack {s}: {t}" for s, t in enumerate(v["memory"]) if t)
    return (f"Turn {v['turn']}: {v['decision'] or 'game over'}{card}   stacks village "
            f"{' '.join(map(str, v['stacks'][:8]))} | caves {' '.join(map(str, v['stacks'][8:]))}"
            + (f"   you saw {seen}" if seen else ""))


def seat_line(v: dict[str, Any], p: int) -> str:
    """One seat for the terminal: its collection (used objects in brackets) and its race."""
    pl = v["players"][p]
    names: list[str] = []
    for c in pl["collection"]:
        names += [c["name"]] * c["ready"] + [f"({c['name']})"] * c["other"]
    cards = ", ".join(names)
    return f"{pl['kinds']} kinds {pl['beasts']} beasts {pl['treasures']} treasures: {cards or '-'}"


# No env option a new table may set (the Presenter's default ``table_options``).
PRESENTER = Presenter(
    how_to=HOW_TO, kind_key=KIND_KEY, input_events=INPUT_EVENTS, env_for_record=env_for_record, encode=encode,
    rules=rules, goal=goal, view=view, public_view=public_view, hidden=hidden, race=race, prompt=prompt,
    action_text=action_text, groups=groups, log_line=log_line, outcome=outcome, headline=headline,
    seat_line=seat_line,
)
