"""Training configuration: every hyperparameter, its default, and validation.

A YAML file sets any of these keys (sections ``ppo``, ``league``, ``eval``); ``--set
section.key=value`` overrides one. An unknown key, a duplicate key, a YAML alias, a wrong type,
a number out of its bounds or an impossible combination stops the run before training, with a
:class:`ConfigError` naming the key. Every number has a row in :data:`BOUNDS`: the shared table of
``dragonstones_env/bounds.py`` (seeds in ``[0, 2**32)``, ...) with the trainers' keys added, each
range documented there and in docs/inputs.md; the sizes have ceilings that fit a 24 GiB, 2-core
machine, so that a typo cannot ask for a million worker processes or a network that exhausts
memory. Beyond the rows:

============================  ================================================================
check                         why
============================  ================================================================
``ppo.net_arch``              at most :data:`NET_ARCH_HIDDEN_PARAMETERS` weights between hidden
                              layers: a checkpoint of it must load (``load_policy``'s limit of
                              200 MB of float32 weights, dragonstones_env/policies/checkpoint.py)
rollout buffer                ``sb3.n_steps x sb3.n_envs`` observations and action masks as float32:
                              at most :data:`ROLLOUT_BYTES` (SB3 copies it once more to train)
``sb3.device``                cpu, cuda, cuda:N, mps, auto (torch's device names)
``runs_dir``, ``out_dir``     non-empty paths without NUL, at most 4096 characters, not a file
``sb3.n_envs``                at most 32 with ``sb3.collector: subproc`` (a process per table)
============================  ================================================================
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import types
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dragonstones_env import bounds, games
from dragonstones_env.bounds import Bound, GiB
from dragonstones_env.core import same_game
from dragonstones_env.games import GameSpec
from dragonstones_env.policies import PolicyError, load_policy, zoo
from dragonstones_env.policies.checkpoint import ARCHITECTURES
from dragonstones_env.policies.search import SearchPolicy
from dragonstones_env.registry import ByGame
from training.imitate import TARGETS
from training.league import KINDS, League


class ConfigError(ValueError):
    """A configuration that cannot be trained; the message names the key."""


_STEPS = 10**11  # about a year of training at 3,000 steps/s
# The bounds table of the trainers: dragonstones_env/bounds.py's rows (seed, reward_shaping, ...) and
# one per numeric key of a config (training/train.py's, training/train_rllib.py's, training/exploit.py's
# flags), by its dotted name; "[]" is each item of a list, ".*" each value of a mapping.
BOUNDS: Mapping[str, Bound] = {
    **bounds.BOUNDS,
    "num_players": bounds.BOUNDS["players"],  # then the game's own table sizes
    "total_timesteps": Bound(int, 1, _STEPS, "about a year of training at 3,000 steps/s"),
    "time_budget_s": Bound(float, 0.0, 1e8, "about three years of wall time; 0: no budget"),
    "checkpoint_every": Bound(int, 1, _STEPS, "timesteps between checkpoints"),
    "sb3.n_envs": Bound(int, 1, 1024, "tables played at once: a batched table is a few MB; with collector: subproc "
                                  "each is a process (240 MB resident, measured), so at most 32 there"),
    "sb3.workers": Bound(int, 1, 32, "processes of the batched collector (at most n_envs)"),
    "loop_guard": Bound(int, 1, 16, "an object type's uses in a turn after which the run's checkpoints use it "
                                    "no more (the game's LoopGuard checks its own limits: DrachenSchatten's "
                                    "count stops at 16)"),
    "torch_threads": Bound(int, 1, 64, "more threads than any machine here has cores"),
    "ppo.learning_rate": Bound(float, 0.0, 1.0, "Adam's step size", open_low=True),
    "ppo.gamma": Bound(float, 0.0, 1.0, "the discount", open_low=True),
    "ppo.gae_lambda": Bound(float, 0.0, 1.0, "GAE's lambda"),
    "ppo.clip_range": Bound(float, 0.0, 1.0, "PPO's ratio clip, 1 +- clip_range", open_low=True),
    "ppo.ent_coef": Bound(float, 0.0, 1.0, "the entropy bonus's weight"),
    "ppo.vf_coef": Bound(float, 0.0, 10.0, "the value loss's weight"),
    "ppo.max_grad_norm": Bound(float, 0.0, 1000.0, "the gradient clip", open_low=True),
    "ppo.net_arch[]": Bound(int, 1, 8192, "a hidden layer's width"),
    "sb3.n_steps": Bound(int, 2, 10**7, "steps per environment per update (and the rollout buffer's budget)"),
    "sb3.batch_size": Bound(int, 1, 10**7, "at most n_steps x n_envs"),
    "sb3.n_epochs": Bound(int, 1, 1000, "passes over each rollout"),
    "sb3.seat_arch[]": Bound(int, 1, 1024, "a layer's width in the shaped network's seat encoder"),
    "league.mix.*": Bound(float, 0.0, 1e6, "relative weights of the kinds of opponents"),
    "league.table": Bound(float, 0.0, 1.0, "a share of the episodes"),
    "league.mixed": Bound(float, 0.0, 1.0, "a share of the episodes (table + mixed <= 1)"),
    "league.pfsp_power": Bound(float, 0.0, 20.0, "PFSP's exponent"),
    "league.latest_every": Bound(int, 1, _STEPS, "timesteps between refreshes of the latest seats"),
    "league.snapshot_every": Bound(int, 1, _STEPS, "timesteps between snapshots"),
    "league.max_snapshots": Bound(int, 1, 1000, "snapshot folders kept (each a few MB)"),
    "imitate.games": Bound(int, 1, 10**6, "the teacher's games"),
    "imitate.max_rows": Bound(int, 1, 2_000_000, "decisions kept, about 6 kB each in memory: 12 GB at most"),
    "imitate.workers": Bound(int, 1, 32, "processes playing the teacher's games"),
    "imitate.epochs": Bound(int, 1, 1000, "passes over the decisions"),
    "imitate.batch_size": Bound(int, 1, 2_000_000, "decisions per gradient step (at most imitate.max_rows' bound)"),
    "imitate.learning_rate": Bound(float, 0.0, 1.0, "Adam's step size", open_low=True),
    "imitate.value_coef": Bound(float, 0.0, 100.0, "the value loss's weight"),
    "imitate.holdout": Bound(float, 0.0, 1.0, "a share of the decisions", open_high=True),
    "imitate.anchor_kl": Bound(float, 0.0, 100.0, "the leash's weight (0: none)"),
    "imitate.magnet_every": Bound(int, 0, _STEPS, "timesteps between moves of the leash to the learner (0: never)"),
    "eval.every": Bound(int, 1, _STEPS, "timesteps between evaluations"),
    "eval.games": bounds.BOUNDS["games"],
    "eval.seed": bounds.BOUNDS["seed"],
    "eval.players": bounds.BOUNDS["players"],  # then the game's own table sizes
    "eval.final_games": Bound(int, 0, 10**6, "games of the final evaluation (0: none)"),
    "eval.panel_every": Bound(int, 0, _STEPS, "timesteps between panels (0: none)"),
    "eval.panel_games": bounds.BOUNDS["games"],
    "eval.final_panel_games": Bound(int, 0, 10**6, "games per mix of the final panel (0: none)"),
    # the RLlib trainer's section (training/train_rllib.py)
    "rllib.num_env_runners": Bound(int, 0, 1024, "EnvRunner actors, one process each (0: the driver)"),
    "rllib.num_envs_per_env_runner": Bound(int, 1, 64, "games stepped together in one EnvRunner"),
    "rllib.num_cpus_per_env_runner": Bound(float, 0.0, 64.0, "CPUs Ray reserves for each EnvRunner"),
    "rllib.rollout_fragment_length": Bound(int, 1, 10**6, "env steps per EnvRunner per sample call"),
    "rllib.sample_timeout_s": Bound(float, 0.0, 86_400.0, "a day", open_low=True),
    "rllib.min_healthy_share": Bound(float, 0.0, 1.0, "share of the env runners that must stay healthy"),
    "rllib.num_learners": Bound(int, 0, 16, "Learner actors (one per GPU)"),
    "rllib.num_cpus_per_learner": Bound(float, 0.0, 64.0, "CPUs Ray reserves for each Learner"),
    "rllib.num_gpus_per_learner": Bound(float, 0.0, 16.0, "GPUs Ray reserves for each Learner"),
    "rllib.train_batch_size": Bound(int, 2, 10**7, "env steps per update"),
    "rllib.minibatch_size": Bound(int, 1, 10**7, "at most train_batch_size"),
    "rllib.num_epochs": Bound(int, 1, 1000, "passes over each batch"),
    "rllib.vf_clip": Bound(float, 0.0, 1e6, "RLlib's vf_clip_param", open_low=True),
}
NET_ARCH_LAYERS = 16
NET_ARCH_HIDDEN_PARAMETERS = 20_000_000  # weights between hidden layers (the rest is in/out): 80 MB as float32
ROLLOUT_BYTES = 4 * GiB
MAX_PATH = 4096
COLLECTORS = ("batched", "subproc")  # training/envs.py: how the tables are played
SUBPROC_TABLES = 32  # collector: subproc runs a process per table (240 MB each, measured)
DEVICE = re.compile(r"cpu|cuda(:\d{1,2})?|mps|auto")


def check_bounds(obj: Any, table: Mapping[str, Bound] = BOUNDS, prefix: str = "",
                 key_of: Callable[[str], str] = lambda key: key) -> None:
    """Every number of the config dataclass ``obj`` (its sections too) within its row of ``table``
    (``key_of`` maps a dotted key to its row; a ConfigError names the key and the range). A
    numeric key without a row is a KeyError: every number has a bound."""
    for f in dataclasses.fields(obj):
        value, key = getattr(obj, f.name), prefix + f.name
        if dataclasses.is_dataclass(value):
            check_bounds(value, table, f"{key}.", key_of)
            continue
        if isinstance(value, list):
            items = [(f"{key}[{i}]", key_of(key) + ("" if key_of(key) == "num_players" else "[]"), v)
                     for i, v in enumerate(value)]
        elif isinstance(value, dict):
            items = [(f"{key}.{k}", key_of(key) + ".*", v) for k, v in value.items()]
        else:
            items = [(key, key_of(key), value)]
        for name, row, v in items:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue  # strings, bools, None: checked by type and by the validators
            if row not in table:
                raise KeyError(f"{name}: a number without a row in the bounds table (training/config.py BOUNDS)")
            try:
                table[row].check(v, name)
            except bounds.InputError as err:
                raise ConfigError(str(err)) from None


def check_path(key: str, value: Any, empty_ok: bool = False) -> None:
    """A path key (``runs_dir``, ``out_dir``, ``start``, ``characters``): a string without NUL, at most
    :data:`MAX_PATH` characters, non-empty unless ``empty_ok``."""
    if value is None and empty_ok:
        return
    need(isinstance(value, str), key, f"a path (a string), got {value!r}")
    need(bool(value.strip()) or empty_ok, key, "a path; it is empty")
    need("\x00" not in value, key, "a path without NUL characters")
    need(len(value) <= MAX_PATH, key, f"a path of at most {MAX_PATH} characters, got {len(value)}")


def _load_yaml(text: str, where: str, quote: bool = True) -> Any:
    """YAML without aliases, a key once per mapping (dragonstones_env/bounds.py's loader)."""
    try:
        return bounds.load_yaml(text, where, quote)
    except bounds.InputError as err:
        raise ConfigError(str(err)) from None


# The PettingZoo name (with its layout version) of each game id, as checkpoint cards record it
# (``ENV_NAMES["dragonstones"] == "dragonstones_v1"``), read from the game registry.
ENV_NAMES: Mapping[str, str] = ByGame(lambda spec: spec.name)


@dataclass
class PPOCommon:
    """The PPO hyperparameters both trainers share: the config's ``ppo`` section, written once; each
    library's section adds its own (``sb3``: :class:`SB3PPO`; ``rllib``: :class:`RLlibSection`)."""

    learning_rate: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [256, 256])  # actor (and critic) hidden widths


@dataclass
class SB3PPO:
    """MaskablePPO's own hyperparameters (in the ``sb3`` section)."""

    # per table, per update: with the batched collector's 64 tables, 8,192 decisions a rollout
    n_steps: int = 128
    batch_size: int = 128  # fits one table's rollout; configs of many tables raise it (default.yaml: 1024)
    n_epochs: int = 4
    # The network (training/shaped.py): "mlp", one MLP over the flat observation and a flat head; "shaped",
    # the opponents' seats through one shared encoder (seat_arch) pooled by their mean, and the action logits
    # factorised over the parts of each action (a bid's amount of each coin...), plus flat ones if flat_logits.
    architecture: str = "mlp"
    seat_arch: list[int] = field(default_factory=lambda: [64])  # "shaped": the seat encoder's layer widths
    flat_logits: bool = True  # "shaped": add a flat logit per action to the factorised ones


@dataclass
class PPO(PPOCommon, SB3PPO):
    """Every hyperparameter of Stable-Baselines3's MaskablePPO: the config's ``ppo`` section and the
    ``sb3`` section's (:meth:`Config.sb3_ppo`); what training.train.new_model takes."""


@dataclass
class SB3Section(SB3PPO):
    """The ``sb3:`` section: the keys only the SB3 trainer (training/train.py) reads. The tables
    played at once (training/envs.py): "batched" plays n_envs tables in lockstep in `workers`
    processes, each opponent deciding for all its seats at once (training/collector.py); "subproc"
    gives each of the n_envs tables a process of its own (SB3's SubprocVecEnv)."""

    collector: str = "batched"
    n_envs: int = 64
    workers: int = 1
    device: str = "cpu"


@dataclass
class RLlibSection:
    """The ``rllib:`` section: the keys only the RLlib trainer (training/train_rllib.py) reads:
    where and how Ray runs, and RLlib PPO's own hyperparameters (docs/rllib.md)."""

    address: str | None = None  # None: start Ray here; "auto": join this node's cluster; "ray://host:10001"
    num_env_runners: int = 2  # EnvRunner actors sampling in parallel (0: sample in the driver)
    num_envs_per_env_runner: int = 4  # games stepped together in each EnvRunner (one batched forward pass)
    num_cpus_per_env_runner: float = 1.0
    rollout_fragment_length: int | str = "auto"  # env steps per EnvRunner per sample call; auto: batch / runners
    sample_timeout_s: float = 120.0
    num_learners: int = 0  # 0: learn in the driver; >= 1: Learner actors (data-parallel, one per GPU)
    num_cpus_per_learner: float = 1.0
    num_gpus_per_learner: float = 0.0
    ship_code: bool = True  # with an address: upload dragonstones_env/ and training/ to the nodes (runtime_env)
    min_healthy_share: float = 1.0  # the least share of the env runners healthy after an iteration; below: stop
    train_batch_size: int = 2048  # env steps per update (per Learner)
    minibatch_size: int = 256
    num_epochs: int = 4
    vf_clip: float = 10.0  # RLlib's vf_clip_param (returns here are within [-1, 1])
    use_kl_loss: bool = False  # RLlib's adaptive KL penalty on top of clipping (SB3's PPO has none)
    activation: str = "tanh"  # or "relu"


@dataclass
class LeagueConfig:
    """Who sits at the learner's table (training/league.py says what each kind is and why). The
    same section for training/train.py and training/train_rllib.py."""

    # Weights of each kind of opponent: latest (the learner's current weights), snapshot (past
    # versions, drawn by PFSP), zoo (the game's rule-based bots, the heuristic included),
    # heuristic, random, pool (the extra specs below).
    mix: dict[str, float] = field(default_factory=lambda: {"latest": 0.35, "snapshot": 0.25, "zoo": 0.3,
                                                           "random": 0.1})
    table: float = 0.5  # share of episodes whose other seats are all of one kind (all copies of the learner...)
    # share of episodes at one of the panel's mixed tables: 1..n-2 other copies of the latest
    # weights and one zoo (or pool) bot in the other seats (table + mixed <= 1)
    mixed: float = 0.0
    pfsp_power: float = 2.0  # a snapshot's weight: (1 - the learner's win rate against it) ** pfsp_power
    # timesteps between refreshes of the `latest` seats' weights (SB3; in RLlib those seats are
    # the learning policy itself, always current)
    latest_every: int = 10_000
    pool: list[str] = field(default_factory=list)  # extra policy specs, drawn with weight mix["pool"]
    snapshot_every: int = 50_000  # timesteps between frozen snapshots joining the league
    max_snapshots: int = 8  # the newest are kept


@dataclass
class ImitateConfig:
    """Behaviour cloning before self-play (training/imitate.py says why): the new model first
    copies ``teacher``'s decisions, then PPO and the league take over. With a ``start`` the start's
    weights are fitted to the teacher (an expert-iteration step: a search that rolls out with the
    start improves on it, and the start learns the search's choices). Not used by --resume (the
    clone is in the checkpoint) nor by --finetune (the start is the given model)."""

    teacher: str = ""  # a policy spec, e.g. "heuristic"; "" starts from random weights
    opponents: list[str] = field(default_factory=list)  # the other seats' pool; [] = the teacher and the zoo
    games: int = 2000  # at most this many games of the teacher...
    max_rows: int = 150_000  # ...or until this many of its decisions are kept (about 1.2 GB)
    workers: int = 1  # processes playing those games (a search teacher, ismcts:..., is slow); same decisions
    # the policy's target: "action" (the teacher's move) or "visits" (a search teacher's root visit
    # counts as a distribution, AlphaZero's policy target)
    target: str = "action"
    # an .npz file: the teacher's games are read from it when it holds the games these settings
    # would play (the same teacher, opponents, games, seed, table...), else collected and saved
    # there, so that an expensive teacher (a search) is played once for many fits; "": not kept
    demonstrations: str = ""
    epochs: int = 8  # passes over the decisions
    batch_size: int = 512
    learning_rate: float = 1e-3
    value_coef: float = 0.5  # weight of the value head's loss (the discounted return that followed)
    holdout: float = 0.05  # share of decisions kept aside to measure agreement with the teacher
    # > 0: PPO's reward pays anchor_kl * log(pi / start) at each decision, a leash to where PPO
    # starts: the clone, or the --finetune model (training/anchor.py says why); 0: no leash
    anchor_kl: float = 0.0
    # > 0: every this many timesteps the leash moves to the learner's current weights, so it pulls
    # toward a recent self rather than the start (regularised self-play: R-NaD's periodic update of
    # its regularisation policy, Perolat et al. 2022); 0: the leash stays where PPO started
    magnet_every: int = 0


@dataclass
class EvalConfig:
    every: int = 50_000  # timesteps between evaluations against the heuristic
    games: int = 60  # games per periodic evaluation
    players: int = 4
    final_games: int = 400  # games of the final evaluation (against heuristic, then random, then copies)
    # The robustness figure (dragonstones_env/evaluation/panel.py: the worst per-seat win-rate ratio to
    # parity over every mix of k learners against players - k copies of each zoo bot, the
    # heuristic and random). A rough figure during training, a finer one at the end.
    panel_every: int = 0  # timesteps between panels during training (0: none)
    panel_games: int = 12  # games per mix of those panels
    final_panel_games: int = 0  # games per mix of the panel at the end (0: none); in the card and printed
    at_start: bool = False  # also evaluate the untrained learner, where a curve starts (the exploiter's)
    # the seed of every evaluation's games against the bots, the same deals at every step; None: the
    # evaluation at step t plays stream_seed(SHARED, "eval", t)'s and the final one its own (training/run.py)
    seed: int | None = None


@dataclass
class RunConfig:
    """The keys every training script shares (training/train.py, training/train_rllib.py)."""

    run_name: str = "default"
    game: str = "dragonstones"  # the registry id: "dragonstones" or "drachenschatten"
    num_players: int | list[int] = 4  # a list: one size drawn per episode
    observation_mode: str = "recall"
    reward_shaping: float = 0.0  # Dragonstones: reward per point scored, on top of the final +1/-1/(n-1)
    # Added to a learner's reward when its game is cut off at the step limit (the env pays every
    # seat 0 then, more than a loss, so a losing learner gains by stalling; DrachenSchatten's key loop,
    # D4). -1/3 makes it a 4-player loss. 0: the env's reward (play/single_agent.py, training/rllib_env.py)
    truncation_reward: float = 0.0
    # What its checkpoints play with where the game allows a loop (DrachenSchatten's keys, D4): no more
    # uses of an object type in a turn than this (the card's "loop_guard", registry.LoopGuard). None: none.
    loop_guard: int | None = None
    characters: str | None = None  # Dragonstones: custom characters file (docs/custom-characters.md)
    exclude: list[str] = field(default_factory=list)  # Dragonstones: standard specials left out
    total_timesteps: int = 200_000
    time_budget_s: float = 0.0  # > 0: stop training after this much wall time (whatever the timesteps)
    seed: int = 0
    torch_threads: int = 1
    checkpoint_every: int = 50_000
    # An exploiter's target (configs/exploit.yaml): a policy spec seated in every other seat of every
    # table, and the one the evaluations play; "" (a training run): the league and the rule-based bot
    target: str = ""
    progress_bar: bool = True  # bars of training and of the final evaluation (on a terminal)
    runs_dir: str = "runs"  # logs, checkpoints, snapshots
    out_dir: str = "runs/policies"  # the result: <out_dir>/<run_name>/ (python -m training.promote ships it)
    league: LeagueConfig = field(default_factory=LeagueConfig)  # one league section for both trainers
    eval: EvalConfig = field(default_factory=EvalConfig)  # both trainers' evaluations (training/evals.py)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def spec(self) -> GameSpec:
        """The game's spec, from the game registry (an unknown game: :func:`validate_run` says so first)."""
        return games.get(self.game)

    @property
    def gym_id(self) -> str:
        """The game's Gymnasium id (``Dragonstones-v0``): what the trainers make."""
        return self.spec.gym_id

    @property
    def env_name(self) -> str:
        """The PettingZoo name of the game (what checkpoint cards record)."""
        return self.spec.name

    @property
    def heuristic(self) -> str:
        """The spec of the game's rule-based bot."""
        return self.spec.default_bot

    def env_options(self) -> dict[str, Any]:
        """The config's env options this game has (``observation_mode``, ``reward_shaping``: Fist's)."""
        mine = {"observation_mode": self.observation_mode, "reward_shaping": self.reward_shaping}
        if self.characters or self.exclude:  # a custom deck (issue #16): only when asked for
            mine.update(characters=self.characters, exclude=list(self.exclude))
        return {k: v for k, v in mine.items() if k in self.spec.options}

    def card_keys(self) -> dict[str, Any]:
        """What every checkpoint of the run carries on its card for it to play as it learnt: the env
        options (``card_view``: Fist's table mode hides coins) and its loop guard, if any (``card_guard``)."""
        guard = {} if self.loop_guard is None else {"loop_guard": self.loop_guard}
        return {"env_options": self.env_options(), **guard}

    def learner_card(self) -> dict[str, Any] | None:
        """The card the learner's in-memory policy plays its evaluations with: its loop guard (or None)."""
        return None if self.loop_guard is None else {"env": self.env_name, "loop_guard": self.loop_guard}

    def learner_view(self) -> Any:
        """What the learner sees of an evaluation's table, which shows all a seat may know: what it learns
        from (the game's ``seat_view``; Fist's table mode hides the coins), or None (all of it)."""
        return self.spec.seat_view(self.env_options())


@dataclass
class Config(RunConfig):
    """One schema for both trainers: the shared keys (:class:`RunConfig`, ``ppo``'s shared
    hyperparameters, ``start``, ``imitate``), then each library's own in its section (``sb3:``,
    ``rllib:``); a trainer reads its section and leaves the other's. The SB3 trainer's ``start``,
    ``imitate`` and ``target`` are refused by the RLlib trainer when set."""

    # A checkpoint folder whose actor (policy.npz) and critic (value.npz) a new run starts from,
    # read without unpickling (training/start.py); "" starts from random weights or imitate.teacher
    start: str = ""
    ppo: PPOCommon = field(default_factory=PPOCommon)
    imitate: ImitateConfig = field(default_factory=ImitateConfig)
    sb3: SB3Section = field(default_factory=SB3Section)
    rllib: RLlibSection = field(default_factory=RLlibSection)

    def sb3_ppo(self) -> PPO:
        """MaskablePPO's hyperparameters: the shared ``ppo`` section and the ``sb3`` section's own."""
        own = {f.name: getattr(self.sb3, f.name) for f in dataclasses.fields(SB3PPO)}
        return PPO(**dataclasses.asdict(self.ppo), **own)


# Where each key of the flat configs before the sb3/rllib sections went: such a file (or --set)
# still loads, each old key read at its new place with a warning naming both (docs/training.md).
MOVED: Mapping[str, str] = {
    **{k: f"sb3.{k}" for k in ("collector", "n_envs", "workers", "device")},
    **{f"ppo.{k}": f"sb3.{k}" for k in ("n_steps", "batch_size", "n_epochs")},
    **{f"ray.{f.name}": f"rllib.{f.name}" for f in dataclasses.fields(RLlibSection)
       if f.name not in ("train_batch_size", "minibatch_size", "num_epochs", "vf_clip", "use_kl_loss", "activation")},
    **{f"ppo.{k}": f"rllib.{k}" for k in ("train_batch_size", "minibatch_size", "num_epochs", "vf_clip",
                                          "use_kl_loss", "activation")},
}


class MovedKeyWarning(UserWarning):
    """A config key of the flat layout, read at its place in the sb3/rllib sections."""


_EXPONENT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


def _check_type(name: str, value: Any, hint: Any) -> Any:
    """``value`` converted to ``hint`` where that is lossless, else a ConfigError."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return _check_type(name, value, option)
            except ConfigError:
                pass
        raise ConfigError(f"{name}: expected {hint}, got {value!r}")
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ConfigError(f"{name}: expected a list, got {value!r}")
        return [_check_type(f"{name}[{i}]", v, item) for i, v in enumerate(value)]
    if origin is dict:
        key_t, val_t = typing.get_args(hint)
        if not isinstance(value, dict):
            raise ConfigError(f"{name}: expected a mapping, got {value!r}")
        return {_check_type(name, k, key_t): _check_type(f"{name}.{k}", v, val_t) for k, v in value.items()}
    if hint in (int, float) and isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
        value = float(value)  # PyYAML (YAML 1.1) reads 1e-5 as a string: its floats need a dot (1.0e-5)
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return bounds.float_or_inf(value)  # nan and inf stay, for the bounds to refuse naming the range
    if hint is int and isinstance(value, float) and value.is_integer() and abs(value) >= 1000:
        return int(value)  # 2e5 written for 200000
    if not isinstance(value, hint) or (hint is not bool and isinstance(value, bool)):
        raise ConfigError(f"{name}: expected {hint.__name__}, got {value!r} ({type(value).__name__})")
    return value


def build(cls: type, data: dict[str, Any], prefix: str = "") -> Any:
    """A config dataclass from a mapping: unknown keys and wrong types raise a ConfigError naming them."""
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - fields)
    if unknown:
        raise ConfigError(f"unknown key(s) {[prefix + k for k in unknown]}; known keys: "
                          f"{sorted(prefix + k for k in fields)}")
    kwargs = {}
    for name, value in data.items():
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            kwargs[name] = build(hint, value, f"{prefix}{name}.")
        else:
            kwargs[name] = _check_type(prefix + name, value, hint)
    return cls(**kwargs)


def need(ok: bool, key: str, why: str) -> None:
    """Raise a ConfigError naming ``key`` unless ``ok``."""
    if not ok:
        raise ConfigError(f"{key}: {why}")


def validate_run(cfg: RunConfig) -> None:
    """Check the keys of :class:`RunConfig` beyond their bounds (:func:`check_bounds` comes first)."""
    need(cfg.game in games.ids(), "game", "must be " + " or ".join(games.ids()))
    sizes = cfg.num_players if isinstance(cfg.num_players, list) else [cfg.num_players]
    need(bool(sizes), "num_players", "an empty list: give a table size")
    for n in sizes:
        players(cfg.spec, n, "num_players")
    need(cfg.observation_mode in ("recall", "table"), "observation_mode", "must be 'recall' or 'table'")
    need(cfg.reward_shaping == 0 or "reward_shaping" in cfg.spec.options, "reward_shaping",
         f"is not an option of {cfg.spec.title}")
    check_path("runs_dir", cfg.runs_dir)
    check_path("out_dir", cfg.out_dir)
    check_path("characters", cfg.characters, empty_ok=True)
    for key in ("runs_dir", "out_dir"):  # a folder is made there: an existing file is no place for it
        need(not Path(getattr(cfg, key)).is_file(), key, f"{getattr(cfg, key)} is a file, not a folder")
    if cfg.characters or cfg.exclude:  # a custom deck: loaded now, so a bad card fails before training
        need("characters" in cfg.spec.options, "characters", f"is not an option of {cfg.spec.title}")
        try:
            cfg.spec.env(num_players=sizes[0], **cfg.env_options())
        except ValueError as err:
            raise ConfigError(f"characters: {err}") from None
    if cfg.loop_guard is not None:
        guard = cfg.spec.loop_guard
        need(guard is not None, "loop_guard", f"{cfg.spec.title} has no loop to guard: leave it out (null)")
        need(not isinstance(cfg.loop_guard, bool) and cfg.loop_guard in guard.limits, "loop_guard",
             f"must be null or an int in {guard.limits.start}..{guard.limits.stop - 1}")
    need(cfg.run_name.replace("-", "").replace("_", "").isalnum(), "run_name", "letters, digits, - and _ only")


def validate_league(league: LeagueConfig, kinds: tuple[str, ...]) -> None:
    """Check a league section (both trainers') beyond its bounds: ``mix`` weights over ``kinds``,
    ``table`` + ``mixed``, ``pool``."""
    need(league.mixed <= 1.0 - league.table, "league.mixed", "must be a share in 0..1 with table + mixed <= 1")
    need(set(league.mix) <= set(kinds), "league.mix", f"kinds are {list(kinds)}")
    need(sum(league.mix.values()) > 0, "league.mix", "weights must be >= 0 with a positive sum")
    need(league.mix.get("pool", 0) == 0 or bool(league.pool), "league.pool", "lists no policy but league.mix.pool > 0")
    need(all(isinstance(s, str) and s for s in league.pool), "league.pool", "lists policy specs (non-empty strings)")


def validate_net_arch(net_arch: list[int], key: str, table: Mapping[str, Bound] = BOUNDS) -> None:
    """Hidden layer widths (``ppo.net_arch[]``'s bound) and sizes a checkpoint of them must load."""
    need(1 <= len(net_arch) <= NET_ARCH_LAYERS, key, f"1..{NET_ARCH_LAYERS} hidden layers")
    for i, width in enumerate(net_arch):
        try:
            table["ppo.net_arch[]"].check(width, f"{key}[{i}]")
        except bounds.InputError as err:
            raise ConfigError(str(err)) from None
    hidden = sum(a * b for a, b in itertools.pairwise(net_arch))
    need(hidden <= NET_ARCH_HIDDEN_PARAMETERS, key,
         f"{hidden} weights between hidden layers; at most {NET_ARCH_HIDDEN_PARAMETERS}")


def players(spec: GameSpec, n: Any, key: str) -> int:
    """``n`` if ``spec`` is played at that table size (:meth:`GameSpec.check_players`), else a ConfigError."""
    try:
        return spec.check_players(n, key)
    except games.TableSizeError as err:
        raise ConfigError(str(err)) from None


def validate_eval(e: EvalConfig, spec: GameSpec) -> None:
    players(spec, e.players, "eval.players")


def validate_imitate(im: ImitateConfig) -> None:
    need(all(isinstance(s, str) and s for s in im.opponents), "imitate.opponents",
         "lists policy specs (non-empty strings)")
    need(im.target in TARGETS, "imitate.target", f"is one of {list(TARGETS)}, got {im.target!r}")
    need(not im.demonstrations or im.demonstrations.endswith(".npz"), "imitate.demonstrations",
         f"is an .npz file (or \"\" to keep none), got {im.demonstrations!r}")
    need(im.magnet_every == 0 or im.anchor_kl > 0, "imitate.magnet_every",
         "moves the leash, and imitate.anchor_kl is 0 (no leash): set anchor_kl > 0 or magnet_every 0")


def rollout_bytes(n_steps: int, n_envs: int, spec: GameSpec) -> int:
    """The bytes of SB3's rollout buffer: n_steps x n_envs observations and action masks, as float32."""
    return n_steps * n_envs * (spec.raw_env.OBS_SIZE + spec.raw_env.NUM_ACTIONS) * 4


def validate_ppo(p: PPO, n_envs: int, spec: GameSpec) -> None:
    """MaskablePPO's settings beyond their bounds: the batch within the rollout, the rollout within memory."""
    need(p.batch_size <= p.n_steps * n_envs, "sb3.batch_size", "must be 1..n_steps * n_envs")
    size = rollout_bytes(p.n_steps, n_envs, spec)
    need(size <= ROLLOUT_BYTES, "sb3.n_steps",
         f"n_steps x n_envs = {p.n_steps * n_envs} rows of {spec.title}'s observations and masks is "
         f"{size / GiB:.1f} GiB of rollout buffer; at most {ROLLOUT_BYTES // GiB} GiB")
    validate_net_arch(p.net_arch, "ppo.net_arch")
    need(p.architecture in ARCHITECTURES, "sb3.architecture",
         f"must be one of {list(ARCHITECTURES)}, got {p.architecture!r}")
    need(1 <= len(p.seat_arch) <= NET_ARCH_LAYERS, "sb3.seat_arch", f"1..{NET_ARCH_LAYERS} layers")


def validate_shared(cfg: Config) -> None:
    """What both trainers check: every number within its bound (both sections'), the run's keys, the
    league and the evaluations."""
    check_bounds(cfg)
    validate_run(cfg)
    validate_net_arch(cfg.ppo.net_arch, "ppo.net_arch")
    validate_league(cfg.league, KINDS)
    validate_eval(cfg.eval, cfg.spec)


def validate(cfg: Config) -> Config:
    """A config as the SB3 trainer (and the exploiter) runs it: the shared checks and the ``sb3`` section's."""
    validate_shared(cfg)
    sb = cfg.sb3
    need(sb.collector in COLLECTORS, "sb3.collector", f"must be one of {list(COLLECTORS)}")
    need(sb.collector == "batched" or sb.n_envs <= SUBPROC_TABLES, "sb3.n_envs",
         f"must be 1..{SUBPROC_TABLES} with collector: subproc (a process per table)")
    need(sb.workers <= sb.n_envs, "sb3.workers", "must be 1..n_envs (each process plays some tables)")
    need(sb.workers == 1 or sb.collector == "batched", "sb3.workers",
         "is the batched collector's (collector: batched)")
    need(DEVICE.fullmatch(sb.device) is not None, "sb3.device", "must be cpu, cuda, cuda:N, mps or auto")
    check_path("start", cfg.start, empty_ok=True)
    need(not cfg.start or cfg.sb3.architecture == "mlp", "start",
         "starts an MLP's layers (training/start.py); sb3.architecture: shaped starts from random weights or a "
         "teacher's clone: set start= or sb3.architecture=mlp")
    validate_ppo(cfg.sb3_ppo(), sb.n_envs, cfg.spec)
    validate_imitate(cfg.imitate)
    return cfg


def make_league(cfg: RunConfig, run_dir: str | Path) -> League:
    """The league of a config's ``league`` section, its learner's versions in ``run_dir`` (training/league.py)."""
    lg = cfg.league
    return League(run_dir, lg.mix, lg.pool, zoo=zoo(cfg.game), heuristic=cfg.heuristic, table=lg.table,
                  mixed=lg.mixed, pfsp_power=lg.pfsp_power, game=cfg.env_name, max_snapshots=lg.max_snapshots)


def check_sources(cfg: Config) -> None:
    """The checks that load what the config names, before a run folder exists: the league's fixed
    seats (its pool and zoo), the imitation teacher and its opponents, and an exploiter's ``target``
    (a ConfigError naming them).
    The start's weights are read and checked by training/start.py."""
    try:
        make_league(cfg, Path(cfg.runs_dir) / cfg.run_name).check()
    except (PolicyError, ValueError) as err:
        raise ConfigError(f"league.pool: {err}") from None
    named = [("imitate", spec) for spec in filter(None, [cfg.imitate.teacher, *cfg.imitate.opponents])]
    for key, spec in [*named, *([("target", cfg.target)] if cfg.target else [])]:
        try:
            game = load_policy(spec).game
        except PolicyError as err:
            raise ConfigError(f"{key}: {err}") from None
        if game is not None and not same_game(game, cfg.env_name):
            raise ConfigError(f"{key}: {spec!r} plays {game}, not {cfg.env_name}")
    if cfg.imitate.target == "visits" and not isinstance(load_policy(cfg.imitate.teacher or "random"), SearchPolicy):
        raise ConfigError(f"imitate.target: visits needs a search teacher (ismcts:...) that reports its root visits; "
                          f"imitate.teacher is {cfg.imitate.teacher!r}: use imitate.target=action")


def parse_override(text: str) -> tuple[list[str], Any]:
    if not isinstance(text, str) or "=" not in text:
        raise ConfigError(f"--set {text!r}: expected key=value (e.g. ppo.learning_rate=1e-4)")
    key, raw = text.split("=", 1)
    keys = key.strip().split(".")
    if not all(k.strip() for k in keys):
        raise ConfigError(f"--set {text!r}: empty key; expected key=value (e.g. ppo.learning_rate=1e-4)")
    if not raw.strip():  # `--set start=` (README, docs/training.md): the empty string, not YAML's null
        return [k.strip() for k in keys], ""
    return [k.strip() for k in keys], _load_yaml(raw, f"--set {text!r}")


MAX_BASE_DEPTH = 8  # a config's base's base ...: deeper chains are refused (and so are cycles)


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``: sections (mappings) merge key by key, any other value replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def read_file(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The mapping of one YAML config, on top of its ``base:`` (a config path relative to this file's folder)."""
    try:  # at most FILE_BYTES["config"] (1 MB; dragonstones_env/bounds.py)
        text = bounds.read_text_limited(path, "config")
    except (OSError, bounds.InputError) as err:
        raise ConfigError(f"cannot read config {path}: {err}") from None
    # a base is named by a file, not the user: its text is never quoted back in an error
    data = _load_yaml(text, f"config {path}", quote=not chain)
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(f"config {path}: expected a mapping of keys, got {type(data).__name__}")
    data = move_keys(data, f"config {path}")
    if "base" not in data:
        return data
    base = data.pop("base")
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"config {path}: base: expected the path of another config, got {base!r}")
    base_path = base_file(path, base)
    if base_path in chain or base_path == path.resolve():
        raise ConfigError(f"config {path}: base: {base} makes a cycle ({' -> '.join(str(p) for p in chain)})")
    if len(chain) >= MAX_BASE_DEPTH:
        raise ConfigError(f"config {path}: base: more than {MAX_BASE_DEPTH} configs deep")
    return merge(read_file(base_path, (*chain, path.resolve())), data)


def base_file(path: Path, base: str) -> Path:
    """The file a config's ``base:`` names: a relative path inside the config's own folder (a
    shared config cannot pull in ``/home/me/.aws/credentials`` or ``../../elsewhere.yaml``)."""
    folder = path.parent.resolve()
    if Path(base).is_absolute():
        raise ConfigError(f"config {path}: base: {base[:200]!r} is an absolute path; a base is a config in "
                          f"the same folder or below it ({folder}), named relative to it")
    base_path = (folder / base).resolve()
    if folder not in base_path.parents:
        raise ConfigError(f"config {path}: base: {base[:200]!r} leaves the config's folder ({folder}); a base "
                          "is a config in the same folder or below it")
    return base_path


def moved_key(key: str, where: str) -> str:
    """A dotted key at its place in the sectioned layout (:data:`MOVED`; the whole ``ray`` section is
    ``rllib`` now), with a warning naming both; any other key as it is."""
    new = MOVED.get(key) or (f"rllib.{key.split('.', 1)[1]}" if key.startswith("ray.") else None)
    if new is None:
        return key
    warnings.warn(f"{where}: {key} is now {new} (read as {new}; docs/training.md, \"One schema\")", MovedKeyWarning,
                  stacklevel=3)
    return new


def move_keys(data: dict[str, Any], where: str) -> dict[str, Any]:
    """A config mapping of the flat layout in the sectioned one (:func:`moved_key`); a key given at
    both places is a ConfigError naming both."""
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in data.items()}
    flat_keys = [k for k in MOVED if "." not in k] + [f"{s}.{k}" for s in ("ppo", "ray")
                                                      if isinstance(data.get(s), dict) for k in data[s]]
    for key in flat_keys:
        section, _, name = key.rpartition(".")
        node = out.get(section) if section else out
        if not isinstance(node, dict) or name not in node or moved_key(key, where) == key:
            continue
        value = node.pop(name)
        new_section, new_name = MOVED.get(key, f"rllib.{name}").split(".")
        target = out.setdefault(new_section, {})
        if not isinstance(target, dict) or new_name in target:
            raise ConfigError(f"{where}: {key} and {new_section}.{new_name} are the same key (its place now): "
                              f"give {new_section}.{new_name} only")
        target[new_name] = value
    if out.get("ray") == {}:  # emptied: its keys are rllib's
        del out["ray"]
    return out


def read_config(path: str | Path | None, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The raw mapping of a YAML file (or {}) on top of its ``base`` chain, with ``key=value`` overrides
    applied; keys of the flat layout before the sb3/rllib sections are read at their new place."""
    data: dict[str, Any] = {} if path is None else read_file(Path(path))
    for text in overrides:
        keys, value = parse_override(text)
        keys = moved_key(".".join(keys), f"--set {text!r}").split(".")
        if keys[0] == "ray":  # --set 'ray={...}': the section, now rllib's
            keys[0] = "rllib"
        node = data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {text!r}: {k} is not a section")
        # a mapping merges as a config merges onto its base: --set 'league.mix={zoo: 0.2}' changes the
        # zoo's share and keeps the others (it used to drop them, the league's latest and snapshot too)
        node[keys[-1]] = merge(node[keys[-1]], value) if isinstance(value, dict) and isinstance(
            node.get(keys[-1]), dict) else value
    return data


def load_config(path: str | Path | None, overrides: Sequence[str] = ()) -> Config:
    """The config of a YAML file (or the defaults), with ``key=value`` overrides applied."""
    return validate(build(Config, read_config(path, overrides)))
