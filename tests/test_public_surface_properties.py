"""Property test of the public surface (issue #14): whatever a caller passes, only the documented
exception types escape, and a refused call changes nothing.

Documented: ``ValueError`` for bad input everywhere (``IllegalOptionError``, ``PolicyError``,
``ConfigError``, ``ReplayError`` are ValueErrors; each test names the exact subclass it expects).
"""

from __future__ import annotations

import copy
import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dragonstones_env import ReplayError, raw_env, replay
from dragonstones_env.games.drachenschatten import raw_env as ds_raw_env
from dragonstones_env.play.single_agent import make as make_gym
from dragonstones_env.policies import PolicyError, load_policy
from training.config import Config, ConfigError, build, validate

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8), st.binary(max_size=4),
    st.sampled_from([np.int64(3), np.float32(1.5), np.bool_(True), np.array(2), np.array([1, 2]), "recall",
                     "table", "raise", "penalize", 0, 1, 3, 4, 6, 0.5]),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                             max_size=3), max_leaves=6)


def _snapshot(e) -> tuple:
    return json.dumps(e.state_dict(), sort_keys=True), e.agent_selection, copy.deepcopy(e.game.record)


@SETTINGS
@given(st.dictionaries(st.sampled_from(["num_players", "observation_mode", "max_turns", "illegal_action",
                                        "reward_shaping", "render_mode", "colour"]), scalars, max_size=4))
def test_env_options_are_accepted_or_refused_with_value_error(options):
    for make in (raw_env, ds_raw_env):
        try:
            e = make(**options)
        except ValueError:
            continue
        e.reset(seed=0)
        assert e.game.decision is not None


@SETTINGS
@given(scalars)
def test_reset_seeds_are_integers_or_refused_without_a_change(seed):
    e = raw_env(num_players=3)
    e.reset(seed=1)
    e.step(e.legal_actions()[0])
    before = _snapshot(e)
    try:
        e.reset(seed=seed)
    except ValueError:
        assert _snapshot(e) == before
    else:
        assert seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_))
                                and seed >= 0)


@SETTINGS
@given(st.one_of(values, st.integers(-5, 2000)))
def test_actions_of_any_type_apply_legally_or_change_nothing(action):
    e = raw_env(num_players=4)
    e.reset(seed=2)
    before = _snapshot(e)
    legal = set(e.legal_actions())
    try:
        e.step(action)
    except ValueError:
        assert _snapshot(e) == before
    else:
        assert isinstance(action, (int, np.integer)) and int(action) in legal


@SETTINGS
@given(st.one_of(values, st.integers(-5, 2000)))
def test_gym_actions_of_any_type_step_or_are_punished(action):
    e = make_gym("dragonstones", num_players=3, seat=0)
    e.reset(seed=0)
    legal = set(np.flatnonzero(e.action_masks()).tolist())
    _, reward, terminated, _, info = e.step(action)
    if info["illegal_action"]:
        assert terminated and reward == -1.0
    else:  # accepted: an integral number (int, numpy scalar or 0-d array) naming a legal action
        assert not isinstance(action, (bool, np.bool_, str, bytes)) and np.ndim(action) == 0
        value = np.asarray(action).item()
        assert float(value).is_integer() and int(value) in legal


@SETTINGS
@given(st.one_of(values, st.text(max_size=30), st.sampled_from(["random", "heuristic", "policies", "/", ".", "..",
                                                                   "champion/policy.npz", "README.md"])))
def test_load_policy_specs_load_or_raise_policy_error(spec):
    try:
        policy = load_policy(spec)
    except PolicyError:
        return
    assert callable(policy.act)


config_keys = st.sampled_from(["seed", "n_envs", "device", "total_timesteps", "torch_threads", "reward_shaping",
                               "num_players", "ppo", "league", "eval", "env", "run_name", "time_budget_s"])
sections = st.dictionaries(st.sampled_from(["learning_rate", "net_arch", "mix", "pool", "games", "players",
                                            "clip_range", "n_steps", "batch_size", "heuristic"]), values, max_size=3)


@SETTINGS
@given(st.dictionaries(config_keys, st.one_of(values, sections), max_size=5))
def test_config_documents_build_or_raise_config_error(document):
    try:
        cfg = validate(build(Config, copy.deepcopy(document)))
    except ConfigError:
        return
    assert cfg.sb3.n_envs >= 1 and np.isfinite(cfg.ppo.learning_rate)


def _record() -> list[dict]:
    e = raw_env(num_players=3, max_turns=2)
    e.reset(seed=5)
    rng = np.random.default_rng(5)
    while not e.game.over:
        e.step(int(rng.choice(e.legal_actions())))
    return json.loads(json.dumps(e.game.record))


RECORD = _record()


@SETTINGS
@given(st.integers(0, len(RECORD) - 1), st.sampled_from(["delete", "replace", "field", "truncate"]), values)
def test_edited_records_replay_identically_or_raise_replay_error(index, how, value):
    record = copy.deepcopy(RECORD)
    if how == "delete":
        del record[index]
    elif how == "replace":
        record[index] = value
    elif how == "field":
        record[index]["extra" if not record[index] else sorted(record[index])[0]] = value
    else:
        record = record[:index]
    try:
        game = replay(record)
    except ReplayError:
        return
    assert game.record == record  # accepted only when it is exactly what the engine produces
