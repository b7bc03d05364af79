"""DrachenSchatten as a PettingZoo AEC environment.

| | |
|---|---|
| Import | ``from dragonstones_env import drachenschatten``; ``drachenschatten.env``, ``.raw_env`` |
| Name | ``drachenschatten_v1`` (v0 checkpoints still play: they see v1's first 639 floats, v0's layout) |
| Agents | ``player_0`` ... ``player_{n-1}``, n = 2..4 (``num_players``) |
| Actions | ``Discrete(NUM_ACTIONS)``, 3542, the same for every agent and table size, masked |
| Observations | ``{"observation": Box(0, 4, (OBS_SIZE,), float32), "action_mask": Box(int8)}``, 661 |
| Rewards | zero-sum, at the end: k winners +1/k each, the others -1/(n-k); all win or truncated: 0 |

A push-your-luck card collecting game (rulebook ``seeds/002_868a28ab297ac500.txt``, rulings
D1-D7 in ``RULINGS.md``): on his turn a player turns over the top card of one of 16 face-down
stacks (8 village, 8 caves) and uses the objects of his collection -- torches to peek at stacks,
boots to turn over more, weapons to trade, steal and destroy other players' used objects, keys to
restore them -- while dragons and hydras take everything from a player who has no protection.
Seven different object kinds, three beasts or three treasures win at once (D6); when the stacks
run out, the most cards win (D7).

Every decision is one masked action (see :mod:`.actions` for the layout): the opening village
pick; the mandatory turn-over (which stack); using a ready object with its whole target; each
stack a torch looks at (or stopping); the object protecting in a battle; and, after a decay, each
OTHER player's forfeit -- those players act during the active player's turn (``agent_selection``
is always the player who must decide). Protect and forfeit decisions with a single legal choice
are applied by the engine itself. Seats in actions are relative to the acting player (1 = next
clockwise), so one policy plays any seat.

Observations (see :mod:`.observation`) are seat-relative and padded to 4 seats: everything on the
table (stack sizes, every collection with ready/used state, cards out of the game, the decision
and the card it is about; v1: how often the active player used each object type this turn) plus
the viewer's OWN torch memory: the cards it looked at that are still on their stack (D4).
Nobody observes another player's memory or which stacks he looked at.

Options (keyword arguments of :func:`env` / :class:`raw_env`):

* ``num_players`` (2): 2 to 4 (D2).
* ``max_steps`` (1000, ``rules.DEFAULT_MAX_STEPS``, at most 100,000): actions applied
  (auto-applied forced choices not counted) before the game is truncated; nobody wins, every
  reward is 0. Uniformly random play takes about 55 (2 players) to 90 (4 players) actions per game.
  The rules allow a turn without end: a key may restore any used object but itself (D4), so a
  player with two keys can have them restore each other for ever; this limit ends such a game.
  A policy may refuse the loop itself: a checkpoint whose card says ``"loop_guard": k`` uses an
  object type at most k times a turn (``guard.py``; a run's ``loop_guard`` key writes it).
* ``illegal_action`` (``"raise"``): ``"raise"`` raises ``ValueError`` naming the agent, the
  decision and the action, and changes nothing; ``"penalize"`` ends the game with -1 for the
  offender and 0 for the others.
* ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the table as the agent to act sees
  it) or ``"human"`` (prints it after every step).

Infos: every agent's info holds the same keys at every step, from ``reset()`` on (what Tianshou's
and TorchRL's PettingZoo adapters need): ``winners``, an int8 array of 4 (one flag per seat,
``player_i`` at i; all 0 until the game ends, and when it is truncated; every seat's when all win),
``end_reason``, an int8 array with one flag per ``rules.END_REASONS`` (``seven_kinds``,
``three_beasts``, ``three_treasures``, ``stacks_empty``, ``truncated``; all 0 until the end; the
engine's ``end_reason`` string is the flagged names joined with ``+``), and ``illegal_action`` (True
for the offender of a penalised illegal action; its reason is ``raw_env.penalty``).

Global state: ``state()`` is every fact of the game, hidden ones included (every stack's cards in
order, every seat's torch memory), in ``state_space`` (``Box(0, 16, (STATE_SIZE,), float32)``),
laid out as ``STATE_LAYOUT`` (:mod:`dragonstones_env.games.drachenschatten.global_state`). It is the
input of a centralised critic, never of a policy: no seat may see it.

Extras on the raw env: ``state_dict()`` (JSON: stacks' remaining counts, each collection with
ready/used state, turn, whose turn, decision, ...; never stack contents or memories),
``describe_action(a)``, ``legal_actions()``, ``observation_layout()``, ``game`` (the engine).
``copy.deepcopy`` of the env (wrapped or not) continues identically.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dragonstones_env.aec import TurnBasedEnv, env_metadata, ordered_env
from dragonstones_env.bounds import check as check_bound

from . import actions as A
from .cards import CARD_NAMES, CARD_TYPE_OF_ID, CARDS
from .global_state import STATE_HIGH, STATE_LAYOUT, global_state
from .observation import LAYOUT, LAYOUT_V0, OBS_HIGH, OBS_SIZE, Observer
from .picture import picture as draw_picture
from .rules import DEFAULT_MAX_STEPS, END_REASONS, MAX_PLAYERS, MIN_PLAYERS, DrachenSchattenGame

METADATA = env_metadata("drachenschatten_v1", LAYOUT, A.NUM_ACTIONS)
LAYOUT_SIGNATURE = METADATA["layout"]  # checkpoints made for another layout are refused
# v0 (before the turn's object uses, issue 52): its checkpoints still play, seeing v0_view of a v1 table
LAYOUT_SIGNATURE_V0 = env_metadata("drachenschatten_v0", LAYOUT_V0, A.NUM_ACTIONS)["layout"]

_CARD_FAMILIES = ("view", "stop_view", "protect", "forfeit")  # decisions about a card (Decision.card)

OPTIONS = {
    "num_players": 2,
    "max_steps": DEFAULT_MAX_STEPS,
    "illegal_action": "raise",
}


class raw_env(TurnBasedEnv):  # PettingZoo's naming convention
    metadata = METADATA
    OPTIONS = OPTIONS
    MIN_PLAYERS, MAX_PLAYERS = MIN_PLAYERS, MAX_PLAYERS
    NUM_ACTIONS, OBS_SIZE, OBS_HIGH, LAYOUT = A.NUM_ACTIONS, OBS_SIZE, OBS_HIGH, LAYOUT
    CODEC = A.CODEC
    STATE_LAYOUT, STATE_HIGH = STATE_LAYOUT, STATE_HIGH

    def _validate(self, cfg: dict[str, Any]) -> None:
        cfg["max_steps"] = check_bound("max_steps", cfg["max_steps"])  # the bounds table (dragonstones_env/bounds.py)

    def _new_game(self, seed: int) -> DrachenSchattenGame:
        return DrachenSchattenGame(self.num_players, seed=seed, max_steps=self.options["max_steps"])

    def _new_observer(self) -> Observer:
        return Observer()

    def _compute_mask(self) -> np.ndarray:
        game = self.game
        return A.CODEC.mask(game.legal_options(), game.decision.player, self.num_players)

    def _decode(self, action: int, seat: int) -> tuple:
        return A.decode(action, seat, self.num_players)

    def _describe(self, action: int) -> str:
        return A.describe(action)

    def _card_prefix(self, action: int) -> bool:
        return A.family_of(action).name in _CARD_FAMILIES

    def _final_rewards(self) -> list[float] | None:
        """D6/D7 end: each of k winners +1/k, each other player -1/(n-k); all winners: 0 for all."""
        game = self.game
        if game.truncated:
            return None
        n, winners = self.num_players, set(game.winners)
        k = len(winners)
        if k == n:
            return [0.0] * n
        return [1.0 / k if p in winners else -1.0 / (n - k) for p in range(n)]

    def _end_info(self) -> dict[str, Any]:
        """``end_reason``: why the game ended, one flag per :data:`END_REASONS` (two or more when a
        D6 win had several reasons), all 0 while it runs."""
        flags = np.zeros(len(END_REASONS), np.int8)
        reason = self.game.end_reason if self.game is not None else None
        if reason:
            flags[[END_REASONS.index(r) for r in reason.split("+")]] = 1
        return {"end_reason": flags}

    def _global_state(self) -> np.ndarray:
        return global_state(self.game)

    def state_dict(self) -> dict[str, Any]:
        """JSON snapshot: the engine's public :meth:`~.rules.DrachenSchattenGame.state_dict`
        (stacks' remaining counts, collections with ready state, turn, whose turn, decision, ...)
        plus ``agent_selection`` and ``penalized`` (the agent whose illegal action ended the game)."""
        return {**super().state_dict(), "agent_selection": self.agent_selection}

    def picture(self, seat: int) -> np.ndarray:
        """The table as seat ``seat`` sees it (from its observation), drawn with Pillow."""
        return draw_picture(self, seat)

    def render_text(self, viewer: int) -> str:
        """The table as seat ``viewer`` may see it: public cards plus the viewer's own torch memory."""
        g = self.game
        lines = [f"DrachenSchatten - turn {g.turn}, step {g.steps}/{g.max_steps} - seen by player_{viewer}"]
        sizes = [len(s) for s in g._stacks]
        lines.append("village stacks: " + " ".join(map(str, sizes[:8])) + " | caves stacks: "
                     + " ".join(map(str, sizes[8:])))
        memory = g.memory(viewer)
        if memory:
            lines.append("you saw: " + ", ".join(f"stack {s}: {CARD_NAMES[t]}" for s, t in memory.items()))
        for q, coll in enumerate(g._collections):
            cards = sorted(coll, key=lambda c: (CARD_TYPE_OF_ID[c], not g._ready[c]))
            shown = ", ".join(CARD_NAMES[CARD_TYPE_OF_ID[c]] + _state(g, c) for c in cards) or "-"
            mark = ">" if g.decision is not None and g.current_player == q and g.turn else " "
            lines.append(f"{mark} player_{q}: {shown}")
        lines.append(f"out of the game: {len(g._removed)} cards")
        d = g.decision
        if d is None:
            who = ", ".join(f"player_{p}" for p in g.winners)
            lines.append(f"game over ({g.end_reason}): " + (f"{who} win" if who else "nobody wins"))
        else:
            lines.append(f"decision: {d.kind}{' (' + d.card + ')' if d.card else ''} by player_{d.player}"
                         + (" - turn-over done" if g.turned_over and d.kind == "turn" else ""))
        return "\n".join(lines)


def _state(g: DrachenSchattenGame, cid: int) -> str:
    if CARDS[CARD_TYPE_OF_ID[cid]].category != "object":
        return ""
    return " (ready)" if g._ready[cid] else " (used)"


env = ordered_env(raw_env)
