"""``dragonstones replay RECORD --gif out.gif``: a game record as an animation, one frame per decision.

The record (the engine's JSON list, or a file saved by the app) is read as JSON, size-limited and
checked by the engine's replay before anything is drawn; each frame is the env's ``rgb_array``
picture from one seat.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .app.sessions import AppError, parse_record

MAX_RECORD_BYTES = 50_000_000


def frames(record_body: object, seat: int) -> list:
    """The pictures of a record's game from ``seat``, before each decision and at the end."""
    mod, record, _, _ = parse_record(record_body)
    start = record[0]
    n = start["num_players"]
    if not 0 <= seat < n:
        raise AppError(400, f"seat must be from 0 to {n - 1} for this {n}-player record, got {seat}")
    env = mod.env_for_record(start)
    out = [env.picture(seat)]
    for ev in record:
        if ev.get(mod.KIND_KEY) in mod.INPUT_EVENTS:
            env.step(mod.encode(ev["option"], ev["player"], n))
            out.append(env.picture(seat))
    return out


def record_to_gif(path: str, gif: str, seat: str | int = 0, ms: int = 400) -> int:
    """Write the GIF; returns a process exit code (2 with a message for a bad record or seat)."""
    from PIL import Image

    try:
        seat_no = int(seat)
        source = Path(path)
        if source.stat().st_size > MAX_RECORD_BYTES:
            raise AppError(413, f"{path} has more than {MAX_RECORD_BYTES} bytes")
        body = json.loads(source.read_text(encoding="utf-8"))
        pictures = frames(body, seat_no)
    except (OSError, ValueError, RecursionError) as err:
        print(f"dragonstones replay: cannot read {path}: {err}", file=sys.stderr)
        return 2
    except AppError as err:
        print(f"dragonstones replay: {path}: {err.message}", file=sys.stderr)
        return 2
    images = [Image.fromarray(p) for p in pictures]
    # the last frame (the result) stays on screen longer
    durations = [ms] * (len(images) - 1) + [max(ms, 3000)]
    images[0].save(gif, save_all=True, append_images=images[1:], duration=durations, loop=0, optimize=True)
    print(f"{gif}: {len(images)} frames from seat {seat_no}")
    return 0
