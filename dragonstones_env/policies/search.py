"""``ismcts``: information-set Monte Carlo tree search (Cowling, Powley & Whitehouse 2012), every game.

Each decision runs ``simulations`` simulations. One simulation:

1. draws a *determinization*, a whole game consistent with what the seat knows, from the seat's
   :class:`~.information.InformationState` (the game's own sampler, ``GameSpec.sample_state``:
   hidden orders shuffled, other players' sealed bids drawn again, ...);
2. descends the tree: at every decision, the player to act picks with UCB1 among the actions legal
   *in this determinization*, with availability counts (an action's exploration term counts the
   visits in which it was legal, not all visits of the node);
3. expands one new node, then plays on with the rollout policy (one copy per seat) to the end of the
   game, or for ``horizon`` decisions, where each seat's reward is the rollout policy's estimate
   (a rule bot's ``win_chance``, a checkpoint's critic: its ``value``);
4. backs up every seat's own reward at that seat's own nodes: every player plays for himself.

**Sealed bids and information sets.** A node is a player's *information set*: the key is the acting
player and the observation the env gives him there. So each player decides with statistics of what
he can tell apart, never with another's: at the bid of a player who bids after the searching seat,
the node is the same whatever the seat sealed (his observation does not show it), and his choice is
made on his own statistics, decoupled from the seat's hidden bid; the bids sealed before the seat's
are redrawn in every determinization (``hidden``: as the rollout policy would bid them at that
player's view of the determinization, or uniformly), so the seat's own node never sees them either.
This is the multiple-observer form of ISMCTS, with the observation as each player's tree.

**Wide decisions.** A gold bid has up to a few hundred legal actions; a node considers them by
progressive widening: first the rollout policy's choice there, then one more legal action drawn at
random each time ``1 + widen * sqrt(visits)`` passes a whole number (at ``widen=0.5``: a second after
4 visits, a third after 16, ...). So few simulations keep to the rollout policy's choice, and more
simulations test more alternatives to it (a policy improvement of the rollout policy). With
``order=probability`` and a checkpoint as the rollout policy, the candidates come in the order of its
probabilities instead (its likeliest move first, then the next likeliest): few simulations with
noisy returns then weigh the moves the policy itself rates, not random ones.

**A search by name.** A checkpoint folder whose ``card.json`` says ``"algorithm": "ismcts"`` and names a
search, ``"search": "ismcts:simulations=100:rollout=ds-champion:..."``, loads as that search under the
folder's name (a shipped search: its card lists its cells and its cost per decision). Its rollout policy
must be a built-in or shipped name, never a path: a card is not trusted to point at files.

The policy needs the game: whatever seats it calls ``observe_game(info)`` before ``act``
(:func:`~.information.decide`; the arena, the Gymnasium env, the app and the trainers do). It uses
nothing its seat is not entitled to: it reads the game only through ``info.sample``.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace
from itertools import islice
from typing import Any

import numpy as np

from dragonstones_env import games
from dragonstones_env.bounds import BOUNDS, InputError
from dragonstones_env.core import same_game

from .base import Policy, PolicyError, Table
from .checkpoint import VALUE_FILE, Guard, game_guard
from .information import InformationState

NAME = "ismcts"
ALGORITHM = NAME  # card.json's "algorithm" of a folder that names a search (load_card)
AUTO_HORIZON = 40  # decisions looked ahead when the rollout policy can judge a position (about a turn of bids)



class _GiveWay(threading.local):
    event: threading.Event | None = None  # per thread: None, or wait for it between simulations


_GIVE_WAY = _GiveWay()


@contextlib.contextmanager
def giving_way(clear: threading.Event) -> Iterator[None]:
    """Searches this thread runs inside the block wait, before each simulation, while ``clear`` is not
    set. The web app's all-bot tables give way so to a human table's search: threads share the
    interpreter's lock, so a search running beside the human's would halve its speed (issue #49).
    Waiting draws nothing from the search's random stream: every decision is the same."""
    _GIVE_WAY.event = clear
    try:
        yield
    finally:
        _GIVE_WAY.event = None

@dataclass(frozen=True)
class SearchOptions:
    """The options of a search, as a spec writes them: ``ismcts:simulations=400:rollout=random``."""

    simulations: int = 30  # about 0.5 s a decision on one core in both games (docs/results.md)
    rollout: str | None = None  # a policy spec; None: the game's own bot (GameSpec.default_bot)
    horizon: int | None = None  # None ("auto"): AUTO_HORIZON if the rollout policy judges positions, else 0
    c: float = 0.7  # UCB1's exploration constant, on mean rewards scaled to 0..1 at each node
    widen: float = 0.5  # progressive widening: a node considers 1 + widen * sqrt(visits) actions
    hidden: str = "model"  # the others' sealed bids: "model" (the rollout policy) or "uniform"
    order: str = "sample"  # widening: "sample" (the rollout policy's move, then random) or "probability"
    seed: int | None = None  # the search's seed when load_policy is given none
    guard: int | None = None  # None, or its game's loop guard at this limit at every node (GameSpec.loop_guard)

    def spec(self) -> str:
        """The spec that loads these options (only those that differ from the defaults)."""
        parts = [f"{f.name}={'auto' if v is None and f.name == 'horizon' else v}" for f in fields(self)
                 if (v := getattr(self, f.name)) != f.default]
        return ":".join([NAME, *parts])


OPTION_HELP = {
    "simulations": f"simulations per decision, {BOUNDS['ismcts.simulations'].describe()}",
    "rollout": "the policy that plays the simulations on (a policy spec, not ismcts; default: the game's bot)",
    "horizon": "decisions a simulation looks ahead before the rollout policy judges it (a bot's win_chance, a "
               "checkpoint's critic): "
               f"{BOUNDS['ismcts.horizon'].describe()} (0: to the end of the game) or auto",
    "c": f"UCB1's exploration constant (on each node's mean rewards scaled to 0..1), {BOUNDS['ismcts.c'].describe()}",
    "widen": f"progressive widening, {BOUNDS['ismcts.widen'].describe()} (0: only the rollout policy's choice and "
             "the root's)",
    "hidden": "how the others' sealed bids are drawn: model (as the rollout policy would bid) or uniform",
    "order": "the order a node widens in: sample (the rollout policy's move, then random legal actions) or "
             "probability (by the rollout policy's probabilities, likeliest first: a checkpoint)",
    "seed": f"the search's seed when none is given to load_policy, {BOUNDS['ismcts.seed'].describe()}",
    "guard": "the game's loop guard at every decision of the tree, as a checkpoint's card asks for it "
             f"(loop_guard): {BOUNDS['ismcts.guard'].describe()}, within the game's limits",
}
assert set(OPTION_HELP) == {f.name for f in fields(SearchOptions)}


def _bounded(option: str) -> Callable[[str], Any]:
    """A parser of one numeric option, checked against its row of the bounds table
    (``ismcts.<option>``): a ValueError outside it (1e12 simulations, widen=1e300)."""
    bound = BOUNDS[f"{NAME}.{option}"]

    def parse(text: str) -> Any:
        try:
            return bound.check(bound.kind(text), option)
        except InputError:
            raise ValueError from None
    return parse


def _rollout(text: str) -> str:
    if not text or text.split(":", 1)[0] == NAME:
        raise ValueError
    return text


def _horizon(text: str) -> int | None:
    return None if text == "auto" else _bounded("horizon")(text)


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError
        return text
    return parse


_PARSERS: dict[str, Callable[[str], Any]] = {
    "simulations": _bounded("simulations"), "rollout": _rollout, "horizon": _horizon, "c": _bounded("c"),
    "widen": _bounded("widen"), "hidden": _choice("model", "uniform"),
    "order": _choice("sample", "probability"), "seed": _bounded("seed"), "guard": _bounded("guard"),
}


def parse_options(spec: str, text: str) -> SearchOptions:
    """The options of ``ismcts:key=value:key=value`` (``text`` is what follows ``ismcts:``); a
    :class:`PolicyError` names a bad one and what is allowed."""
    values: dict[str, Any] = {}
    for item in text.split(":"):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise PolicyError(f"policy spec {spec!r}: {item!r} is not key=value; options are {_listing()}")
        if key not in _PARSERS:
            raise PolicyError(f"policy spec {spec!r}: unknown option {key!r}; options are {_listing()}")
        if key in values:
            raise PolicyError(f"policy spec {spec!r}: option {key!r} is given twice")
        try:
            values[key] = _PARSERS[key](value)
        except ValueError:
            raise PolicyError(f"policy spec {spec!r}: {key}={value!r} is not allowed; {key} is "
                              f"{OPTION_HELP[key]}") from None
    return replace(SearchOptions(), **values)


def _listing() -> str:
    return "; ".join(f"{k} ({v})" for k, v in OPTION_HELP.items())


class _Node:
    """One player's statistics at one of his information sets."""

    __slots__ = ("avail", "n", "order", "seen", "total", "visits")

    def __init__(self, order: list[int]):
        self.order = order  # the actions in the order they become candidates (progressive widening)
        self.seen = set(order)
        self.visits: dict[int, int] = {}
        self.total: dict[int, float] = {}
        self.avail: dict[int, int] = {}  # visits in which the action was a candidate (legal)
        self.n = 0

    def select(self, legal: list[int], c: float, widen: float, rng: np.random.Generator) -> tuple[int, list[int]]:
        """The action to play and the candidates it was chosen among (legal in this determinization)."""
        width = 1 + int(widen * math.sqrt(self.n))
        legal_set = set(legal)
        # the first ``width`` legal ones: order=probability lists every legal action, so stop there
        cands = list(islice((a for a in self.order if a in legal_set), width))
        if len(cands) < width:  # widen: legal actions not yet considered, in a random order
            fresh = [a for a in legal if a not in self.seen]
            while len(cands) < width and fresh:
                a = fresh.pop(int(rng.integers(len(fresh))))
                self.order.append(a)
                self.seen.add(a)
                cands.append(a)
        for a in cands:
            if a not in self.visits:
                return a, cands
        # UCB1 on the candidates' mean rewards scaled to 0..1 between the worst and the best of them (as
        # MuZero scales its values): a decision's rewards differ by hundredths where a whole game is at
        # stake, and ``c`` should not need tuning to each game's scale.
        means = [self.total[a] / self.visits[a] for a in cands]
        low, span = min(means), max(means) - min(means)
        best, best_score = cands[0], -math.inf
        for a, mean in zip(cands, means, strict=True):
            q = (mean - low) / span if span > 0 else 0.5
            score = q + c * math.sqrt(math.log(self.avail[a]) / self.visits[a])
            if score > best_score:
                best, best_score = a, score
        return best, cands

    def update(self, action: int, cands: list[int], reward: float) -> None:
        self.n += 1
        self.visits[action] = self.visits.get(action, 0) + 1
        self.total[action] = self.total.get(action, 0.0) + reward
        for a in cands:
            self.avail[a] = self.avail.get(a, 0) + 1

    def best(self) -> int:
        """The most visited action (ties: the better mean, then the earlier candidate)."""
        return max(self.visits, key=lambda a: (self.visits[a], self.total[a] / self.visits[a], -self.order.index(a)))


class SearchPolicy(Policy):
    """Information-set MCTS at one seat (see the module's docstring); ``load_policy("ismcts:...")``.

    ``load(spec, seed)`` loads the rollout policies (the registry's ``load_policy``).
    """

    def __init__(self, options: SearchOptions, load: Callable[[str, int], Any], seed: int | None = None,
                 spec: str | None = None):
        self.options = options
        self.spec = options.spec() if spec is None else spec  # as the user wrote it, for error messages
        self._load = load
        self.seed = options.seed if seed is None else seed
        self.rng = np.random.default_rng(self.seed)
        self.game: str | None = None  # plays any game with a sampler, unless its rollout policy plays one
        self._deck: Any = None
        self._info: InformationState | None = None
        self._table: tuple | None = None  # (game id, players, options) the rollout copies and simulator are for
        self._bots: list[Any] = []
        self._sim: Any = None
        self._horizon = 0
        self._guard: Guard | None = None  # the game's loop guard at options.guard, set by _prepare
        self.simulated = 0  # decisions simulated in all (for measurements)
        # the last decision's root statistics, action -> visits (an expert-iteration teacher's policy
        # target, as AlphaZero's: training/imitate.py with imitate.target=visits); {a: 1} when only a was legal
        self.root_visits: dict[int, int] = {}
        self.card: dict[str, Any] = {}  # the card of a folder that names this search (load_card), else empty
        if options.rollout is not None:
            try:  # a bad rollout spec fails here, at load time
                probe = load(options.rollout, 0)
            except PolicyError as err:
                raise PolicyError(f"policy spec {self.spec!r}: rollout={options.rollout!r}: {err}") from None
            self.game = probe.game
            self._check_rollout(probe, options.rollout)
            self._check_horizon(probe, options.rollout)
            self._check_order(probe, options.rollout)
            if probe.game is not None:
                self._game_guard(games.get(probe.game))

    def __repr__(self) -> str:
        return f"SearchPolicy({self.spec!r}, seed={self.seed})"

    # ------------------------------------------------------------------ the policy protocol
    def reset(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self._table = None  # the rollout copies are made again from the new seed

    def sit(self, table: Table) -> SearchPolicy:
        """A new game at ``table``; its custom deck (issue #16) is told to the rollout copies."""
        super().sit(table)
        if table.deck is not self._deck:
            self._deck = table.deck
            self._table = None  # the rollout copies are seated again, at a table of this deck
        return self

    def observe_game(self, info: InformationState) -> None:
        """The seat's information state for the next :meth:`act` (:func:`~.information.decide`)."""
        if self.game is not None and not same_game(self.game, info.spec.name):
            raise PolicyError(f"{self!r} plays {self.game} (its rollout policy's game), not {info.spec.name}")
        self._info = info

    def act(self, observation: dict[str, np.ndarray]) -> int:
        info, self._info = self._info, None  # one information state per decision
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("no legal action in this observation's action_mask")
        if info is None:
            raise RuntimeError(f"{NAME} needs the game, not only the observation: seat it at a table that hands it "
                               "the seat's information state (dragonstones_env.policies.decide: the arena, the "
                               "Gymnasium env, the app and the evaluation do)")
        if len(legal) == 1:
            self.root_visits = {int(legal[0]): 1}
            return int(legal[0])
        return self.search(info, observation)

    # ------------------------------------------------------------------ the search
    def search(self, info: InformationState, observation: dict[str, np.ndarray]) -> int:
        """The most visited root action after ``simulations`` simulations (every root action's visits:
        :attr:`root_visits`)."""
        self._prepare(info)
        allowed = np.flatnonzero(self._allowed(observation))
        if len(allowed) == 1:  # the loop guard left one action
            self.root_visits = {int(allowed[0]): 1}
            return int(allowed[0])
        sim, bots, o = self._sim, self._bots, self.options
        guess = self._guess if o.hidden == "model" else None
        root_key = (info.seat, observation["observation"].tobytes())
        nodes: dict[tuple[int, bytes], _Node] = {}
        for _ in range(o.simulations):
            if (way := _GIVE_WAY.event) is not None:
                way.wait()
            sim.resume(info.sample(self.rng, guess))
            path: list[tuple[int, _Node, int, list[int]]] = []
            steps, expanded, obs = 0, False, None
            while sim.game.decision is not None and (self._horizon == 0 or steps < self._horizon):
                agent = sim.agent_selection
                p = sim.agent_name_mapping[agent]
                obs = sim.observe(agent)
                legal = np.flatnonzero(self._allowed(obs)).tolist()
                if steps == 0 and (p, obs["observation"].tobytes()) != root_key:
                    raise RuntimeError(f"a determinization of {info!r} does not show the seat its own view: "
                                       "the game's sampler is wrong, or the information state is stale")
                if len(legal) == 1:  # nothing to choose: no node
                    sim.step(legal[0])
                    steps += 1
                    obs = None
                    continue
                key = (p, obs["observation"].tobytes())
                node = nodes.get(key)
                if node is None:
                    if expanded:
                        break  # one new node per simulation; the rollout goes on from here
                    node = nodes[key] = _Node(self._first(bots[p], obs, legal))
                    expanded = True
                action, cands = node.select(legal, o.c, o.widen, self.rng)
                path.append((p, node, action, cands))
                sim.step(action)
                steps += 1
                obs = None
            rewards = self._rollout(steps, obs)
            for p, node, action, cands in path:
                node.update(action, cands, rewards[p])
        root = nodes[root_key]
        self.root_visits = dict(root.visits)
        return root.best()

    def _first(self, bot: Any, obs: dict[str, np.ndarray], legal: list[int]) -> list[int]:
        """A new node's first candidates: the rollout policy's move (``order=sample``; the others come at
        random as it widens), or every legal action by its probability (``order=probability``)."""
        if self.options.order == "sample":
            return [int(bot.act(obs))]
        probs = bot.probabilities(obs["observation"][None], obs["action_mask"][None])[0]
        return sorted(legal, key=lambda a: -probs[a])  # a stable sort: ties keep the actions' order

    def _rollout(self, steps: int, obs: dict[str, np.ndarray] | None) -> list[float]:
        """Play on with the rollout copies; each seat's reward at the end, or estimated at the horizon."""
        sim, bots, horizon = self._sim, self._bots, self._horizon
        while sim.game.decision is not None and (horizon == 0 or steps < horizon):
            agent = sim.agent_selection
            if obs is None:
                obs = sim.observe(agent)
            sim.step(int(bots[sim.agent_name_mapping[agent]].act(obs)))
            steps += 1
            obs = None
        self.simulated += steps
        if sim.game.decision is None:
            return sim.outcome()
        return self._estimate()

    def _estimate(self) -> list[float]:
        """Each seat's expected reward at the horizon, each seat's rollout copy judging its own view.

        A checkpoint's critic estimates the reward itself; the estimates are moved onto the zero-sum
        end (their mean taken off: the game's rewards sum to 0). A rule bot's win chances are
        normalised and paid as the end pays them (+1 to the winner, -1/(n-1) to the others)."""
        sim = self._sim
        n = sim.num_players
        if self._bots[0].capabilities.value:
            values = np.array([self._bots[p].value(sim.observe(a)) for p, a in enumerate(sim.possible_agents)])
            return list(values - values.mean())
        chances = np.array([self._bots[p].win_chance(sim.observe(a)) for p, a in enumerate(sim.possible_agents)])
        total = chances.sum()
        share = chances / total if total > 0 else np.full(n, 1.0 / n)
        return list((n * share - 1.0) / (n - 1))

    def _guess(self, game: Any, rng: np.random.Generator) -> tuple:
        """A hidden choice (another player's sealed bid) as the rollout policy would make it from that
        player's view of the determinization being drawn (``hidden=model``)."""
        sim = self._sim
        sim.resume(game)
        agent = sim.agent_selection
        return sim.option(int(self._bots[sim.agent_name_mapping[agent]].act(sim.observe(agent))))

    def _prepare(self, info: InformationState) -> None:
        """The simulator and one rollout copy per seat, for this game, table size and options."""
        table = (info.spec.id, info.num_players, tuple(sorted((k, repr(v)) for k, v in info.options.items())))
        if table == self._table:
            return
        spec = self.options.rollout or info.spec.default_bot
        self._bots = [self._load(spec, int(s)) for s in self.rng.integers(2**31, size=info.num_players)]
        for p, bot in enumerate(self._bots):
            self._check_rollout(bot, spec)
            # seeded by their loading above (seed None here); told the game's deck
            bot.sit(Table(info.spec.id, info.num_players, p, None, info.options, self._deck))
        self._check_horizon(self._bots[0], spec)
        self._check_order(self._bots[0], spec)
        horizon = self.options.horizon
        if horizon is None:
            horizon = AUTO_HORIZON if self._bots[0].capabilities.judges else 0
        self._horizon = horizon
        self._guard = self._game_guard(info.spec)
        self._sim = info.simulator()
        self._table = table

    def _game_guard(self, game: Any) -> Guard | None:
        """The game's loop guard at ``options.guard`` (checked against the game's limits), or None."""
        if self.options.guard is None:
            return None
        return game_guard(game, self.options.guard, f"policy spec {self.spec!r}: guard={self.options.guard}")

    def _allowed(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        """The actions a tree node may take: the legal ones, less what the loop guard leaves out. Every seat
        of the tree follows it, as the rollout copies follow their card's (a search of ds-champion)."""
        if self._guard is None:
            return obs["action_mask"]
        return self._guard(obs["observation"][None], obs["action_mask"][None])[0]

    def _check_horizon(self, policy: Any, spec: str) -> None:
        if self.options.horizon and not policy.capabilities.judges:
            raise PolicyError(f"policy spec {self.spec!r}: the rollout policy {spec!r} has no win_chance nor critic "
                              f"(a checkpoint's {VALUE_FILE}) to judge a position at the horizon: use horizon=0 "
                              "(to the end of the game) or auto")

    def _check_order(self, policy: Any, spec: str) -> None:
        if self.options.order == "probability" and not policy.capabilities.probabilities:
            raise PolicyError(f"policy spec {self.spec!r}: order=probability needs a rollout policy with action "
                              f"probabilities (a checkpoint); {spec!r} has none: use order=sample")

    def _check_rollout(self, policy: Any, spec: str) -> None:
        if isinstance(policy, SearchPolicy):
            raise PolicyError(f"policy spec {self.spec!r}: rollout={spec!r}: a search cannot be the rollout policy "
                              "of a search")


def make(seed: int | None, options_text: str | None, load: Callable[[str, int], Any], spec: str = NAME) -> SearchPolicy:
    """The registry's factory: ``ismcts`` or ``ismcts:key=value:...``."""
    options = SearchOptions() if options_text is None else parse_options(spec, options_text)
    return SearchPolicy(options, load, seed, spec)


def load_card(spec: str, card: dict[str, Any], seed: int | None, load: Callable[[str, int], Any]) -> SearchPolicy:
    """The search a folder's card names (``"algorithm": "ismcts"``, ``"search": "ismcts:..."``; see the module
    docstring), checked to play the card's game. ``load`` loads its rollout policy and refuses anything but a
    built-in or shipped name. A search always plays its most visited action: a loader's ``deterministic`` has
    nothing to change."""
    text = card.get("search")
    name, sep, options = text.partition(":") if isinstance(text, str) else ("", "", "")
    if name != NAME or not sep:
        raise PolicyError(f"policy {spec!r}: card.json: 'search' must be a search spec, {NAME}:key=value:..., "
                          f"got {str(text)[:200]!r}")
    try:
        policy = SearchPolicy(parse_options(spec, options), load, seed, text)
    except PolicyError as err:
        raise PolicyError(f"policy {spec!r}: card.json: {err}") from None
    if policy.game is not None and not same_game(policy.game, card["env"]):
        raise PolicyError(f"policy {spec!r}: card.json: its search rolls out with a policy of {policy.game}, "
                          f"the card's env is {card['env']}")
    policy.game = card["env"]
    policy.card = dict(card)
    return policy
