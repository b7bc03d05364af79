"""RLlib: the multi-agent env, the masking RLModule, and training.train_rllib end to end.

The end-to-end test trains on a local Ray instance with 2 env runners for a tiny budget,
exports to a checkpoint folder, reloads it with ``load_policy`` (numpy only) and plays it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch
import yaml
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from dragonstones_env import env as make_aec
from dragonstones_env.play.arena import play_game, seat_rotated_match
from dragonstones_env.policies import RandomPolicy, load_policy
from dragonstones_env.policies.checkpoint import CheckpointPolicy
from tests.run_layout import EXPECTED, layout
from training import run as lifecycle
from training.config import ConfigError
from training.rllib_env import DragonstonesMultiAgentEnv
from training.rllib_module import MaskedMLPModule, actor_weights, actor_weights_from_state
from training.train_rllib import build_config, env_config, load_config, main, pool_item, push_snapshot

TINY = {
    "total_timesteps": 400,
    "checkpoint_every": 400,
    "rllib": {"num_env_runners": 2, "num_envs_per_env_runner": 2, "sample_timeout_s": 60,
              "train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
    "ppo": {"net_arch": [32]},
    "league": {"mix": {"latest": 0.6, "snapshot": 0.2, "random": 0.2}, "table": 0.3, "snapshot_every": 200},
    "eval": {"every": 400, "games": 2, "final_games": 2, "final_panel_games": 1},
}


def write_config(tmp_path, **changes):
    cfg = {**TINY, "runs_dir": str(tmp_path / "runs"), "out_dir": str(tmp_path / "policies"), **changes}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def random_games(env, games, seed=0):
    """Play ``games`` episodes with random legal actions, recording each into an RLlib
    ``MultiAgentEpisode`` (which raises on any breach of RLlib's multi-agent protocol)."""
    rng = np.random.default_rng(seed)
    finals = []
    for g in range(games):
        obs, infos = env.reset(seed=seed + g)
        episode = MultiAgentEpisode(observation_space=env.observation_spaces, action_space=env.action_spaces,
                                    agent_to_module_mapping_fn=lambda agent, ep: "shared")
        episode.add_env_reset(observations=obs, infos=infos)
        totals: dict[str, float] = {}
        while True:
            assert len(obs) == 1, "exactly one agent, the one to act, is observed"
            (agent, o), = obs.items()
            assert env.observation_spaces[agent].contains(o)
            legal = np.flatnonzero(o["action_mask"])
            assert len(legal) > 0
            actions = {agent: int(rng.choice(legal))}
            obs, rewards, terminateds, truncateds, infos = env.step(actions)
            episode.add_env_step(obs, actions, rewards, infos, terminateds=terminateds, truncateds=truncateds)
            for a, r in rewards.items():
                totals[a] = totals.get(a, 0.0) + r
            if terminateds["__all__"] or truncateds["__all__"]:
                assert episode.is_done
                # every agent that acted gets its last observation (RLlib needs it on truncation)
                assert set(obs) == {a for a in episode.agent_episodes}
                assert all(not o["action_mask"].any() for o in obs.values())
                finals.append((totals, terminateds["__all__"]))
                break
    return finals


# ---------------------------------------------------------------------------- the env
@pytest.mark.parametrize("num_players", [3, [4, 6]])
def test_self_play_env_follows_the_multi_agent_protocol(num_players):
    env = DragonstonesMultiAgentEnv({"num_players": num_players})
    assert env.possible_agents == [f"player_{i}" for i in range(6 if num_players != 3 else 3)]
    for totals, terminated in random_games(env, 4):
        assert terminated
        assert sum(totals.values()) == pytest.approx(0.0)  # zero-sum: +1 and -1/(n-1) each
        assert max(totals.values()) == pytest.approx(1.0)


def test_drachenschatten_too():
    env = DragonstonesMultiAgentEnv({"game": "drachenschatten", "num_players": [2, 4],
                                     "league": {"mix": {"latest": 0.5, "heuristic": 0.5}}})
    assert env.league.heuristic == "ds-heuristic"
    for totals, terminated in random_games(env, 4):
        assert terminated or not any(totals.values())


def test_truncation_and_shaping_and_league_seats():
    env = DragonstonesMultiAgentEnv({"num_players": 4, "env_options": {"max_turns": 2, "reward_shaping": 0.1}})
    finals = random_games(env, 3)
    assert not any(terminated for _, terminated in finals)  # two turns: always truncated
    env = DragonstonesMultiAgentEnv({"num_players": 5, "league": {"mix": {"latest": 0.3, "random": 0.4,
                                                                          "heuristic": 0.3}}})
    learners = []
    for g in range(6):
        env.reset(seed=g)
        learners.append(len(env.agents))
        assert sum(p is None for p in env.seat_policies) == len(env.agents) >= 1
    assert min(learners) < 5  # some seats were bots
    assert all(terminated for _, terminated in random_games(env, 3))



@pytest.mark.parametrize("paid", [0.0, -1 / 3])
def test_a_truncated_game_pays_every_learner_the_truncation_reward(paid):
    # the AEC game pays every seat 0 at its step limit; truncation_reward makes stalling cost a loss
    env = DragonstonesMultiAgentEnv({"num_players": 4, "env_options": {"max_turns": 2},
                                     "truncation_reward": paid})
    for totals, terminated in random_games(env, 3):
        assert not terminated and totals and all(r == pytest.approx(paid) for r in totals.values())


def test_the_truncation_reward_leaves_a_finished_game_alone():
    plain, paid = (DragonstonesMultiAgentEnv({"game": "drachenschatten", "num_players": 3, "truncation_reward": r})
                   for r in (0.0, -1.0))
    finals = [random_games(env, 3, seed=5) for env in (plain, paid)]
    assert all(terminated for _, terminated in finals[0])
    assert finals[0] == finals[1]


@pytest.mark.parametrize("bad", [0.5, -2.0, float("nan"), "x"])
def test_a_bad_truncation_reward_is_refused_by_name(bad):
    with pytest.raises(ValueError, match=r"truncation_reward: must be"):
        DragonstonesMultiAgentEnv({"num_players": 3, "truncation_reward": bad})


def test_the_config_key_reaches_the_env_runners(tmp_path):
    cfg = load_config(write_config(tmp_path, truncation_reward=-0.25))
    assert env_config(cfg)["truncation_reward"] == -0.25
    with pytest.raises(ConfigError, match="truncation_reward"):
        load_config(write_config(tmp_path, truncation_reward=0.5))

def test_snapshots_join_the_league_and_pfsp_counts_each_game():
    env = DragonstonesMultiAgentEnv({"num_players": 4, "league": {"mix": {"latest": 0.25, "snapshot": 0.75}}})
    env.reset(seed=0)
    assert env.seat_policies == [None] * 4  # no snapshot yet: its seats are the learner's (latest)
    module = MaskedMLPModule(observation_space=env.observation_spaces["player_0"], action_space=env.action_spaces[
        "player_0"], model_config={"hiddens": [8]})
    weights, activation = actor_weights(module)
    env.add_snapshot({"spec": "snap", "weights": weights, "activation": activation})
    kinds = set()
    for g in range(8):
        env.reset(seed=g)
        kinds |= {type(p).__name__ for p in env.seat_policies if p is not None}
    assert "CheckpointPolicy" in kinds
    # each game with the snapshot at the table counts once for PFSP, a win when a learner seat won
    env.league.results.clear()
    expected = [0, 0]
    for g in range(8):
        ((totals, terminated),) = random_games(env, 1, seed=100 + g)
        if any(isinstance(p, CheckpointPolicy) for p in env.seat_policies):
            expected[0] += terminated and max(totals.values()) == pytest.approx(1.0)
            expected[1] += 1
    assert expected[1] >= 1
    assert env.league.results["snap"] == expected


# ---------------------------------------------------------------------------- the module and the export
def observations(n=64, seed=0):
    """Real observations and masks, from random games at several table sizes."""
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    for size in (3, 4, 6):
        e = make_aec(num_players=size)
        e.reset(seed=seed + size)
        for _agent in e.agent_iter():
            o, _, term, trunc, _ = e.last()
            if term or trunc or len(obs) >= n * size // 4:
                break
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            e.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.stack(obs), np.stack(masks)


def module_probabilities(module, obs, masks):
    batch = {Columns.OBS: {"observation": torch.from_numpy(obs), "action_mask": torch.from_numpy(masks).float()}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        dist = module.get_inference_action_dist_cls().from_logits(logits)
        return torch.softmax(logits.double(), -1).numpy(), dist


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_numpy_actor_reproduces_the_rlmodule_distribution(tmp_path, activation):
    space = DragonstonesMultiAgentEnv({}).observation_spaces["player_0"]
    module = MaskedMLPModule(observation_space=space, action_space=gym.spaces.Discrete(space["action_mask"].shape[0]),
                             model_config={"hiddens": [64, 32], "activation": activation})
    with torch.no_grad():  # weights of a policy that is far from uniform
        for p in module.actor.parameters():
            p.mul_(20.0)
    obs, masks = observations()
    probs, dist = module_probabilities(module, obs, masks)
    weights, name = actor_weights(module)
    assert name == activation and len(weights) == 3
    CheckpointPolicy(weights, name).save_npz(tmp_path / "policy.npz")
    with np.load(tmp_path / "policy.npz") as data:
        loaded = CheckpointPolicy([(data[f"w{i}"], data[f"b{i}"]) for i in range(int(data["layers"]))],
                                  str(data["activation"]))
    expected = loaded.probabilities(obs, masks)
    assert probs[masks == 0].max() == 0.0 and expected[masks == 0].max() == 0.0
    np.testing.assert_allclose(probs, expected, atol=1e-5)
    assert probs.max(axis=1).mean() > 0.3  # a peaked distribution: the comparison means something
    # what RLlib samples is legal, and the state-dict path gives the same weights
    sampled = dist.sample().numpy()
    assert masks[np.arange(len(masks)), sampled].all()
    for (w1, b1), (w2, b2) in zip(weights, actor_weights_from_state(module.get_state()), strict=True):
        np.testing.assert_array_equal(w1, w2)
        np.testing.assert_array_equal(b1, b2)
    # the inference-only build (what env runners hold) has no critic, and the same actor
    light = MaskedMLPModule(observation_space=space, action_space=module.action_space, inference_only=True,
                            model_config=module.model_config)
    light.set_state(module.get_state(inference_only=True))
    assert not hasattr(light, "critic")
    np.testing.assert_allclose(module_probabilities(light, obs, masks)[0], probs, atol=1e-7)


# ---------------------------------------------------------------------------- end to end, on Ray
def test_config_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"league\.mix"):
        load_config(None, ["league.mix={latest: 1, boss: 1}"])
    with pytest.raises(ConfigError, match=r"league\.mix"):  # the old RLlib-only kind name
        load_config(None, ["league.mix={self: 1}"])
    with pytest.raises(ConfigError, match=r"league\.table"):
        load_config(None, ["league.table=1.5"])
    with pytest.raises(ConfigError, match=r"rllib\.num_env_runners"):
        load_config(None, ["rllib.num_env_runners=-1"])
    with pytest.raises(ConfigError, match=r"rllib\.activation"):
        load_config(None, ["rllib.activation=gelu"])
    with pytest.raises(ConfigError, match=r"target: is the SB3 trainer's"):  # one schema: SB3's keys refused
        load_config(None, ["target=heuristic"])
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['rllib\.workers'\]"):
        load_config(None, ["rllib.workers=2"])
    assert main(["--config", str(write_config(tmp_path)), "--set", "rllib.minibatch_size=999"]) == 2
    from pathlib import Path

    shipped = load_config(Path(__file__).resolve().parents[2] / "configs" / "rllib_ppo.yaml")
    assert shipped.rllib.num_env_runners >= 1 and shipped.league.mix["latest"] > 0


def test_train_export_reload_and_play(tmp_path, ray_local):
    seen = []  # the after_iteration hook (issue #51's runner-health checks): once per iteration
    assert main(["--config", str(write_config(tmp_path, run_name="tiny"))],
                after_iteration=lambda folders, result: seen.append((folders.root, "env_runners" in result))) == 0
    assert seen and set(seen) == {(tmp_path / "runs" / "tiny", True)}
    out = tmp_path / "policies" / "tiny"
    card = json.loads((out / "card.json").read_text())
    assert card["algorithm"] == "RLlibPPO" and card["env"] == "dragonstones_v1" and card["steps"] >= 400
    from dragonstones_env.games.dragonstones.env import LAYOUT_SIGNATURE

    assert card["layout"] == LAYOUT_SIGNATURE
    assert card["config"]["rllib"]["num_env_runners"] == 2 and card["config"]["ppo"]["net_arch"] == [32]
    assert {"vs_heuristic", "vs_random", "copies"} <= set(card["evaluation"])
    assert card["evaluation"]["copies"]["games"] == 2
    assert card["machine"]["ray"] and "git_commit" in card and card["wall_time_s"] > 0
    runs = tmp_path / "runs" / "tiny"
    assert len(list((runs / "snapshots").iterdir())) >= 1
    # every card says what its policy sees (card_view): the env options it learnt with
    for folder in (out, *(runs / "snapshots").iterdir()):
        assert json.loads((folder / "card.json").read_text())["env_options"]["observation_mode"] == "recall"
    # the run every trainer writes (training/run.py): one eval.csv header, the shared card keys
    rows = (runs / "eval.csv").read_text().splitlines()
    assert rows[0] == lifecycle.EVAL_HEADER.strip() and len(rows) >= 2
    assert {row.count(",") for row in rows} == {len(lifecycle.EVAL_COLUMNS) - 1}
    assert set(lifecycle.CARD_KEYS) <= set(card) and (runs / "config.json").is_file()

    # load_policy plays it with numpy only, as an opponent anywhere: a game, an evaluation, SB3's env
    policy = load_policy(str(out), seed=0)
    assert isinstance(policy, CheckpointPolicy) and policy.activation == "tanh"
    result = play_game(lambda: make_aec(num_players=4), [policy, RandomPolicy(1), RandomPolicy(2), policy],
                       ["tiny", "r", "r", "tiny"], seed=0)
    assert result.winners or result.truncated
    match = seat_rotated_match(lambda: make_aec(num_players=3), policy, [RandomPolicy(3), load_policy("heuristic")], 3)
    assert match["games"] == 3
    single = gym.make("Dragonstones-v0", num_players=4, opponents=str(out))
    single.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, _ = single.step(int(np.flatnonzero(single.unwrapped.action_masks())[0]))
        done = term or trunc

    # ... with neither Ray nor torch importable
    script = ("import sys; sys.modules['ray'] = sys.modules['torch'] = None\n"
              "from dragonstones_env import env; from dragonstones_env.play.arena import play_game\n"
              "from dragonstones_env.policies import load_policy\n"
              f"p = load_policy({str(out)!r}, seed=0)\n"
              "r = play_game(lambda: env(num_players=3), [p, load_policy('random'), p], 'abc', seed=1)\n"
              "print(type(p).__name__, r.steps > 0)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["CheckpointPolicy", "True"], done.stderr

    # the run every trainer writes (issue #50; the SB3 trainer's and the exploiter's: tests/test_run.py):
    # the same files, eval.csv header and card keys; the final panel too
    folders = lifecycle.Folders.of(tmp_path / "runs", tmp_path / "policies", "tiny")
    assert layout(folders) == EXPECTED and card["evaluation"]["panel"]["games_per_mix"] == 1

    # as a league.pool entry, the driver sends its weights (remote nodes need no copy of the folder)
    item = pool_item(str(out))
    assert item["activation"] == "tanh" and len(item["weights"]) == 2 and pool_item("heuristic") == "heuristic"

    # the exported actor is exactly the trained RLModule's: same masked action distribution
    from ray.rllib.core.rl_module.rl_module import RLModule

    trained = RLModule.from_checkpoint(runs / "checkpoint" / "algo" / "learner_group" / "learner" / "rl_module"
                                       / "shared")
    obs, masks = observations(32, seed=5)
    np.testing.assert_allclose(module_probabilities(trained, obs, masks)[0], policy.probabilities(obs, masks),
                               atol=1e-5)

    # --resume continues from the RLlib checkpoint (and refuses to overwrite a run without it)
    config = str(write_config(tmp_path, run_name="tiny"))
    assert main(["--config", config]) == 2
    assert main(["--config", config, "--resume", "--set", "total_timesteps=600"]) == 0
    assert json.loads((out / "card.json").read_text())["steps"] >= 600 and layout(folders) == EXPECTED


def test_more_actors_than_cpus_is_refused_not_a_hang(ray_local, tmp_path):
    assert main(["--config", str(write_config(tmp_path)), "--set", "rllib.num_learners=1"]) == 2
    assert not (tmp_path / "runs").exists()


def test_snapshots_reach_every_env_runner(ray_local, tmp_path):
    cfg = load_config(write_config(tmp_path))
    algo = build_config(cfg).build_algo()
    try:
        space = DragonstonesMultiAgentEnv({}).observation_spaces["player_0"]
        module = MaskedMLPModule(observation_space=space, action_space=gym.spaces.Discrete(space["action_mask"]
                                                                                          .shape[0]),
                                 model_config={"hiddens": [8]})
        weights, activation = actor_weights(module)
        push_snapshot(algo, {"spec": "snap", "weights": weights, "activation": activation})
        counts = algo.env_runner_group.foreach_env_runner(
            lambda r: [len(e.unwrapped.league.snapshots()) for e in r.env.envs], local_env_runner=False)
        assert counts == [[1, 1], [1, 1]]  # 2 env runners x 2 envs each
        result = algo.train()  # sampling with snapshot seats, and one update
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 200
    finally:
        algo.stop()


def test_a_table_mode_learner_sees_the_evaluations_and_the_pool_as_it_learns(tmp_path, monkeypatch):
    """Fist's table mode (F43) in the RLlib trainer: its evaluations (recall tables) hide the others'
    coins from the learner, and a table-mode pool policy keeps its view on the env runners."""
    import training.train_rllib as trainer
    from dragonstones_env.games.dragonstones.observation import hide_coins
    from tests.checkpoints import random_actor, write_checkpoint
    from training import evals
    from training.league import PushedVersions

    seen = []
    monkeypatch.setattr(evals, "seat_rotated_match", lambda make, hero, *a, **k: seen.append(hero.view) or {})
    monkeypatch.setattr(evals, "copies_match", lambda make, copies, *a, **k: seen.extend(c.view for c in copies))
    weights = random_actor(0)
    for mode, view in (("table", hide_coins), ("recall", None)):
        cfg = load_config(write_config(tmp_path, observation_mode=mode))
        seen.clear()
        evals.against_bots(trainer.learner(weights, "tanh", cfg), cfg, 1, "random", seed=0)
        evals.copies(trainer.learner(weights, "tanh", cfg), cfg, 1, seed=0)
        assert seen == [view] * (1 + cfg.eval.players)
    folder = write_checkpoint(tmp_path / "blind", seed=1)
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, "env_options": {"observation_mode": "table"}}))
    item = pool_item(str(folder))
    assert item["card"]["env_options"] == {"observation_mode": "table"}
    assert PushedVersions(provided={"blind": item}).build("blind", seed=0).view is hide_coins
