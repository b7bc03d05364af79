"""DrachenSchatten in the app: its env, what one seat sees, its actions, its log.

Every value shown to a seat comes from that seat's observation (``observation.decode``) and
action mask; only :func:`hidden` (the whole-table view of a replay) reads the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dragonstones_env.games.drachenschatten import actions as A
from dragonstones_env.games.drachenschatten.cards import CARD_NAMES, CARDS
from dragonstones_env.games.drachenschatten.env import raw_env
from dragonstones_env.games.drachenschatten.observation import SEAT_TOTALS, decode
from dragonstones_env.games.drachenschatten.rules import replay as engine_replay

from .common import absolute, button_groups, event_text, plain

GAME_ID = "drachenschatten"  # the game it draws: its registry id, the name the API and records use
TITLE = "DrachenSchatten"
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = raw_env.MIN_PLAYERS, raw_env.MAX_PLAYERS, 3
ENV_NAME = raw_env.metadata["name"]
POLICY_GAMES = ("drachenschatten", ENV_NAME)
DEFAULT_OPPONENT = "ds-heuristic"
KIND_KEY = "event"
INPUT_EVENTS = ("option",)
_TITLES = {
    "pick": "Opening pick", "turn_over": "Turn over a card", "use_view": "Use a torch",
    "use_turn_over": "Extra turn-over", "use_trade": "Trade", "use_steal": "Steal", "use_destroy": "Destroy",
    "use_decay": "Decay", "use_restore": "Restore", "end_turn": "End the turn", "view": "Look at a stack",
    "stop_view": "Stop looking", "protect": "Protect", "forfeit": "Forfeit",
}
_SECRET = ("view",)  # decisions whose choice (the stack looked at) only the chooser knows (D4)


ENV_OPTIONS = ()  # no env option a new table may set


def make_env(num_players: int) -> raw_env:
    return raw_env(num_players=num_players)


def is_record(record: list) -> bool:
    return isinstance(record[0], dict) and record[0].get("event") == "start"


def check_record(record: list) -> Any:
    return engine_replay(record)


def env_for_record(start: dict[str, Any]) -> raw_env:
    env = raw_env(num_players=start["num_players"], max_steps=start["max_steps"])
    env.reset(seed=start["seed"])
    return env


def encode(option: list, actor: int, num_players: int) -> int:
    return A.encode(tuple(option), actor, num_players)


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
        "decision": d["decision"],
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


def hidden(env: raw_env) -> dict[str, Any]:
    """The whole table of a replay: every stack's cards (top first) and every torch memory."""
    state = env.game.debug_state()
    return {
        "stack_cards": [[CARD_NAMES[t] for t in s] for s in state["stack_cards"]],
        "memories": [{s: CARD_NAMES[t] for s, t in m.items()} for m in state["memories"]],
    }


def race(v: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The race to the D6 wins: object kinds towards 7, beasts towards 3, treasures towards 3."""
    return [[{"label": "kinds", "value": p["kinds"], "target": 7},
             {"label": "beasts", "value": p["beasts"], "target": 3},
             {"label": "treasures", "value": p["treasures"], "target": 3}] for p in v["players"]]


_STACK_FAMILIES = ("pick", "turn_over", "view")  # decisions that name one stack: clickable on the table


def groups(env: raw_env, seat: int, legal: np.ndarray) -> list[dict[str, Any]]:
    """Buttons per action family; an action about one stack also names it, so the page can make
    that stack clickable."""
    out = button_groups(env, A.FAMILIES, legal, _TITLES)
    for group in out:
        if group["family"] in _STACK_FAMILIES:
            for a in group["actions"]:
                a["stack"] = A.decode(a["action"], seat, env.num_players)[1]
    return out


def log_line(event: dict[str, Any], viewer: int | None, names: list[str]) -> str | None:
    """One event as a line of the log ``viewer`` may read (None: all events), or None when hidden.

    A torch's stacks and the cards seen are the viewer's alone (D4); test arrangements are hidden.
    """
    kind = event.get("event")
    who = names[event["player"]] if isinstance(event.get("player"), int) else ""
    if kind in ("start", "arrange"):
        return None
    if kind == "view" or (kind in ("option", "auto") and event.get("decision") in _SECRET):
        if viewer is not None and event.get("player") != viewer:
            return None
        if kind == "view":
            return f"{who} sees {CARD_NAMES[event['card']]} on stack {event['stack']}"
        return None
    if kind in ("option", "auto"):
        return None  # the effects that follow say what happened, in words
    if kind == "turn":
        return f"Turn {event['turn']}: {who}"
    if kind in ("pick", "turn_over"):
        verb = "picks" if kind == "pick" else "turns over"
        return f"{who} {verb} {CARD_NAMES[event['card']]} (stack {event['stack']})"
    if kind == "use":
        return f"{who} uses {CARD_NAMES[event['card']]}"
    if kind == "battle":
        return f"{who} fights a {CARD_NAMES[event['beast']]}: " + ("protected" if event.get("won") else "loses")
    if kind == "end":
        won = ", ".join(names[p] for p in event["winners"]) or "nobody"
        return f"Game over ({event['reason']}): {won} wins"
    return event_text(event, "event", names)


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
