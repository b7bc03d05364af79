"""The rule bots' fast paths decide exactly as their plain paths (issue #47: cheaper bots, same play).

Fist of Dragonstones: ``table.observe`` (the game's fast ``observation.reader``) builds the same
:class:`Table` as ``read(decode(obs))``, and the valuation's caches across decisions
(``Values.remember``: gains and threats by what they read) change no action. DrachenSchatten: the
cache of the viewer's card deltas (``_DELTAS``) and its fast ``observe`` change no action. Each is
checked over whole random games, the bots' caches kept warm from game to game, against the same
games played the plain way.
"""

from __future__ import annotations

import numpy as np
import pytest

from dragonstones_env import games
from dragonstones_env.games.drachenschatten import observation as ds_observation
from dragonstones_env.games.drachenschatten.observation import decode as ds_decode
from dragonstones_env.games.dragonstones import observation as fist_observation
from dragonstones_env.games.dragonstones.observation import decode, hide_coins, reader
from dragonstones_env.policies import load_policy, seat, seat_seed
from dragonstones_env.policies.base import Table as Seating
from dragonstones_env.policies.bots import drachenschatten as ds
from dragonstones_env.policies.bots.dragonstones import bidding
from dragonstones_env.policies.bots.dragonstones import policy as fist_policy
from dragonstones_env.policies.bots.dragonstones import table as fist_table
from dragonstones_env.policies.bots.dragonstones.params import PARAMS
from dragonstones_env.policies.bots.dragonstones.zoo import common as zoo_common
from tests.aec_support import live_decisions

FIST_LINEUPS = [  # a random seat makes positions the bots would not reach among themselves
    ["heuristic", "value", "aggressor", "miser", "collector", "heuristic"],
    ["heuristic", "heuristic", "random", "collector"],
    ["miser", "heuristic", "aggressor"],
    ["heuristic", "value", "random", "heuristic", "miser"],
]


def play_games(game: str, lineups: list[list[str]], games_each: int, mode: str = "recall") -> list[list[int]]:
    """Every game's actions: each line-up's bots made once, then seated for ``games_each`` seeded games."""
    out = []
    for k, names in enumerate(lineups):
        n = len(names)
        bots = [load_policy(name, seed=i) for i, name in enumerate(names)]
        e = games.get(game).env(num_players=n, **({"observation_mode": mode} if game == "dragonstones" else {}))
        for g in range(games_each):
            seed = 1000 * k + g
            seated = [seat(bot, Seating(game, n, i, seed=seat_seed(seed, i))) for i, bot in enumerate(bots)]
            e.reset(seed=seed)
            actions = []
            for agent in e.agent_iter():
                obs, _, term, trunc, _ = e.last()
                if term or trunc:
                    e.step(None)
                    continue
                actions.append(int(seated[e.possible_agents.index(agent)].act(obs)))
                e.step(actions[-1])
            out.append(actions)
    return out


def plain_fist(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Fist bots' plain path: the whole decode read by ``read``, nothing remembered across decisions."""
    def plain(obs: np.ndarray) -> fist_table.Table:
        return fist_table.read(decode(obs))

    monkeypatch.setattr(fist_policy, "observe", plain)
    monkeypatch.setattr(zoo_common, "observe", plain)
    monkeypatch.setattr(fist_policy.Values, "remember", property(lambda self: False, lambda self, value: None),
                        raising=False)


@pytest.mark.parametrize("mode", ["recall", "table"])
def test_fist_bots_decide_as_their_plain_path(monkeypatch, mode):
    fast = play_games("dragonstones", FIST_LINEUPS, 4, mode)
    with monkeypatch.context() as m:
        plain_fist(m)
        assert not load_policy("heuristic").values.remember
        plain = play_games("dragonstones", FIST_LINEUPS, 4, mode)
    assert sum(map(len, fast)) > 2000  # whole games, many decisions
    assert fast == plain


def test_fist_fast_observe_is_read_of_decode():
    """Field for field (and type for type), at every decision of random games, in both modes."""
    rng = np.random.default_rng(3)
    checked = 0
    for n in (3, 4, 6):
        e = games.get("dragonstones").env(num_players=n)
        e.reset(seed=n)
        for _agent, obs in live_decisions(e):
            for vector in (obs["observation"], hide_coins(obs["observation"])):
                fast, plain = fist_table.observe(vector), fist_table.read(decode(vector))
                for name in fist_table.Table.__slots__:
                    a, b = getattr(fast, name), getattr(plain, name)
                    if name == "bids":
                        assert a.keys() == b.keys()
                        assert all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)
                    elif name == "decoded":
                        assert all(a[k] == b[k] for k in fist_table.EXTRA_PIECES)
                    else:
                        assert a == b and type(a) is type(b), name
                checked += 1
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
    assert checked > 500


class _Forgetful(dict):
    """A cache that never finds anything: every value computed afresh."""

    def get(self, key, default=None):
        return default


def test_drachenschatten_bot_decides_as_its_plain_path(monkeypatch):
    lineups = [["ds-heuristic"] * 4, ["ds-heuristic", "random", "ds-heuristic"], ["ds-heuristic"] * 2]
    fast = play_games("drachenschatten", lineups, 4)
    with monkeypatch.context() as m:
        m.setattr(ds, "_DELTAS", _Forgetful())
        m.setattr(ds, "observe", lambda obs: ds.read(ds_decode(obs)))
        plain = play_games("drachenschatten", lineups, 4)
    assert sum(map(len, fast)) > 500
    assert fast == plain


def test_drachenschatten_fast_observe_is_read_of_decode():
    """Field for field, at every decision of random games of 2 to 4 players."""
    rng = np.random.default_rng(4)
    checked = 0
    for n in (2, 3, 4):
        e = games.get("drachenschatten").env(num_players=n)
        e.reset(seed=n)
        for _agent, obs in live_decisions(e):
            fast, plain = ds.observe(obs["observation"]), ds.read(ds_decode(obs["observation"]))
            for name in ds.Table.__dataclass_fields__:
                a, b = getattr(fast, name), getattr(plain, name)
                if isinstance(b, np.ndarray):
                    assert a.dtype == b.dtype and np.array_equal(a, b), name
                else:
                    assert a == b and type(a) is type(b), name
            checked += 1
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
    assert checked > 100


def test_the_reader_refuses_what_is_not_a_piece():
    with pytest.raises(ValueError, match="no piece named 'sets'; the pieces are seat_present"):
        reader(("card", "sets"))
    with pytest.raises(ValueError, match="tuples of piece names"):
        reader("card")




@pytest.mark.parametrize("game", ["dragonstones", "drachenschatten"])
def test_reader_arrays_round_as_before(game):
    """``Reader.array`` of every piece, at every decision of a random game, gives the counts of the
    plain formula (scaled, rounded where the layout says exact, through ``np.where``), dtype
    included: the all-exact pieces now skip the ``np.where``, ``progress`` (its turn fraction is not
    a count) keeps it (Fist's bids against decode's: test_fist_fast_observe_is_read_of_decode)."""
    observation = (fist_observation if game == "dragonstones" else ds_observation).OBSERVATION
    names = tuple(observation.layout)
    read = observation.reader((), arrays=names)
    paths = [read._arrays[name][3] is None for name in names]
    assert any(paths) and not all(paths)  # both ways taken
    rng = np.random.default_rng(5)
    e = games.get(game).env(num_players=3)
    e.reset(seed=1)
    checked = 0
    for _agent, obs in live_decisions(e):
        vector = obs["observation"]
        for name in names:
            where = observation.layout[name].slice
            flat = vector[where] * observation._scales[where]
            plain = np.where(observation._exact[where], np.rint(flat), flat).reshape(observation.layout[name].shape)
            got = read.array(vector, name)
            assert got.dtype == plain.dtype and np.array_equal(got, plain), name
        checked += 1
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
    assert checked > 50


def test_win_curve_is_the_product_from_ones_bit_for_bit():
    """``_win_curve`` takes the first opponent's factors as they are (1 x a is a): the same curve, bit
    for bit, as the product started from ones, for random line-ups of 1 to 5 opponents."""
    p = PARAMS

    def from_ones(opponents, done):
        lt, le, clean = np.ones(bidding.VMAX + 1), np.ones(bidding.VMAX + 1), 1.0
        for fairy, common, amulet, black, zero, scores in opponents:
            a, b = bidding._opponent_cdfs(p.zero_prior, p.zero_weight, p.zero_if_scoring, fairy, common, amulet,
                                          zero, scores, done)
            lt, le = lt * a, le * b
            if black:
                clean *= 1.0 - p.opp_black_use
        win = (lt + p.tie_share * (le - lt)) * clean
        win[0] = 0.0
        return win

    rng = np.random.default_rng(6)
    for _ in range(400):
        done = int(rng.integers(0, 6))
        opponents = tuple((int(rng.integers(0, 9)), int(rng.integers(0, 5)), bool(rng.integers(2)),
                           bool(rng.integers(2)), int(rng.integers(0, done + 1)), bool(rng.integers(2)))
                          for _ in range(int(rng.integers(1, 6))))
        got, want = bidding._win_curve(p, opponents, done), from_ones(opponents, done)
        assert got.tobytes() == want.tobytes()
    assert bidding._ONES.sum() == bidding.VMAX + 1  # never written by a curve


def fist_decisions(count: int) -> list[dict[str, np.ndarray]]:
    """Observations of seats due to decide, from random games of 3 to 6 players, both observation modes."""
    rng = np.random.default_rng(8)
    out = []
    for n in (3, 4, 5, 6):
        for mode in ("recall", "table"):
            e = games.get("dragonstones").env(num_players=n, observation_mode=mode)
            e.reset(seed=10 * n)
            for _agent, obs in live_decisions(e):
                out.append(obs)
                legal = np.flatnonzero(obs["action_mask"])
                e.step(int(legal[rng.integers(len(legal))]))
    assert len(out) >= count
    return out[:: max(1, len(out) // count)][:count]


def test_heuristic_act_each_decides_as_each_ones_act():
    """``act_each`` (the observations read together, ``observe_many``) gives each bot the action its
    own ``act`` gives, on random decisions of both modes, bots met in a shuffled order (each one's
    generator drawn as often, in the same order), the same Tables as ``observe``, and a subclass
    with its own ``act`` is asked it."""
    obs = fist_decisions(1200)
    owners = np.random.default_rng(9).integers(0, 5, len(obs))
    alone = [load_policy("heuristic", seed=i) for i in range(5)]
    together = [load_policy("heuristic", seed=i) for i in range(5)]
    assert together[0].capabilities.batch_each and not load_policy("value").capabilities.batch_each
    want = [alone[i].act(o) for i, o in zip(owners, obs, strict=True)]
    got = []
    for lo in range(0, len(obs), 16):  # a vector env's rounds: a batch of rows, each its table's bot
        rows = obs[lo : lo + 16]
        got += type(together[0]).act_each([together[i] for i in owners[lo : lo + 16]],
                                          np.stack([o["observation"] for o in rows]),
                                          np.stack([o["action_mask"] for o in rows]))
    assert got == want and all(type(a) is int for a in got)
    vectors = np.stack([o["observation"] for o in obs[:200]])
    for fast, plain in zip(fist_table.observe_many(vectors), map(fist_table.observe, vectors), strict=True):
        for name in fist_table.Table.__slots__:
            a, b = getattr(fast, name), getattr(plain, name)
            if name == "bids":
                assert all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in b) and a.keys() == b.keys()
            else:
                assert a == b and type(a) is type(b), name

    class FirstLegal(fist_policy.HeuristicPolicy):
        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[0])

    rows = obs[:8]
    assert FirstLegal.act_each([FirstLegal()] * 8, np.stack([o["observation"] for o in rows]),
                               np.stack([o["action_mask"] for o in rows])) == [
        int(np.flatnonzero(o["action_mask"])[0]) for o in rows]
