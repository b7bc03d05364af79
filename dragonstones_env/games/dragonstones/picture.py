"""The ``rgb_array`` picture of a Fist of Dragonstones table, as one seat sees it.

Drawn from that seat's observation (``observation.decode``), like everything a seat is shown:
scores, stones, coins (others' only in ``"recall"`` mode), who has sealed a bid (not what), the
character being auctioned and this turn's characters. See :mod:`dragonstones_env.canvas`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import canvas as C
from .cards import CHARACTER_SLOTS
from .observation import decode

_STATUS_FILL = {"face_down": (122, 47, 47), "won": (223, 240, 216), "passed": (200, 200, 200),
                "cursed": (200, 200, 200), "imp_goblin": (230, 220, 255)}


def picture(env: Any, seat: int) -> np.ndarray:
    """H x W x 3 uint8: the table from ``seat``'s observation."""
    n = env.num_players
    d = decode(env.observe(env.possible_agents[seat])["observation"])
    image, draw, corners = C.table(seat, n)
    seats = d["seats"]
    acting = d["acting_seat"]
    for p in range(n):
        r = (p - seat) % n
        C.seat_box(draw, corners[p], f"player_{p}" + ("  (you)" if p == seat else ""), acting == r, p == seat)
        x, y = corners[p]
        score = int(seats["score"][r])
        draw.text((x + 8, y + 24), "*" * score + "." * max(0, 3 - score), fill=C.GOLD, font=C.font(16))
        C.chips(draw, x + 52, y + 24, {c: int(seats[c][r]) for c in C.STONE_COLOURS})
        if seats["coins_known"][r]:
            coins = f"{int(seats['fairy'][r])}f {int(seats['common'][r])}c {int(seats['silver'][r])}s"
        else:
            coins = "coins hidden"
        extra = (" black" if seats["black"][r] else "") + (" amulet" if seats["amulets"][r] else "")
        draw.text((x + 8, y + 47), coins + extra, fill=C.INK, font=C.font(12))
        if d["has_bid"][r]:
            draw.rounded_rectangle((x + C.SEAT_W - 54, y + 50, x + C.SEAT_W - 6, y + 66), radius=4, fill=(139, 47, 47))
            draw.text((x + C.SEAT_W - 30, y + 58), "sealed", fill=(255, 255, 255), font=C.font(10), anchor="mm")
    cx, cy = C.WIDTH // 2, C.HEIGHT // 2
    turn = round(d["progress"]["turn_fraction"] * env.options["max_turns"])
    draw.text((cx, cy - 78), f"Turn {turn}  -  {d['decision'] or 'game over'}", fill=(244, 240, 224),
              font=C.font(14), anchor="mm")
    if d["card"]:
        box = draw.textbbox((cx, cy - 45), d["card"], font=C.font(20), anchor="mm")
        draw.rounded_rectangle((box[0] - 12, box[1] - 8, box[2] + 12, box[3] + 8), radius=6, fill=C.PAPER)
        draw.text((cx, cy - 45), d["card"], fill=C.INK, font=C.font(20), anchor="mm")
    cards = [(name, status) for i, name in enumerate(CHARACTER_SLOTS)
             for status, counts in d["turn_cards"].items() for _ in range(round(counts[i]))]
    x0 = cx - 5 * 52
    for k, (name, status) in enumerate(cards[:10]):
        x, y = x0 + (k % 10) * 52, cy - 5
        draw.rounded_rectangle((x, y, x + 48, y + 30), radius=4, fill=_STATUS_FILL[status], outline=(60, 40, 30))
        draw.text((x + 24, y + 15), name[:7], fill=C.INK if status != "face_down" else C.PAPER,
                  font=C.font(10), anchor="mm")
    b = d["bank"]
    draw.text((cx, cy + 45), f"bank: {b['fairy']} fairy  {b['common']} common  {b['silver']} silver",
              fill=(244, 240, 224), font=C.font(12), anchor="mm")
    C.chips(draw, cx - 32, cy + 58, {c: b[c] for c in C.STONE_COLOURS})
    return C.to_array(image)
