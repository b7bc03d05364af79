"""Drawing helpers for the ``rgb_array`` pictures of every game here (Pillow).

A picture is a table seen from one seat: a felt oval on a wooden background with the seats
around it, the viewer at the bottom. Each game's ``picture`` module fills the seats and the
centre from that seat's observation. Pillow is imported on first use only: the envs do not
need it unless ``render_mode="rgb_array"`` is asked for.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

WIDTH, HEIGHT = 800, 500
SEAT_W, SEAT_H = 184, 74
FELT, RIM, WOOD = (31, 107, 67), (107, 63, 29), (43, 33, 24)
PAPER, INK, GOLD = (251, 247, 238), (29, 29, 31), (229, 181, 59)
STONE_COLOURS = {"red": (210, 55, 44), "blue": (47, 111, 214), "yellow": (240, 196, 25)}


def _pil() -> Any:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as err:  # pragma: no cover - Pillow ships with the train and app extras
        raise ImportError("render_mode='rgb_array' draws with Pillow: pip install pillow") from err
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=8)
def font(size: int) -> Any:
    """Pillow's bundled font at ``size`` (the same on every machine: pictures are deterministic)."""
    _, _, image_font = _pil()
    try:
        return image_font.load_default(size=size)
    except TypeError:  # Pillow < 10.1: a fixed-size bitmap font
        return image_font.load_default()


def table(viewer: int, num_players: int) -> tuple[Any, Any, list[tuple[int, int]]]:
    """A new picture with the felt drawn; returns (image, draw, top-left corner of each seat's box)."""
    image_cls, draw_mod, _ = _pil()
    image = image_cls.new("RGB", (WIDTH, HEIGHT), WOOD)
    draw = draw_mod.Draw(image)
    draw.ellipse((30, 40, WIDTH - 30, HEIGHT - 40), fill=FELT, outline=RIM, width=12)
    corners = []
    for seat in range(num_players):
        angle = math.pi / 2 + 2 * math.pi * ((seat - viewer) % num_players) / num_players
        x = WIDTH / 2 + 0.40 * WIDTH * math.cos(angle)
        y = HEIGHT / 2 + 0.38 * HEIGHT * math.sin(angle)
        # clamped: the side seats of a wide table stay inside the picture
        corners.append((int(min(max(x - SEAT_W / 2, 4), WIDTH - SEAT_W - 4)),
                        int(min(max(y - SEAT_H / 2, 4), HEIGHT - SEAT_H - 4))))
    return image, draw, corners


def seat_box(draw: Any, corner: tuple[int, int], title: str, acting: bool, me: bool) -> None:
    x, y = corner
    fill = (255, 248, 220) if me else PAPER
    draw.rounded_rectangle((x, y, x + SEAT_W, y + SEAT_H), radius=8, fill=fill,
                           outline=GOLD if acting else (90, 80, 70), width=4 if acting else 1)
    draw.text((x + 8, y + 5), title, fill=INK, font=font(13))


def chips(draw: Any, x: int, y: int, counts: dict[str, int]) -> int:
    """Stone chips (a coloured disc with its count) from ``x``; returns the x after them."""
    for colour, n in counts.items():
        draw.ellipse((x, y, x + 17, y + 17), fill=STONE_COLOURS[colour])
        draw.text((x + 9, y + 9), str(n), fill=(255, 255, 255) if colour != "yellow" else INK,
                  font=font(11), anchor="mm")
        x += 21
    return x


def to_array(image: Any) -> np.ndarray:
    """The picture as an H x W x 3 uint8 array (PettingZoo's ``rgb_array`` convention)."""
    return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
