"""Terminal play with ``rich``: ``dragonstones play --game dragonstones --players 4 --opponents champion``.

The same table as the browser's (:class:`dragonstones_env.play.table.LiveGame`, bots at pace 0): what your
seat sees, from its observation, then your decision. A bid is typed as tokens such as ``3f 1c b a``
(3 fairy gold, 1 common gold, the black coin, the amulet; ``2s a`` for a tie-break: 2 silver and
the amulet; an empty line bids nothing); any other decision is a number from the list. Works over
SSH and with piped input (``printf '2f\\n1\\n' | dragonstones play``); ``q`` or the end of the input quits.
``--record game.json`` saves the finished game as the browser table's Save record does, the file
``dragonstones replay game.json --gif game.gif`` draws (a quit game saves none: its record holds
the seed, which tells every hidden card).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.table import Table

from dragonstones_env.registry import Presenter

from .refusals import Refused
from .sources import HUMAN
from .table import LiveGame, shown

# bid tokens: a count and a letter (f fairy, c common, s silver), or a bare b (black coin) / a (amulet)
_TOKEN = re.compile(r"^(\d*)([fcsba])$")
_LETTER = {"f": "fairy", "c": "common", "s": "silver", "b": "black", "a": "amulet"}


def parse_bid(text: str, fields: list[dict[str, Any]]) -> dict[str, int]:
    """``"3f 1c b a"`` -> ``{"fairy": 3, "common": 1, "black": 1, "amulet": 1}``, checked against the
    builder's fields (each at most its maximum); a ValueError says what is wrong."""
    limits = {f["name"]: f["max"] for f in fields}
    values = dict.fromkeys(limits, 0)
    for token in text.lower().replace(",", " ").split():
        m = _TOKEN.match(token)
        if m is None:
            raise ValueError(f"{token!r} is not a bid token (like 3f, 1c, 2s, b, a)")
        name = _LETTER[m.group(2)]
        if name not in limits:
            raise ValueError(f"{token!r}: this bid has no {name} (it takes {', '.join(limits)})")
        values[name] = int(m.group(1) or 1)
    for name, v in values.items():
        if v > limits[name]:
            raise ValueError(f"at most {limits[name]} {name} here, not {v}")
    return values


def _show(console: Console, state: dict[str, Any], show: Presenter) -> None:
    v = state["view"]
    table = Table(title=f"{state['title']} - {show.headline(v)}", show_lines=False, expand=False)
    table.add_column("seat")
    table.add_column("what you see")
    for p, name in enumerate(state["names"]):
        mark = ">" if state["actor"] == p else " "
        who = " (you)" if p == state["seat"] else f" ({state['seats'][p]})"
        table.add_row(f"{mark} {name}{who}", show.seat_line(v, p))
    console.print(table)
    for line in state["log"][-6:]:
        console.print(f"  [dim]{line}[/dim]")
    if state["prompt"] and state["actions"]:
        console.print(f"[bold]{state['prompt']}[/bold]")


def _choose(console: Console, state: dict[str, Any], read: Any) -> int | None:
    """The action index of the human's choice, asked until it is valid; None to quit."""
    groups = state["actions"]
    builder = next((g for g in groups if g["kind"] == "builder"), None)
    if builder is not None:
        fields = [f for f in builder["fields"] if f["max"] > 0]
        hint = ", ".join(f"{f['label']} <= {f['max']}" for f in fields) or "only the empty fist"
        while True:
            text = read(f"{builder['title']} ({hint}; e.g. 3f 1c b a, empty for nothing): ")
            if text is None or text.strip() == "q":
                return None
            try:
                values = parse_bid(text, builder["fields"])
            except ValueError as err:
                console.print(f"[red]{err}[/red]")
                continue
            return builder["base"] + sum(values[f["name"]] * f["stride"] for f in builder["fields"])
    options = [a for g in groups for a in g["actions"]]
    for k, a in enumerate(options, 1):
        console.print(f"  {k:>3}. {a['text']}")
    while True:
        text = read(f"choose 1-{len(options)}: ")
        if text is None or text.strip() == "q":
            return None
        if text.strip().isdigit() and 1 <= int(text) <= len(options):
            return options[int(text) - 1]["action"]
        console.print(f"[red]type a number from 1 to {len(options)} (or q to quit)[/red]")


def play(game: str = "dragonstones", players: int | None = None, opponents: list[str] | None = None, seat: int = 0,
         seed: int | None = None, stdin: IO[str] | None = None, console: Console | None = None,
         record: str | Path | None = None) -> int:
    """Play one game in the terminal; returns an exit code (0 played to the end, 1 quit, 2 refused).
    With ``record``, the finished game's record is saved there."""
    console = console or Console()
    stdin = stdin or sys.stdin
    if record is not None and not Path(record).resolve().parent.is_dir():
        console.print(f"[red]--record {record}: the folder {Path(record).resolve().parent} does not exist[/red]")
        return 2

    def save() -> None:
        if record is not None:
            Path(record).write_text(json.dumps(table.saved()))
            console.print(f"record saved to {record} (dragonstones replay {record} --gif game.gif)")

    def read(prompt: str) -> str | None:
        console.print(prompt, end="")
        line = stdin.readline()
        if not line:
            return None
        if not stdin.isatty():
            console.print(line.rstrip("\n"))  # echo piped input, so a transcript reads like a session
        return line.rstrip("\n")

    try:
        spec = shown(game)  # an unknown game: the registry's error names the known ones
        n = spec.check_players(spec.default_players if players is None else players, "--players")
        others = opponents or [spec.default_bot]
        if len(others) not in (1, n - 1):
            raise Refused(f"--opponents takes one spec for every other seat or {n - 1} specs, not {len(others)}")
        specs = iter(others * (n - 1) if len(others) == 1 else others)
        if not 0 <= seat < n:
            raise Refused(f"--seat must be from 0 to {n - 1}")
        table = LiveGame({"game": spec.id, "players": n, "seed": seed, "pace_ms": 0,
                          "seats": [HUMAN if i == seat else next(specs) for i in range(n)]})
    except ValueError as err:  # a refusal, an unknown game or table size: the message says what to fix
        console.print(f"[red]{err}[/red]")
        return 2
    while True:
        state = table.state(seat)
        _show(console, state, spec.presenter)
        if state["result"] is not None:
            console.print(f"[bold]Game over: {state['result']['text']}[/bold]")
            save()
            return 0
        action = _choose(console, state, read)
        if action is None:
            console.print("quit" + ("; no record saved (a game's record is saved once it is over)" if record else ""))
            return 1
        try:
            table.act(seat, {"action": action})
        except Refused as err:  # never expected: the choices offered are the legal ones
            console.print(f"[red]{err}[/red]")
            continue
        table.advance()
