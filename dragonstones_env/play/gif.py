"""``dragonstones replay RECORD --gif out.gif``: a game record as an animation, one frame per decision.

The record (the engine's JSON list, or a file saved by the app) is read up to
``FILE_BYTES["record"]`` bytes (dragonstones_env/bounds.py: 16 MB; ``/dev/zero`` stops there), then
checked by the engine's replay before anything is drawn; each frame is the env's ``rgb_array``
picture from one seat, or with ``--seat all`` every seat's picture side by side at half size (what
each player saw at that moment). Frames are drawn and written one at a time (:func:`write_gif`),
so a long record needs the memory of two frames, not of all of them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from dragonstones_env.bounds import FILE_BYTES, InputError, check, read_text_limited

from .refusals import Refused
from .table import parse_record

ALL = "all"  # --seat all: every seat's view in one frame
MAX_RECORD_BYTES = FILE_BYTES["record"]


def tile(pictures: list[np.ndarray]) -> np.ndarray:
    """Seats' pictures at half size in a grid (2 columns up to 4 seats, 3 beyond), seat 0 top left."""
    small = [p[::2, ::2] for p in pictures]
    cols = 2 if len(small) <= 4 else 3
    rows = -(-len(small) // cols)
    h, w, _ = small[0].shape
    out = np.full((rows * h, cols * w, 3), 255, np.uint8)
    for i, p in enumerate(small):
        out[(i // cols) * h:(i // cols + 1) * h, (i % cols) * w:(i % cols + 1) * w] = p
    return out


def frames(record_body: object, seat: int | str) -> Iterator[np.ndarray]:
    """The pictures of a record's game from ``seat`` (or ``"all"`` seats), before each decision and at
    the end, one at a time (a long record's frames are never all held: about 1.2 MB each). The record
    and the seat are checked here, before the first picture is drawn."""
    spec, record, _, _ = parse_record(record_body)
    show = spec.presenter
    start = record[0]
    n = start["num_players"]
    if seat != ALL and not 0 <= seat < n:
        raise Refused(f"seat must be from 0 to {n - 1} (or all) for this {n}-player record, got {seat}")
    env = show.env_for_record(start)

    def picture() -> Any:
        return tile([env.picture(s) for s in range(n)]) if seat == ALL else env.picture(seat)

    def each() -> Iterator[np.ndarray]:
        yield picture()
        for ev in record:
            if ev.get(show.kind_key) in show.input_events:
                env.step(show.encode(ev["option"], ev["player"], n))
                yield picture()

    return each()


def write_gif(path: str, pictures: Iterable[np.ndarray], ms: int, last_ms: int) -> int:
    """Write ``pictures`` (RGB arrays of one size) to an endless GIF one frame at a time, each shown
    ``ms`` and the last ``last_ms``; a frame identical to the one before lengthens it instead (as
    Pillow's ``save_all`` does). At most two frames are held, where ``save_all`` keeps every one
    until the end (issue #49: 600 frames took 1.95 GB). Each frame after the first carries its own
    colour table (Pillow's GIF writer, one image at a time). Returns the frames written."""
    from PIL import GifImagePlugin, Image

    written = 0
    with open(path, "wb") as out:

        def put(picture: np.ndarray, duration: int) -> None:
            nonlocal written
            image = Image.fromarray(picture).convert("P", palette=Image.Palette.ADAPTIVE)
            if written == 0:
                header, _ = GifImagePlugin.getheader(image, None, {"loop": 0, "duration": duration})
                out.write(b"".join(header))
            for chunk in GifImagePlugin.getdata(image, (0, 0), duration=duration, include_color_table=written > 0):
                out.write(chunk)
            written += 1

        held, duration = None, 0
        for picture in pictures:
            if held is not None and np.array_equal(held, picture):
                duration += ms
                continue
            if held is not None:
                put(held, duration)
            held, duration = picture, ms
        if held is not None:
            put(held, max(duration, last_ms))
        out.write(b";")  # the GIF trailer
    return written


def parse_seat(seat: str | int) -> int | str:
    """``"all"``, or a seat number within the bounds table's ``seat`` row (a ValueError naming --seat)."""
    if seat == ALL:
        return ALL
    try:
        number = int(seat)
    except ValueError:
        raise InputError(f"--seat: a seat number or all, got {str(seat)[:40]!r}") from None
    return check("seat", number, "--seat")


def record_to_gif(path: str, gif: str, seat: str | int = 0, ms: int = 400) -> int:
    """Write the GIF; returns a process exit code (2 with a message for a bad record or seat)."""
    try:
        who = parse_seat(seat)
        ms = check("frame_ms", ms, "--ms")
        body = json.loads(read_text_limited(path, "record"))
        pictures = frames(body, who)
    except Refused as err:  # the record or the seat (a Refused is a ValueError: first)
        print(f"dragonstones replay: {path}: {err}", file=sys.stderr)
        return 2
    except (OSError, ValueError, RecursionError) as err:  # InputError and JSON's errors are ValueErrors
        print(f"dragonstones replay: cannot read {path}: {err}", file=sys.stderr)
        return 2
    # the last frame (the result) stays on screen longer
    count = write_gif(gif, pictures, ms, max(ms, 3000))
    print(f"{gif}: {count} frames from {'every seat' if who == ALL else f'seat {who}'}")
    return 0
