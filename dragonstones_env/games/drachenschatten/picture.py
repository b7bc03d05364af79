"""The ``rgb_array`` picture of a DrachenSchatten table, as one seat sees it.

Drawn from that seat's observation (``observation.decode``): the 16 stacks with their heights
(and the top card where the seat saw it with a torch), every collection with ready and used
objects, beasts and treasures. See :mod:`dragonstones_env.canvas`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import canvas as C
from .cards import CARDS
from .observation import decode

_SHORT = {c.index: "".join(w[0] for w in c.name.split()).upper() for c in CARDS}  # "torch view-2" -> "TV"
_CATEGORY_FILL = {"beast": (246, 213, 213), "treasure": (255, 240, 179)}


def picture(env: Any, seat: int) -> np.ndarray:
    """H x W x 3 uint8: the table from ``seat``'s observation."""
    n = env.num_players
    d = decode(env.observe(env.possible_agents[seat])["observation"])
    image, draw, corners = C.table(seat, n)
    coll, totals = d["collection"], d["totals"]
    for p in range(n):
        r = (p - seat) % n
        C.seat_box(draw, corners[p], f"player_{p}" + ("  (you)" if p == seat else ""), d["acting_seat"] == r,
                   p == seat)
        x, y = corners[p]
        draw.text((x + 8, y + 22), f"{int(totals['kinds'][r])} kinds  {int(totals['beasts'][r])} beasts  "
                                   f"{int(totals['treasures'][r])} treasures", fill=C.INK, font=C.font(11))
        k = 0
        for t, card in enumerate(CARDS):
            for state in ("ready", "other"):
                for _ in range(round(coll[state][r][t])):
                    if k >= 16:
                        break
                    cx, cy = x + 8 + (k % 8) * 21, y + 38 + (k // 8) * 17
                    used = state == "other" and card.category == "object"
                    fill = _CATEGORY_FILL.get(card.category, (200, 200, 200) if used else (214, 240, 214))
                    draw.rectangle((cx, cy, cx + 19, cy + 15), fill=fill, outline=(90, 90, 90))
                    draw.text((cx + 10, cy + 8), _SHORT[t], fill=C.INK, font=C.font(9), anchor="mm")
                    k += 1
    stacks, memory = d["stacks"], d["memory"]
    x0, y0 = C.WIDTH // 2 - 4 * 46, C.HEIGHT // 2 - 62
    for s in range(16):
        x, y = x0 + (s % 8) * 46, y0 + (s // 8) * 64
        height = round(stacks[s])
        fill = (107, 74, 43) if s < 8 else (59, 63, 92)
        if height:
            draw.rounded_rectangle((x, y, x + 40, y + 56), radius=4, fill=fill, outline=(30, 20, 10), width=2)
        draw.text((x + 6, y + 4), str(height), fill=(255, 255, 255), font=C.font(12))
        if memory[s] is not None:
            draw.rectangle((x + 2, y + 36, x + 38, y + 54), fill=C.PAPER)
            draw.text((x + 20, y + 45), _SHORT[memory[s]], fill=C.INK, font=C.font(10), anchor="mm")
    draw.text((C.WIDTH // 2, y0 - 16), f"Turn {int(d['progress']['turn'])}  -  {d['decision'] or 'game over'}",
              fill=(244, 240, 224), font=C.font(14), anchor="mm")
    return C.to_array(image)
