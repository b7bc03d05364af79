"""RLlib's own PettingZoo adapter on both games, and examples/rllib_pettingzoo.py, which trains on it.

The adapter (``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``) is checked under RLlib's multi-agent
episode protocol; the example runs to the end at its tiny budget (PPO self-play with the masking module, the
export, ``load_policy`` and the win rate it prints).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

from dragonstones_env import games
from dragonstones_env.policies import load_policy

ROOT = Path(__file__).resolve().parents[2]
RATE = re.compile(r"^win rate against random: (\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\] over (\d+) games", re.M)
GAMES = ("drachenschatten", "dragonstones")


@pytest.mark.parametrize("game", GAMES)
def test_rllibs_adapter_plays_whole_games_one_agent_at_a_time(game):
    """What PPO learns from: one agent observed at each step, the one to act (with its mask), and at the end
    every seat's last observation and its whole reward, +1 for the winner and -1/(n-1) for the others."""
    spec = games.get(game)
    env = PettingZooEnv(spec.env(num_players=spec.default_players))
    n = spec.default_players
    rng = np.random.default_rng(0)
    for seed in range(2):
        obs, infos = env.reset(seed=seed)
        episode = MultiAgentEpisode(observation_space=env.observation_spaces, action_space=env.action_spaces,
                                    agent_to_module_mapping_fn=lambda agent, episode: "shared")
        episode.add_env_reset(observations=obs, infos=infos)  # raises on any breach of RLlib's protocol
        totals = dict.fromkeys(env.possible_agents, 0.0)
        while True:
            assert len(obs) == 1, f"one agent observed mid-game, got {sorted(obs)}"
            (agent, o), = obs.items()
            assert agent == env.env.agent_selection and env.observation_spaces[agent].contains(o)
            actions = {agent: int(rng.choice(np.flatnonzero(o["action_mask"])))}
            obs, rewards, terminateds, truncateds, infos = env.step(actions)
            episode.add_env_step(obs, actions, rewards, infos, terminateds=terminateds, truncateds=truncateds)
            for who, reward in rewards.items():
                totals[who] += reward
            if terminateds["__all__"] or truncateds["__all__"]:
                break
        assert episode.is_done and set(obs) == set(env.possible_agents)
        (winner,) = env.env.unwrapped.game.winners  # random play ends these seeds' games with one winner
        assert totals == {a: 1.0 if i == winner else pytest.approx(-1 / (n - 1))
                          for i, a in enumerate(env.env.possible_agents)}  # the adapter's own list is unordered


def test_the_example_trains_exports_and_evaluates_both_games(tmp_path):
    # Both games at once, in two processes: each spends most of its time (14 of 18 s in one measurement) importing
    # torch and Ray and starting and stopping its own private Ray instance, not training; on two cores they overlap.
    runs = {game: subprocess.Popen([sys.executable, str(ROOT / "examples" / "rllib_pettingzoo.py"), "--tiny",
                                    "--game", game, "--eval-games", "3", "--out", str(tmp_path / game)],
                                   cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for game in GAMES}
    try:
        outputs = {game: run.communicate(timeout=300) for game, run in runs.items()}
    finally:
        for run in runs.values():  # a run left over by a failure or a timeout stops with the test
            if run.poll() is None:
                run.kill()
                run.communicate()
    for game, (stdout, stderr) in outputs.items():
        assert runs[game].returncode == 0, f"{game}: {stderr[-3000:]}"
        spec = games.get(game)
        trained = re.search(rf"^trained (\d+) steps of {spec.title} at {spec.default_players} players with RLlib PPO",
                            stdout, re.M)
        assert trained and int(trained.group(1)) >= 200, stdout
        rate, low, high, played = RATE.search(stdout).groups()
        assert int(played) == 3 and float(low) <= float(rate) <= float(high), stdout
        # the folder it wrote is a checkpoint of this game that the package plays, checked as any download is
        folder = tmp_path / game
        card = json.loads((folder / "card.json").read_text())
        assert (card["algorithm"], card["env"], card["steps"]) == ("RLlibPPO", spec.name, int(trained.group(1)))
        assert load_policy(str(folder)).game == spec.name
