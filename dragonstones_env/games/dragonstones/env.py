"""Fist of Dragonstones as a PettingZoo AEC environment.

| | |
|---|---|
| Import | ``from dragonstones_env import env, raw_env`` |
| Name | ``dragonstones_v1`` |
| Agents | ``player_0`` ... ``player_{n-1}``, n = 3..6 (``num_players``) |
| Actions | ``Discrete(NUM_ACTIONS)``, the same for every agent and table size, masked |
| Observations | ``{"observation": Box(float32, (OBS_SIZE,)), "action_mask": Box(int8, (NUM_ACTIONS,))}`` |
| Rewards | winner +1, every other player -1/(n-1), at the end only; truncation: 0 for all |

A closed-fist blind-bid auction game (Faidutti & Schacht): each turn ten characters are
auctioned one at a time and the winner of each uses its power; the first player to 3
points wins. Every gold bid, tie-break bid and character choice is one discrete action;
the ``action_mask`` allows exactly the legal options of the current decision (see
:mod:`dragonstones_env.games.dragonstones.actions` for the layout). A blind auction asks every player in turn
for a sealed bid; nothing any other agent observes depends on a sealed bid until all bids
are revealed together.

Options (keyword arguments of :func:`env` / :class:`raw_env`):

* ``num_players`` (4): 3 to 6.
* ``observation_mode`` (``"recall"``): ``"recall"`` shows every player's coins as a player
  with perfect recall derives them from public events (F43); ``"table"`` only what is on
  the table now. A checkpoint's card records it: one trained in table mode hides the others'
  coins itself at a recall table (``observation.seat_view``), as every evaluation's table is.
* ``max_turns`` (40): turns before the game is truncated (F18), 1..1000 (the bounds table,
  ``dragonstones_env/bounds.py``); random play ends in 17 turns on average, see the README.
* ``illegal_action`` (``"raise"``): ``"raise"`` raises ``ValueError`` and changes nothing;
  ``"penalize"`` ends the game with -1 for the offender and 0 for the others.
* ``reward_shaping`` (0.0): if > 0, each point scored also gives its scorer this reward at
  once (off by default); a finite number in [0, 1].
* ``characters`` (None): custom special characters added to the special pile (issue #16,
  ``docs/custom-characters.md``): a YAML/TOML file, a list of card mappings, or names of
  Python characters registered with ``custom.character``.
* ``exclude`` (()): standard specials taken out of the pile, e.g. ``["Troll"]``.
* ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the table as the current
  agent may see it) or ``"human"`` (prints it).

Infos: every agent's info holds the same keys at every step, from ``reset()`` on (what Tianshou's
and TorchRL's PettingZoo adapters need): ``winners``, an int8 array of 6 (one flag per seat,
``player_i`` at i; all 0 until the game ends, and when it is truncated), and ``illegal_action``
(True for the offender of a penalised illegal action; its reason is ``raw_env.penalty``).

Global state: ``state()`` is every fact of the game, hidden ones included (every seat's coins,
the sealed bids, the order of the face-down characters and of the special pile), in
``state_space`` (``Box(0, 100, (STATE_SIZE,), float32)``), laid out as ``STATE_LAYOUT``
(:mod:`dragonstones_env.games.dragonstones.global_state`). It is the input of a centralised critic, never of
a policy: no seat may see it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dragonstones_env.aec import TurnBasedEnv, env_metadata, ordered_env
from dragonstones_env.bounds import check as check_bound

from . import actions as A
from . import custom
from .cards import COLOURS
from .engine import BID, DEFAULT_MAX_TURNS, MAX_PLAYERS, MIN_PLAYERS, TIEBREAK, Game
from .global_state import STATE_HIGH, STATE_LAYOUT, global_state
from .observation import LAYOUT, MODES, OBS_HIGH, OBS_SIZE, Observer
from .picture import picture as draw_picture

METADATA = env_metadata("dragonstones_v1", LAYOUT, A.NUM_ACTIONS)
LAYOUT_SIGNATURE = METADATA["layout"]  # checkpoints made for another layout are refused

OPTIONS = {
    "num_players": 4,
    "observation_mode": "recall",
    "max_turns": DEFAULT_MAX_TURNS,
    "illegal_action": "raise",
    "reward_shaping": 0.0,
    "characters": None,
    "exclude": (),
}


class raw_env(TurnBasedEnv):  # PettingZoo's naming convention
    metadata = METADATA
    OPTIONS = OPTIONS
    MIN_PLAYERS, MAX_PLAYERS = MIN_PLAYERS, MAX_PLAYERS
    NUM_ACTIONS, OBS_SIZE, OBS_HIGH, LAYOUT = A.NUM_ACTIONS, OBS_SIZE, OBS_HIGH, LAYOUT
    CODEC = A.CODEC
    STATE_LAYOUT, STATE_HIGH = STATE_LAYOUT, STATE_HIGH

    def _validate(self, cfg: dict[str, Any]) -> None:
        if cfg["observation_mode"] not in MODES:
            raise ValueError(f"observation_mode must be 'recall' or 'table', got {cfg['observation_mode']!r}")
        # the bounds table (dragonstones_env/bounds.py): nan or 1e308 would make every reward nan or inf
        cfg["max_turns"] = check_bound("max_turns", cfg["max_turns"])
        cfg["reward_shaping"] = check_bound("reward_shaping", cfg["reward_shaping"])
        # Loaded and validated once, here: a bad card fails at env(), naming file, card, field.
        if isinstance(cfg["exclude"], str):
            cfg["exclude"] = [cfg["exclude"]]
        self.deck = custom.make_deck(cfg["characters"], cfg["exclude"])

    def _new_game(self, seed: int) -> Game:
        return Game(self.num_players, seed=seed, max_turns=self.options["max_turns"], deck=self.deck)

    def _adopt(self, game: Game) -> None:
        self._scores = [pl.score for pl in game.players]  # reward shaping pays score changes from here

    def _new_observer(self) -> Observer:
        return Observer(self.options["observation_mode"])

    def _compute_mask(self) -> np.ndarray:
        game = self.game
        d = game.decision
        pl = game.players[d.player]
        if d.kind == BID:
            return A.bid_mask(pl.fairy, pl.common, pl.black, pl.amulets)
        if d.kind == TIEBREAK:
            return A.tiebreak_mask(pl.silver, pl.amulets)
        options = game.legal_options()
        if self.deck is not None:  # a custom card picked by the Ghost or Imp is its layout slot
            options = [("character", self.deck.slot_name(o[1])) if o[0] == "character" else o for o in options]
        return A.CODEC.mask(options, d.player, self.num_players)

    def _decode(self, action: int, seat: int) -> tuple:
        option = A.decode(action, seat, self.num_players)
        if self.deck is not None and option[0] == "character":
            option = ("character", self.deck.card_name(option[1]))
        return option

    def _describe(self, action: int) -> str:
        text = A.describe(action)
        if self.deck is not None:
            for c in self.deck.custom:  # the slot's label -> the card's name
                text = text.replace(self.deck.slot_name(c.name), c.name)
        game = self.game
        d = None if game is None else game.decision
        if self.deck is not None and d is not None and d.card in {c.name for c in self.deck.custom}:
            text = f"{d.card}: {text}"  # what the choice is for ("Banker: yes")
        return text

    def _before_apply(self) -> tuple:
        return self.game.decision.kind, self.game.auction

    def _after_apply(self, agent: str, before: tuple) -> None:
        game = self.game
        kind, auction = before
        # Sealing a bid changes nothing public: keep the public observation (see Observer).
        after = game.decision
        if not (after is not None and kind in (BID, TIEBREAK) and after.kind == kind and game.auction is auction):
            self._observer.invalidate()
        coef = self.options["reward_shaping"]
        if coef:
            for p, pl in enumerate(game.players):
                if pl.score != self._scores[p]:
                    self.rewards[self.possible_agents[p]] += coef * (pl.score - self._scores[p])
                    self._scores[p] = pl.score
                    self._rewarded = True

    def _final_rewards(self) -> list[float] | None:
        winner = self.game.winner
        if winner is None:
            return None  # truncated (F18): 0 for all
        loss = -1.0 / (self.num_players - 1)
        return [1.0 if p == winner else loss for p in range(self.num_players)]

    def _global_state(self) -> np.ndarray:
        return global_state(self.game)

    def picture(self, seat: int) -> np.ndarray:
        """The table as seat ``seat`` sees it (from its observation), drawn with Pillow."""
        return draw_picture(self, seat)

    def render_text(self, viewer: int) -> str:
        """The table as seat ``viewer`` may see it (coins of others only in recall mode)."""
        g = self.game
        recall = self._observer.mode == "recall"
        lines = [f"Fist of Dragonstones - turn {g.turn}/{g.max_turns} - seen by player_{viewer}"]
        b = g.bank
        lines.append(
            f"bank: fairy {b.fairy}, common {b.common}, silver {b.silver}, amulets {b.amulets}, stones "
            + ", ".join(f"{c} {s}" for c, s in zip(COLOURS, b.stones, strict=True))
        )
        lines.append(f"this turn: {', '.join(g.turn_cards)}")
        if self.deck is not None:
            lines.append(f"custom deck: {custom.describe(self.deck)}")
        played = ", ".join(f"{c} ({how})" for c, how in g.played) or "-"
        lines.append(f"auctioned: {played}")
        for p, pl in enumerate(g.players):
            show = recall or p == viewer
            coins = f"fairy {pl.fairy}, common {pl.common}, silver {pl.silver}" if show else "coins hidden"
            extra = (" black" * pl.black) + (" amulet" * pl.amulets) + (" doppelganger" if pl.doppelganger else "")
            stones = "/".join(str(s) for s in pl.stones)
            lines.append(
                f"{'>' if g.current_player == p else ' '} player_{p}: score {pl.score}, stones r/b/y {stones},"
                f" spent fairy {pl.fairy_spent}, {coins}{extra}"
            )
        d = g.decision
        if d is None:
            lines.append("game over: " + (f"player_{g.winner} wins" if g.winner is not None else "truncated"))
        else:
            lines.append(f"decision: {d.kind}{' (' + d.card + ')' if d.card else ''} by player_{d.player}")
        return "\n".join(lines)


env = ordered_env(raw_env)
