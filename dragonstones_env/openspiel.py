"""Every registered game as an OpenSpiel Python game: ``pyspiel.load_game("python_dragonstones")``.

Importing this module (it needs the ``openspiel`` extra: ``pip install 'dragonstones_env[openspiel]'``)
registers ``python_<game id>`` with OpenSpiel for every game of the registry that declares its reward
range and length bound (``GameSpec.reward_range``, ``GameSpec.max_decisions``): ``python_dragonstones``
and ``python_drachenschatten``. A game registered later is added by calling :func:`register` again.

>>> import pyspiel
>>> from dragonstones_env import openspiel  # registers the games
>>> game = pyspiel.load_game("python_dragonstones", {"players": 4, "seed": 7})
>>> state = game.new_initial_state()
>>> state.apply_action(0)  # the one chance outcome: the game's seed is drawn
>>> state.current_player(), len(state.legal_actions()) > 0
(0, True)

What OpenSpiel is told, and why:

* **Sequential, imperfect information.** The engine asks one player at a time; a sealed bid is a decision
  whose choice the later bidders do not observe, so simultaneous bids are sequential decisions with
  hidden information (as the PettingZoo env presents them).
* **Sampled stochastic.** The engine draws its own randomness (shuffles, stone draws) from a seed, inside
  ``apply_action``. The initial state is a chance node with one outcome (action 0, probability 1) that
  draws the game's seed, as OpenSpiel's ``negotiation`` does: the k-th initial state of a game loaded
  with ``seed=s`` that applies its chance action plays the k-th game of an env after ``reset(seed=s)``
  and k - 1 further ``reset()`` calls (``seed=-1``: fresh entropy, as ``reset()`` without a seed).
* **Zero-sum, terminal rewards.** ``returns()`` is the env's ``outcome()``: 0 for every seat until the end
  and when the game is truncated; ``min_utility``/``max_utility`` are ``GameSpec.reward_range``.
* **Actions** are the env's: ``num_distinct_actions`` is its action space, ``legal_actions()`` its mask,
  ``action_to_string`` its ``describe_action``; ``max_game_length`` is ``GameSpec.max_decisions``.
* **Observations** are what the env shows a player: its observation vector (``observation_tensor``)
  and, as a string, the vector's nonzero entries by piece name and in counts followed, for the player to
  act, by his legal actions (the env's action mask: ``observation_string``). An observation is the table
  now (and, in Fist's ``recall`` mode, coins derived from the whole public past), not every past one.
* **Information states** (perfect recall, one per seat). ``information_state_string(p)`` is ``seat p | now:
  <p's observation string> | past: <p's history>``, the history every entry of p's action-observation
  sequence in order: ``saw i:v ...`` when a step changed p's observation vector (the changed entries and
  their new values, exact), ``did a`` for each of p's own actions. A step that changes nothing p sees adds
  nothing: p cannot tell it happened (another player's sealed bid). So two states give p the same string
  exactly when p has seen and done the same things, and a later string of p's extends every earlier one.
  ``information_state_tensor(p)`` has a fixed shape, which no whole history fits: p's observation vector,
  how many times p took each action (``num_distinct_actions`` counts) and p's last action (one-hot), a
  summary for neural learners that two information sets may share; the string is the exact key (tabular
  MCCFR, ISMCTS). Histories cost an observation of every seat at every step, so a state keeps them only
  once one was asked for: the first ask replays the game from its seed (or the position it was made at),
  later actions extend them; games that never ask (ISMCTS on observations) pay nothing.
* **Resampling.** ``resample_from_infostate(player, sampler)`` is the game's determinization sampler
  (``GameSpec.sample_state``, the one the ``ismcts`` policy searches with): hidden orders redrawn, other
  players' sealed bids of the auction in progress redrawn uniformly among their legal bids, a new random
  generator seeded from two draws of ``sampler``; the player's own observation is unchanged, and so is his
  information state. The new state's ``history()`` is empty: its past is not known, only its present; the
  other seats' histories there (and every seat's in a state made by :meth:`Game.new_state_at`) begin
  with ``?`` (an unknown past) and their observation at that position.
* **Serialization** is the game's verified record: ``state.serialize()`` is JSON text (the game and its
  parameters, the seed its chance action drew, its actions, the SHA-256 of its engine's record) and
  ``game.deserialize_state(text)`` draws that seed, applies the actions (each checked legal) and checks
  the record; bad text raises ``ValueError`` naming what is wrong. Never a pickle: OpenSpiel's own
  ``pickle``/``pyspiel.serialize_game_and_state`` do not apply to a sampled-stochastic Python game (they
  raise "GetRNGState unimplemented"), and its C++ serialization of a Python state, which pickles the
  state's attributes, is refused (``TypeError``). :func:`serialize_game_and_state` and
  :func:`deserialize_game_and_state` carry the game too. A state that began at a position (no seed) is not
  serialized: keep its engine's ``record``.
* **OpenSpiel's C++ ISMCTSBot** cannot play these games (nor any Python game, in open-spiel 2.0.2): its
  ``step`` releases Python's interpreter lock and then calls the game's Python code without it, a
  segmentation fault. :func:`ismcts_bot` returns OpenSpiel's Python ``ISMCTSBot`` set up for these games
  and refuses the C++ one with a clear error.

Parameters: ``players`` (the table size), ``seed`` (-1 or a non-negative int) and each env option with a
plain default (``observation_mode``, ``max_turns``, ``max_steps``); ``illegal_action`` is ``"raise"`` (an
illegal action raises ``ValueError`` and changes nothing) and ``reward_shaping`` 0. Custom decks are not
OpenSpiel parameters. The states of one game share one env, so use them from one thread.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from dragonstones_env import games
from dragonstones_env.layout import exact_vector, scale_vector
from dragonstones_env.registry import GameSpec

PREFIX = "python_"
# Env options the wrapper fixes rather than offers: OpenSpiel has no "penalize" (an illegal action is an
# error), and its returns are the game's zero-sum end, so no reward is paid before it.
FIXED = {"illegal_action": "raise", "reward_shaping": 0.0}
_PLAIN = (bool, int, float, str)  # what an OpenSpiel game parameter holds


def short_name(spec: GameSpec) -> str:
    """The OpenSpiel name of a game: ``python_<game id>``."""
    return PREFIX + spec.id


def parameters(spec: GameSpec) -> dict[str, Any]:
    """The OpenSpiel parameters of a game and their defaults: ``players``, ``seed`` and the env's options
    with a plain default, but the fixed ones (:data:`FIXED`)."""
    out: dict[str, Any] = {"players": spec.default_players, "seed": -1}
    for key, value in spec.options.items():
        if key != "num_players" and key not in FIXED and isinstance(value, _PLAIN):
            out[key] = value
    return out


def offered(spec: GameSpec) -> bool:
    """Whether a game declares what OpenSpiel needs (its reward range and length bound)."""
    return spec.reward_range is not None and spec.max_decisions is not None


def game_type(spec: GameSpec) -> pyspiel.GameType:
    """The game's OpenSpiel type (see the module's docstring)."""
    return pyspiel.GameType(
        short_name=short_name(spec),
        long_name=f"{spec.title} ({spec.name}, dragonstones_env)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.players.stop - 1,
        min_num_players=spec.players.start,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters(spec),
    )


FORMAT = "dragonstones_env.openspiel/1"  # the version of serialize()'s text; another is refused
UNKNOWN_PAST = "?"  # a seat's history entry: what came before the position a state was made at
SERIALIZED_KEYS = ("format", "game", "params", "seed", "actions", "record_sha256")


class _Shared:
    """What every state of one loaded game shares: the spec, an env of its table to read masks, observations
    and action names through and to apply actions with (seated at one state's engine at a time, by
    :meth:`seat`), the observation's scales, and the game's seeds. OpenSpiel clones a state by deep-copying
    each of its attributes: this one is shared, not copied."""

    def __init__(self, game: Game, spec: GameSpec, env: Any, seed: int):
        self.game = game
        self.spec = spec
        self.env = env
        self.num_players = env.num_players
        layout = spec.raw_env.LAYOUT
        self.scales = scale_vector(layout)
        self.exact = exact_vector(layout)
        piece_of = np.empty(spec.raw_env.OBS_SIZE, np.intp)
        self.pieces = list(layout.values())
        for i, piece in enumerate(self.pieces):
            piece_of[piece.slice] = i
        self.piece_of = piece_of
        # env.reset(seed=s), then env.reset(): the first game's seed is s, the next ones drawn from it
        self._first = None if seed < 0 else seed
        self._seeder = np.random.default_rng(self._first)

    def __deepcopy__(self, memo: dict) -> _Shared:
        return self

    def __reduce__(self) -> Any:
        # OpenSpiel's C++ side serializes a Python game's state by pickling its attributes (pickle.dumps,
        # pyspiel.serialize_game_and_state) and deserializes by unpickling whatever text it is handed: refused.
        raise TypeError(f"a {short_name(self.spec)} state is not pickled (pickle, pyspiel.serialize_game_and_state):"
                        " use state.serialize() and game.deserialize_state(text), or this module's "
                        "serialize_game_and_state / deserialize_game_and_state (JSON: the seed and the actions, "
                        "replayed and verified)")

    def next_seed(self) -> int:
        if self._first is not None:
            seed, self._first = self._first, None
            return seed
        return int(self._seeder.integers(2**63))

    def seat(self, engine: Any) -> Any:
        """The env, playing ``engine`` (a game in progress)."""
        if self.env.game is not engine:
            self.env.resume(engine)
        return self.env

    def observations(self, engine: Any) -> list[np.ndarray]:
        """Every seat's observation vector of ``engine`` (copies: the env may reuse its buffers)."""
        env = self.seat(engine)
        return [np.array(env.observe(agent)["observation"], np.float32) for agent in env.possible_agents]

    def text(self, obs: np.ndarray) -> str:
        """An observation as text: its nonzero entries by piece, in counts (``index=count`` within a piece's
        flat entries). Exact: two observations give the same text only if they are equal."""
        values = np.asarray(obs, np.float64) * self.scales
        values = np.where(self.exact, np.rint(values), values)
        parts: list[str] = []
        last = -1
        for i in np.flatnonzero(obs).tolist():
            p = int(self.piece_of[i])
            piece = self.pieces[p]
            value = values[i]
            shown = str(int(value)) if self.exact[i] else repr(float(value))
            entry = f"{i - piece.slice.start}={shown}"
            if p != last:
                parts.append(f"{piece.name}: {entry}" if not parts else f"| {piece.name}: {entry}")
                last = p
            else:
                parts.append(entry)
        return " ".join(parts)


class _View:
    """One seat's action-observation history (its information state): ``entries`` in order, each ``saw
    i:v ...`` (the entries of its observation vector that changed, new values; a step that changed nothing
    it sees adds nothing), ``did a`` (its own action) or :data:`UNKNOWN_PAST`; ``last`` its observation now
    and ``acts`` its own actions, for the tensor."""

    __slots__ = ("acts", "entries", "last")

    def __init__(self, size: int):
        self.entries: list[str] = []
        self.last = np.zeros(size, np.float32)
        self.acts: list[int] = []

    def copy(self) -> _View:
        out = _View.__new__(_View)
        out.entries, out.last, out.acts = list(self.entries), self.last.copy(), list(self.acts)
        return out

    def see(self, obs: np.ndarray) -> None:
        changed = np.flatnonzero(obs != self.last)
        if changed.size:
            # '.9g' writes a float32 exactly (it round-trips): the entry is the vector's, not a rounding of it
            self.entries.append("saw " + " ".join(f"{i}:{v:.9g}" for i, v in zip(changed.tolist(),
                                                                                 obs[changed].tolist(), strict=True)))
            self.last = obs

    def did(self, action: int) -> None:
        self.entries.append(f"did {action}")
        self.acts.append(action)


class _Origin:
    """Where a state's game began, to replay its seats' histories from (only when an information state is
    asked for: tracking them costs an observation of every seat at every step). Exactly one of: ``seed`` (the
    game's own beginning: the chance node drew it), ``engine`` (a private copy of the position a state was
    made at, never played on; ``heir``, if given, is ``(seat, _View)``: that seat's history up to there) or
    ``parent`` (a state resampled from another, rebuilt by replaying the parent's ``(origin, actions)`` and
    drawing ``seat``'s determinization again with the same ``draw``). Immutable: clones share it."""

    __slots__ = ("draw", "engine", "heir", "parent", "seat", "seed")

    def __init__(self, *, seed: int | None = None, engine: Any = None, heir: tuple[int, _View] | None = None,
                 parent: tuple[_Origin, tuple[int, ...]] | None = None, seat: int = -1, draw: Any = None):
        self.seed, self.engine, self.heir, self.parent, self.seat, self.draw = seed, engine, heir, parent, seat, draw

    def __deepcopy__(self, memo: dict) -> _Origin:
        return self


def _replay(shared: _Shared, origin: _Origin, actions: tuple[int, ...] | list[int]) -> tuple[Any, list[_View]]:
    """A new engine at the end of ``actions`` played from ``origin``, and every seat's history up to there."""
    n, size = shared.num_players, shared.spec.raw_env.OBS_SIZE
    views = [_View(size) for _ in range(n)]
    heir = None
    if origin.seed is not None:
        shared.env.reset(seed=origin.seed)
        engine = shared.env.game
    elif origin.engine is not None:
        # observed only, when no action follows (a resampled state asked at once, as ISMCTS's root is)
        engine = copy.deepcopy(origin.engine) if actions else origin.engine
        heir = origin.heir
    else:
        parent, parent_actions = origin.parent
        before, parent_views = _replay(shared, parent, parent_actions)
        engine = shared.spec.sample_state(before, origin.seat, np.random.default_rng(origin.draw), shared.env.options)
        heir = (origin.seat, parent_views[origin.seat])
    if origin.seed is None:  # a position: the seats' pasts are unknown, but the heir's (his own, kept)
        for q, view in enumerate(views):
            if heir is not None and q == heir[0]:
                views[q] = heir[1].copy()
            else:
                view.entries.append(UNKNOWN_PAST)
    for view, obs in zip(views, shared.observations(engine), strict=True):
        view.see(obs)
    for action in actions:
        player = engine.decision.player
        shared.seat(engine).step(action)
        views[player].did(action)
        for view, obs in zip(views, shared.observations(engine), strict=True):
            view.see(obs)
    return engine, views


def _digest(engine: Any) -> str:
    return hashlib.sha256(json.dumps(engine.record, sort_keys=True).encode()).hexdigest()


class Game(pyspiel.Game):
    """One registered game at one table size and options, as an OpenSpiel game (``pyspiel.load_game``)."""

    def __init__(self, spec: GameSpec, params: dict[str, Any] | None = None):
        name = short_name(spec)
        params = {**parameters(spec), **(params or {})}
        unknown = sorted(set(params) - set(parameters(spec)))
        if unknown:
            raise ValueError(f"{name}: unknown parameter(s) {unknown}; the parameters are {sorted(parameters(spec))}")
        n, seed = params["players"], params["seed"]
        try:
            spec.check_players(n, "players")
        except ValueError as err:  # the parameter's game said first, as for every other parameter
            raise ValueError(f"{name}: {err}") from None
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < -1:
            raise ValueError(f"{name}: seed must be -1 (fresh entropy) or a non-negative int, got {seed!r}")
        options = {k: v for k, v in params.items() if k not in ("players", "seed")}
        options.update({k: v for k, v in FIXED.items() if k in spec.options})
        try:
            env = spec.raw_env(num_players=n, **options)
        except ValueError as err:  # a bad option: the env names it and what is allowed
            raise ValueError(f"{name}: {err}") from None
        bound = spec.max_decisions(n, env.options)
        if bound is None:
            raise ValueError(f"{name}: no bound on the length of a game with these options")
        least, most = spec.reward_range(n)
        info = pyspiel.GameInfo(
            num_distinct_actions=spec.raw_env.NUM_ACTIONS,
            max_chance_outcomes=1,
            num_players=n,
            min_utility=float(least),
            max_utility=float(most),
            utility_sum=0.0,
            max_game_length=int(bound),
        )
        super().__init__(game_type(spec), info, params)
        self._params = dict(params)
        self._shared = _Shared(self, spec, env, seed)

    @property
    def spec(self) -> GameSpec:
        return self._shared.spec

    @property
    def env_options(self) -> dict[str, Any]:
        """The env options the game plays with (``spec.raw_env(**env_options)`` is the same table)."""
        return dict(self._shared.env.options)

    @property
    def params(self) -> dict[str, Any]:
        """The game's parameters, every one (defaults included)."""
        return dict(self._params)

    def new_initial_state(self) -> State:
        """A new game at its chance node (apply action 0 to draw its seed)."""
        return State(self)

    def new_state_at(self, engine: Any) -> State:
        """A state at a copy of ``engine``, a game of this game and table size in progress (a position of a
        record, ``spec.replay(record)``, or an env's ``game``); its ``history()`` is empty, and its seats'
        information states begin there (their pasts unknown)."""
        spec, n = self._shared.spec, self._shared.num_players
        if not isinstance(engine, spec.engine) or engine.num_players != n or engine.decision is None:
            raise ValueError(f"new_state_at takes a {spec.engine.__name__} of {n} players in progress, got a "
                             f"{type(engine).__name__} of {getattr(engine, 'num_players', None)} players, decision "
                             f"{getattr(engine, 'decision', None)!r}")
        state = State(self)
        state._engine = copy.deepcopy(engine)
        state._origin = _Origin(engine=copy.deepcopy(engine))
        return state

    def deserialize_state(self, text: str) -> State:
        """The state ``state.serialize()`` wrote (of this game: the same parameters, any seed): its seed is
        drawn and its actions applied, each checked legal, and the game's record is checked against the
        text's digest. Bad text raises ``ValueError`` naming what is wrong; nothing changes (the game's own
        seeds are not drawn from)."""
        name = short_name(self.spec)
        if not isinstance(text, str):
            raise ValueError(f"deserialize_state takes the text state.serialize() wrote, got a {type(text).__name__}")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"deserialize_state: not JSON ({err}): the text state.serialize() wrote is a JSON "
                             f"object with keys {list(SERIALIZED_KEYS)}") from None
        if not isinstance(data, dict) or set(data) != set(SERIALIZED_KEYS):
            got = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"deserialize_state: a JSON object with keys {list(SERIALIZED_KEYS)} expected, got {got}")
        if data["format"] != FORMAT:
            raise ValueError(f"deserialize_state: format {data['format']!r}; this version reads {FORMAT!r}")
        if data["game"] != name:
            raise ValueError(f"deserialize_state: a state of {data['game']!r}, this game is {name!r}")
        mine = {k: v for k, v in self._params.items() if k != "seed"}
        if data["params"] != mine:
            theirs = data["params"] if isinstance(data["params"], dict) else {}
            differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            raise ValueError(f"deserialize_state: a state of a game with other parameters ({differ or data['params']!r}"
                             f"): this game's are {mine}; load the game with the state's (pyspiel.load_game)")
        seed, actions = data["seed"], data["actions"]
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
            raise ValueError(f"deserialize_state: seed must be null (the chance node) or an int from 0 to 2**63 - 1, "
                             f"got {seed!r}")
        if not isinstance(actions, list) or any(isinstance(a, bool) or not isinstance(a, int) for a in actions):
            raise ValueError(f"deserialize_state: actions must be a list of ints, got {actions!r:.200}")
        if seed is None and actions:
            raise ValueError("deserialize_state: actions without a seed: a game's first action draws its seed")
        state = State(self)
        if seed is not None:
            state._seed_to_draw = seed
            state.apply_action(0)
        for i, action in enumerate(actions):
            if state.is_terminal():
                raise ValueError(f"deserialize_state: action {i} ({action}): the game was over after {i} actions")
            if action not in state.legal_actions():
                raise ValueError(f"deserialize_state: action {i} ({action}) is not legal there; the legal actions "
                                 f"were {state.legal_actions()}")
            state.apply_action(action)
        found = None if state._engine is None else _digest(state._engine)
        if found != data["record_sha256"]:
            raise ValueError(f"deserialize_state: the replayed game's record does not match the text's digest "
                             f"(record_sha256 {data['record_sha256']!r:.80}, replayed {found!r}): another version "
                             "of the rules, or changed text")
        return state

    def max_chance_nodes_in_history(self) -> int:
        return 1

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> Observer:
        """The env's observation of one player (the default), or his information state (``perfect_recall``)."""
        return Observer(self._shared, iig_obs_type, params)


class State(pyspiel.State):
    """A game in progress: the engine (None at the chance node), and once over each seat's return and
    final observation. Every other method reads the engine through the game's env (see :class:`_Shared`)."""

    def __init__(self, game: Game):
        super().__init__(game)
        self._shared = game._shared
        self._engine: Any = None
        self._returns: list[float] | None = None
        self._final: list[np.ndarray] | None = None
        self._texts: dict[int, str] = {}  # observation strings of this position, by player
        self._origin: _Origin | None = None  # where the game began (None: at the chance node)
        self._views: list[_View] | None = None  # every seat's history, once an information state was asked for
        self._seed_to_draw: int | None = None  # deserialize_state's seed, drawn by the chance action

    @property
    def engine(self) -> Any:
        """The rules engine (``record``, ``state_dict()``, ...), None at the chance node. Read it, do not change
        it: actions go through :meth:`apply_action`."""
        return self._engine

    # ------------------------------------------------------------------ the OpenSpiel state API
    def current_player(self) -> int:
        if self._engine is None:
            return int(pyspiel.PlayerId.CHANCE)
        d = self._engine.decision
        return int(pyspiel.PlayerId.TERMINAL) if d is None else d.player

    def is_terminal(self) -> bool:
        return self._engine is not None and self._engine.decision is None

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._engine is not None:
            raise ValueError("chance_outcomes: only the initial state (before its seed is drawn) is a chance node")
        return [(0, 1.0)]

    def _legal_actions(self, player: int) -> list[int]:
        return self._shared.seat(self._engine).legal_actions()

    def _apply_action(self, action: int) -> None:
        shared = self._shared
        if self._engine is None:
            if action != 0:
                raise ValueError(f"the chance node has one outcome, action 0 (the game's seed is drawn), got {action}")
            seed = shared.next_seed() if self._seed_to_draw is None else self._seed_to_draw
            self._seed_to_draw = None
            shared.env.reset(seed=seed)
            self._engine = shared.env.game
            self._origin = _Origin(seed=seed)
            if self._views is not None:
                for view, obs in zip(self._views, shared.observations(self._engine), strict=True):
                    view.see(obs)
            return
        if self._engine.decision is None:
            raise ValueError(f"action {action}: the game is over")
        player = self._engine.decision.player
        env = shared.seat(self._engine)
        env.step(action)  # an illegal action raises ValueError naming it and the legal ones; nothing changes
        self._texts = {}
        if self._engine.decision is None:
            self._returns = env.outcome()
            self._final = [env.observe(agent)["observation"] for agent in env.possible_agents]
        if self._views is not None:
            self._views[player].did(int(action))
            for view, obs in zip(self._views, shared.observations(self._engine), strict=True):
                view.see(obs)

    def _action_to_string(self, player: int, action: int) -> str:
        if self._engine is None:
            return "draw the game's seed"
        if self._engine.decision is None:
            return f"action {action} (the game is over)"
        return self._shared.seat(self._engine).describe_action(action)

    def returns(self) -> list[float]:
        return list(self._returns) if self._returns is not None else [0.0] * self._shared.num_players

    def __str__(self) -> str:
        if self._engine is None:
            return f"{self._shared.spec.title}: the chance node (the game's seed is drawn next)"
        return json.dumps(self._engine.state_dict(), sort_keys=True)

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> State:
        """A state ``player_id`` cannot tell from this one, drawn by the game's sampler (``GameSpec.sample_state``)
        with a generator seeded by two draws of ``probability_sampler`` (see the module's docstring)."""
        shared = self._shared
        self._check_player(player_id)
        if shared.spec.sample_state is None:
            raise ValueError(f"{short_name(shared.spec)} has no determinization sampler (GameSpec.sample_state)")
        if self._engine is None:
            return self.clone()
        if self._engine.decision is None:
            raise ValueError("resample_from_infostate needs a game in progress; this one is over")
        draw = [int(probability_sampler() * 2**53) for _ in range(2)]
        engine = shared.spec.sample_state(self._engine, player_id, np.random.default_rng(draw), shared.env.options)
        state = State(shared.game)
        state._engine = engine
        if self._views is not None:  # information states are in use: keep the position and the seat's history
            state._origin = _Origin(engine=copy.deepcopy(engine), heir=(player_id, self._views[player_id].copy()))
        else:  # kept cheap (searches on observations resample at every simulation): rebuilt if ever asked for
            state._origin = _Origin(parent=(self._origin, tuple(self._actions())), seat=player_id, draw=draw)
        return state

    # ------------------------------------------------------------------ serialization: the seed and the actions
    def serialize(self) -> str:
        """The state as JSON text: the game and its parameters, the seed its chance action drew, its actions and
        the SHA-256 of its engine's record (:meth:`Game.deserialize_state` replays and checks them). Not a pickle."""
        shared = self._shared
        origin = self._origin
        if origin is not None and origin.seed is None:
            raise ValueError("serialize: this state began at a position (new_state_at, resample_from_infostate), "
                             "not at its game's seed: keep its engine's record instead (state.engine.record; the "
                             "game's GameSpec.replay rebuilds it)")
        params = {k: v for k, v in shared.game.params.items() if k != "seed"}
        data = {
            "format": FORMAT,
            "game": short_name(shared.spec),
            "params": params,
            "seed": None if origin is None else origin.seed,
            "actions": self._actions(),
            "record_sha256": None if self._engine is None else _digest(self._engine),
        }
        return json.dumps(data, sort_keys=True)

    def _actions(self) -> list[int]:
        """The actions since the state's origin (its history but the chance action)."""
        history = self.history()
        return history[1:] if self._origin is not None and self._origin.seed is not None else history

    # ------------------------------------------------------------------ observations (the Observer's)
    def observation_vector(self, player: int) -> np.ndarray:
        """The env's observation vector of ``player`` (zeros at the chance node)."""
        shared = self._shared
        self._check_player(player)
        if self._engine is None:
            return np.zeros(shared.spec.raw_env.OBS_SIZE, np.float32)
        if self._final is not None:
            return self._final[player]
        env = shared.seat(self._engine)
        return env.observe(env.possible_agents[player])["observation"]

    def observation_text(self, player: int) -> str:
        """The observation as text and, for the player to act, his legal actions: what the env shows him (the
        vector and the action mask). The vector alone does not always settle them (DrachenSchatten: the stacks
        a torch has shown in this use are no longer legal, those it showed in an earlier one are), and a
        search keying its nodes on this string needs the same actions at every visit of a node."""
        text = self._texts.get(player)
        if text is None:
            text = self._shared.text(self.observation_vector(player))
            if self._engine is not None and player == self.current_player():
                text += " || legal: " + " ".join(map(str, self._legal_actions(player)))
            self._texts[player] = text
        return text

    # ------------------------------------------------------------------ information states (the Observer's)
    def _track(self) -> list[_View]:
        """Every seat's history: replayed from the origin the first time, then kept up at every action."""
        if self._views is None:
            shared = self._shared
            n, size = shared.num_players, shared.spec.raw_env.OBS_SIZE
            if self._origin is None:  # the chance node: nothing seen yet
                self._views = [_View(size) for _ in range(n)]
            else:
                engine, views = _replay(shared, self._origin, self._actions())
                if len(engine.record) != len(self._engine.record):  # the engines are deterministic: never
                    raise RuntimeError("replaying a state's actions from its origin gave another game")
                self._views = views
        return self._views

    def information_text(self, player: int) -> str:
        """The player's information state as text: his seat, his observation now (with his legal actions if he
        is to act), and his whole history (``saw``/``did`` entries, see :class:`_View`)."""
        self._check_player(player)
        view = self._track()[player]
        return f"seat {player} | now: {self.observation_text(player)} | past: {' ; '.join(view.entries)}"

    def information_vector(self, player: int) -> np.ndarray:
        """The player's information-state tensor: his observation vector, how many times he took each action
        and his last action (one-hot); a fixed-size summary of his history (the text is the exact one)."""
        self._check_player(player)
        shared = self._shared
        view = self._track()[player]
        size, actions = shared.spec.raw_env.OBS_SIZE, shared.spec.raw_env.NUM_ACTIONS
        out = np.zeros(size + 2 * actions, np.float32)
        out[:size] = self.observation_vector(player)
        if view.acts:
            out[size:size + actions] = np.bincount(view.acts, minlength=actions)
            out[size + actions + view.acts[-1]] = 1.0
        return out

    def _check_player(self, player: Any) -> None:
        n = self._shared.num_players
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < n:
            raise ValueError(f"player must be an int from 0 to {n - 1}, got {player!r}")


class Observer:
    """OpenSpiel's observer (``tensor``, ``dict``, ``set_from``, ``string_from``) of one of the two views the
    game offers: the env's observation, or (``perfect_recall=True``) the player's information state."""

    def __init__(self, shared: _Shared, iig_obs_type: Any = None, params: dict | None = None):
        name = short_name(shared.spec)
        if params:
            raise ValueError(f"{name}: the observer takes no parameters, got {params}")
        if iig_obs_type is not None and (
            not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(f"{name} offers two views of a player, both of public information and his own: the "
                             "env's observation and (perfect_recall=True) his information state; no public-only or "
                             f"private-only view; got public_info={iig_obs_type.public_info}, "
                             f"private_info={iig_obs_type.private_info}")
        self.recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        size, actions = shared.spec.raw_env.OBS_SIZE, shared.spec.raw_env.NUM_ACTIONS
        if self.recall:
            self.tensor = np.zeros(size + 2 * actions, np.float32)
            self.dict = {"observation": self.tensor[:size], "action_counts": self.tensor[size:size + actions],
                         "last_action": self.tensor[size + actions:]}
        else:
            self.tensor = np.zeros(size, np.float32)
            self.dict = {"observation": self.tensor}

    def set_from(self, state: State, player: int) -> None:
        self.tensor[:] = state.information_vector(player) if self.recall else state.observation_vector(player)

    def string_from(self, state: State, player: int) -> str:
        return state.information_text(player) if self.recall else state.observation_text(player)


def game_class(spec: GameSpec) -> type[Game]:
    """The class OpenSpiel creates a game with, ``cls(params)``: :class:`Game` bound to the game's id (the spec
    is looked up when a game is loaded). A class, as OpenSpiel's own Python games register: OpenSpiel's
    registry drops its reference to the creator after the interpreter has shut down, and a creator freed
    then aborts the interpreter at exit; a class refers to itself (its ``__mro__``), so it never is, while
    a function or ``functools.partial`` is once its module is gone."""
    game_id = spec.id

    def __init__(self: Game, params: dict[str, Any] | None = None) -> None:
        Game.__init__(self, games.get(game_id), params)

    return type(f"Game_{game_id}", (Game,), {"__init__": __init__, "__doc__": f"{short_name(spec)}: {Game.__doc__}"})


def serialize_game_and_state(game: Game, state: State) -> str:
    """A game and a state of it as JSON text (OpenSpiel's ``pyspiel.serialize_game_and_state`` pickles a
    Python game's state, which is refused): the game's name and parameters, and ``state.serialize()``."""
    if not isinstance(game, Game) or not isinstance(state, State) or state._shared is not game._shared:
        raise ValueError("serialize_game_and_state takes a game of this module and a state of that game")
    return json.dumps({"format": FORMAT, "game": short_name(game.spec), "params": game.params,
                       "state": json.loads(state.serialize())}, sort_keys=True)


def deserialize_game_and_state(text: str) -> tuple[Game, State]:
    """The game (loaded anew, ``pyspiel.load_game``) and state :func:`serialize_game_and_state` wrote; the state
    replayed and checked by :meth:`Game.deserialize_state`. Bad text raises ``ValueError`` naming what is wrong."""
    try:
        data = json.loads(text)
    except (TypeError, json.JSONDecodeError) as err:
        raise ValueError(f"deserialize_game_and_state: not JSON text ({err})") from None
    keys = ["format", "game", "params", "state"]
    if not isinstance(data, dict) or sorted(data) != keys:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"deserialize_game_and_state: a JSON object with keys {keys} expected, got {got}")
    if data["format"] != FORMAT:
        raise ValueError(f"deserialize_game_and_state: format {data['format']!r}; this version reads {FORMAT!r}")
    if data["game"] not in _CLASSES:
        raise ValueError(f"deserialize_game_and_state: unknown game {data['game']!r}; the games are {sorted(_CLASSES)}")
    if not isinstance(data["params"], dict):
        raise ValueError(f"deserialize_game_and_state: params must be an object, got {data['params']!r:.200}")
    game = pyspiel.load_game(data["game"], data["params"])
    return game, game.deserialize_state(json.dumps(data["state"]))


def ismcts_bot(game: Game, *, simulations: int, seed: int = 0, uct_c: float = 2.0, rollouts: int = 1,
               use_observation_string: bool = False, cpp: bool = False) -> Any:
    """OpenSpiel's Python ``ISMCTSBot`` on ``game``: random-rollout evaluation (``rollouts`` a leaf), keyed on
    the players' information states (or observations), resampling with the game's determinization sampler
    through a sampler seeded with ``seed`` (so the bot is deterministic).

    ``cpp=True`` asks for OpenSpiel's C++ ``pyspiel.ISMCTSBot`` and is refused: its ``step`` releases Python's
    global interpreter lock and then calls this Python game back (its observer, its strings) without taking
    it again, which crashes the interpreter with a segmentation fault (open-spiel 2.0.2); no setting of the
    game can prevent it, so use this Python bot."""
    if cpp:
        raise ValueError("OpenSpiel's C++ pyspiel.ISMCTSBot cannot play a Python game: its step() releases "
                         "Python's interpreter lock, then calls the game's Python code without it and crashes the "
                         "interpreter (a segmentation fault). Use the Python ISMCTSBot: ismcts_bot(..., cpp=False)")
    if not isinstance(game, Game):
        raise ValueError(f"ismcts_bot takes a game of this module (pyspiel.load_game('python_...')), got {game!r}")
    for name, value in (("simulations", simulations), ("rollouts", rollouts), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "seed" else 1):
            raise ValueError(f"ismcts_bot: {name} must be an int {'>= 0' if name == 'seed' else '>= 1'}, got {value!r}")
    rs = np.random.RandomState(seed)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(rollouts, rs), float(uct_c), simulations,
                           random_state=rs, use_observation_string=use_observation_string)
    sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
    return bot


_CLASSES: dict[str, type[Game]] = {}  # by OpenSpiel name: what register() has registered


def register() -> list[str]:
    """Register every game of the registry that OpenSpiel can be offered (:func:`offered`) and is not yet
    registered; the OpenSpiel names of all of them. Called when this module is imported."""
    known = set(pyspiel.registered_names())
    names = []
    for spec in games.all():
        if not offered(spec):
            continue
        name = short_name(spec)
        if name not in known:
            _CLASSES[name] = game_class(spec)
            pyspiel.register_game(game_type(spec), _CLASSES[name])
        names.append(name)
    return names


NAMES = register()
