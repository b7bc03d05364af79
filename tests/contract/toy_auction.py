"""A third game that exists only in the tests: one round of sealed bids for 2 to 4 players.

Each player holds 5 coins and, in turn, seals a bid of 0 to 5; when all have bid, the bids are
revealed and the highest bidders win (a tie shares the win). It is built from the shared core
only -- the engine protocol, the codec, the observer base, TurnBasedEnv, the registry -- to show
that a game registered through ``GameSpec`` gets the contract tests, the Gymnasium id,
``load_policy("random")``, evaluation and training with no edit outside its own file.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils import wrappers

from dragonstones_env.aec import TurnBasedEnv
from dragonstones_env.codec import ActionFamily, Codec
from dragonstones_env.core import Decision, IllegalOptionError, as_option, check_seed, verify_replay
from dragonstones_env.layout import Piece, build_layout, layout_size, signature
from dragonstones_env.observer import Observation, Observer
from dragonstones_env.registry import GameSpec

COINS, MIN_PLAYERS, MAX_PLAYERS = 5, 2, 4
MAX_BID = 7  # the action space has bids a player cannot pay: illegal actions exist


class ToyAuction:
    """The engine: ``("bid", k)`` options, one decision per player, then the reveal."""

    record_key = "type"

    def __init__(self, num_players: int = 2, seed: int | None = None):
        if isinstance(num_players, bool) or not isinstance(num_players, int) or not 2 <= num_players <= 4:
            raise ValueError(f"num_players must be an int from 2 to 4, got {num_players!r}")
        self.num_players, self.seed = num_players, check_seed(0 if seed is None else seed)
        self.first = int(np.random.default_rng(self.seed).integers(num_players))  # who bids first
        self.bids: list[int | None] = [None] * num_players
        self.turn, self.truncated, self.winners = 0, False, []
        self.record: list[dict[str, Any]] = [{"type": "start", "num_players": num_players, "seed": self.seed}]

    @property
    def over(self) -> bool:
        return None not in self.bids

    @property
    def decision(self) -> Decision | None:
        if self.over:
            return None
        return Decision("bid", (self.first + sum(b is not None for b in self.bids)) % self.num_players)

    def legal_options(self) -> list[tuple]:
        return [] if self.over else [("bid", k) for k in range(COINS + 1)]

    def is_legal(self, option: Any) -> bool:
        try:
            return as_option(option) in self.legal_options()
        except TypeError:
            return False

    def apply(self, option: Any) -> None:
        if not self.is_legal(option):
            raise IllegalOptionError(self.decision, option, self.legal_options())
        player = self.decision.player
        self.bids[player] = option[1]
        self.record.append({"type": "choice", "player": player, "option": list(option)})
        if self.over:
            top = max(self.bids)
            self.winners = [p for p, b in enumerate(self.bids) if b == top]
            self.turn = 1
            self.record.append({"type": "reveal", "bids": list(self.bids), "winners": self.winners})

    def state_dict(self) -> dict[str, Any]:
        """Public: who has bid; the bids themselves only once revealed."""
        return {"num_players": self.num_players, "first": self.first, "has_bid": [b is not None for b in self.bids],
                "bids": list(self.bids) if self.over else None, "winners": list(self.winners)}


def replay(record: list) -> ToyAuction:
    def new_game(start: dict[str, Any]) -> ToyAuction:
        return ToyAuction(start["num_players"], seed=start["seed"])

    return verify_replay(record, "type", new_game, {"choice": lambda g, ev: g.apply(tuple(ev["option"]))})


CODEC = Codec([ActionFamily("bid", (MAX_BID + 1,), "sealed bid: 0-7 coins (5 held)", lambda i: ("bid", i[0]),
                            describe=lambda o: f"bid {o[1]} coins")])
LAYOUT: dict[str, Piece] = build_layout([
    ("seat_present", (MAX_PLAYERS,), 0, "seats at the table (relative)", {}),
    ("acting_seat", (MAX_PLAYERS,), 0, "the seat to bid", {}),
    ("has_bid", (MAX_PLAYERS,), 0, "seats that have sealed a bid", {}),
    ("own_bid", (1,), None, "the viewer's own sealed bid /5", {"scale": COINS}),
    ("bids", (MAX_PLAYERS,), 0, "revealed bids /5, at the end only", {"scale": COINS}),
])
OBSERVATION = Observation(LAYOUT, MAX_PLAYERS)


class ToyObserver(Observer):
    observation = OBSERVATION

    def public(self, game: ToyAuction) -> np.ndarray:
        out = np.zeros(OBSERVATION.size, np.float32)
        n = game.num_players
        start = {name: LAYOUT[name].slice.start for name in LAYOUT}
        out[start["seat_present"]: start["seat_present"] + n] = 1.0
        if game.decision is not None:
            out[start["acting_seat"] + game.decision.player] = 1.0
        for p, b in enumerate(game.bids):
            out[start["has_bid"] + p] = float(b is not None)
            if game.over:
                out[start["bids"] + p] = b / COINS
        return out

    def private(self, obs: np.ndarray, game: ToyAuction, viewer: int) -> None:
        bid = game.bids[viewer]
        if bid is not None:
            obs[LAYOUT["own_bid"].slice.start] = bid / COINS


class raw_env(TurnBasedEnv):
    metadata = {"name": "toyauction_v0", "layout": signature("toyauction_v0", LAYOUT, CODEC.num_actions),
                "render_modes": ["ansi", "human"], "is_parallelizable": False}
    OPTIONS = {"num_players": 2, "illegal_action": "raise"}
    MIN_PLAYERS, MAX_PLAYERS = MIN_PLAYERS, MAX_PLAYERS
    NUM_ACTIONS, OBS_SIZE, OBS_HIGH, LAYOUT = CODEC.num_actions, layout_size(LAYOUT), 1.0, LAYOUT
    CODEC = CODEC

    def _new_game(self, seed: int) -> ToyAuction:
        return ToyAuction(self.num_players, seed=seed)

    def _new_observer(self) -> ToyObserver:
        return ToyObserver()

    def _compute_mask(self) -> np.ndarray:
        return CODEC.mask(self.game.legal_options(), self.game.decision.player, self.num_players)

    def _decode(self, action: int, seat: int) -> tuple:
        return CODEC.decode(action, seat, self.num_players)

    def _describe(self, action: int) -> str:
        return CODEC.describe(action)

    def _final_rewards(self) -> list[float]:
        n, winners = self.num_players, set(self.game.winners)
        k = len(winners)
        return [0.0] * n if k == n else [1.0 / k if p in winners else -1.0 / (n - k) for p in range(n)]

    def render_text(self, viewer: int) -> str:
        return f"toy auction, seen by player_{viewer}: {self.game.state_dict()}"


def env(**kwargs: Any):
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


SPEC = GameSpec(
    id="toyauction", title="Toy sealed-bid auction", raw_env=raw_env, env=env, engine=ToyAuction, replay=replay,
    decode=OBSERVATION.decode, default_bot="random", gym_id="ToyAuction-v0", default_players=2,
    action_table=CODEC.layout_table, observation_table=OBSERVATION.table,
)
