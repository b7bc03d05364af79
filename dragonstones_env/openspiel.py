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
  act, by his legal actions (the env's action mask: ``observation_string``). It is NOT a perfect-recall
  information state: it shows the table now (and, in Fist's ``recall`` mode, coins derived from the
  whole public past), not every past observation. So the game provides no information-state string or
  tensor; OpenSpiel's ``ISMCTSBot`` keys its nodes on the observation string with
  ``use_observation_string=True``, as this package's own ``ismcts`` keys them on the observation.
* **Resampling.** ``resample_from_infostate(player, sampler)`` is the game's determinization sampler
  (``GameSpec.sample_state``, the one the ``ismcts`` policy searches with): hidden orders redrawn, other
  players' sealed bids of the auction in progress redrawn uniformly among their legal bids, a new random
  generator seeded from two draws of ``sampler``; the player's own observation is unchanged. The new
  state's ``history()`` is empty: its past is not known, only its present.

Parameters: ``players`` (the table size), ``seed`` (-1 or a non-negative int) and each env option with a
plain default (``observation_mode``, ``max_turns``, ``max_steps``); ``illegal_action`` is ``"raise"`` (an
illegal action raises ``ValueError`` and changes nothing) and ``reward_shaping`` 0. Custom decks are not
OpenSpiel parameters. A state is not serializable (OpenSpiel pickles Python games' states; the engine's
``record`` replays a game instead) and the states of one game share one env, so use them from one thread.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

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
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters(spec),
    )


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
        raise TypeError(f"a {short_name(self.spec)} state is not serializable (OpenSpiel would pickle it): keep "
                        "the engine's record (state.engine.record) and replay it with the game's replay()")

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


class Game(pyspiel.Game):
    """One registered game at one table size and options, as an OpenSpiel game (``pyspiel.load_game``)."""

    def __init__(self, spec: GameSpec, params: dict[str, Any] | None = None):
        name = short_name(spec)
        params = {**parameters(spec), **(params or {})}
        unknown = sorted(set(params) - set(parameters(spec)))
        if unknown:
            raise ValueError(f"{name}: unknown parameter(s) {unknown}; the parameters are {sorted(parameters(spec))}")
        n, seed = params["players"], params["seed"]
        low, high = spec.players.start, spec.players.stop - 1
        if isinstance(n, bool) or not isinstance(n, int) or not low <= n <= high:
            raise ValueError(f"{name}: players must be an int from {low} to {high}, got {n!r}")
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
        self._shared = _Shared(self, spec, env, seed)

    @property
    def spec(self) -> GameSpec:
        return self._shared.spec

    @property
    def env_options(self) -> dict[str, Any]:
        """The env options the game plays with (``spec.raw_env(**env_options)`` is the same table)."""
        return dict(self._shared.env.options)

    def new_initial_state(self) -> State:
        """A new game at its chance node (apply action 0 to draw its seed)."""
        return State(self)

    def new_state_at(self, engine: Any) -> State:
        """A state at a copy of ``engine``, a game of this game and table size in progress (a position of a
        record, ``spec.replay(record)``, or an env's ``game``); its ``history()`` is empty."""
        spec, n = self._shared.spec, self._shared.num_players
        if not isinstance(engine, spec.engine) or engine.num_players != n or engine.decision is None:
            raise ValueError(f"new_state_at takes a {spec.engine.__name__} of {n} players in progress, got a "
                             f"{type(engine).__name__} of {getattr(engine, 'num_players', None)} players, decision "
                             f"{getattr(engine, 'decision', None)!r}")
        state = State(self)
        state._engine = copy.deepcopy(engine)
        return state

    def max_chance_nodes_in_history(self) -> int:
        return 1

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> Observer:
        """The env's observation of one player (the only observation type offered)."""
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
            shared.env.reset(seed=shared.next_seed())
            self._engine = shared.env.game
            return
        if self._engine.decision is None:
            raise ValueError(f"action {action}: the game is over")
        env = shared.seat(self._engine)
        env.step(action)  # an illegal action raises ValueError naming it and the legal ones; nothing changes
        self._texts = {}
        if self._engine.decision is None:
            self._returns = env.outcome()
            self._final = [env.observe(agent)["observation"] for agent in env.possible_agents]

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
        seed = [int(probability_sampler() * 2**53) for _ in range(2)]
        engine = shared.spec.sample_state(self._engine, player_id, np.random.default_rng(seed), shared.env.options)
        state = State(shared.game)
        state._engine = engine
        return state

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

    def _check_player(self, player: Any) -> None:
        n = self._shared.num_players
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < n:
            raise ValueError(f"player must be an int from 0 to {n - 1}, got {player!r}")


class Observer:
    """OpenSpiel's observer of the env's observation (``tensor``, ``dict``, ``set_from``, ``string_from``)."""

    def __init__(self, shared: _Shared, iig_obs_type: Any = None, params: dict | None = None):
        name = short_name(shared.spec)
        if params:
            raise ValueError(f"{name}: the observer takes no parameters, got {params}")
        if iig_obs_type is not None and (
            iig_obs_type.perfect_recall or not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(f"{name} offers one observation type, the env's (public information and the player's "
                             "own, without perfect recall): no information state, no public-only or private-only "
                             f"observation; got perfect_recall={iig_obs_type.perfect_recall}, public_info="
                             f"{iig_obs_type.public_info}, private_info={iig_obs_type.private_info}")
        self.tensor = np.zeros(shared.spec.raw_env.OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: State, player: int) -> None:
        self.tensor[:] = state.observation_vector(player)

    def string_from(self, state: State, player: int) -> str:
        return state.observation_text(player)


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
