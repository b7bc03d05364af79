"""Training configuration: every hyperparameter, its default, and validation.

A YAML file sets any of these keys (sections ``ppo``, ``league``, ``eval``); ``--set
section.key=value`` overrides one. An unknown key, a duplicate key, a wrong type, a number that
is not finite (nan, inf) or an impossible value stops the run before training, with a
:class:`ConfigError` naming the key. Sizes have upper bounds too (:data:`LIMITS`), so that a
typo cannot ask for a million worker processes or a network that exhausts memory:

=====================  ================  ======================================================
key                    bound             why
=====================  ================  ======================================================
``n_envs``             1..1024           tables of a few MB each (``collector: subproc``:
                       (subproc: 1..64)  one worker process each)
``workers``            1..64             processes of the batched collector
``torch_threads``      1..256            more threads than any machine here has cores
``total_timesteps``    1..10^11          about a year of training at 3,000 steps/s
``ppo.net_arch``       1..16 layers,     a checkpoint must stay under the 50 M parameters
                       widths 1..8192,   ``load_policy`` accepts (``dragonstones_env/policies/checkpoint.py``)
                       20 M hidden
                       parameters
``device``             cpu, cuda,        torch's device names (``cuda:N`` for one GPU)
                       cuda:N, mps, auto
=====================  ================  ======================================================
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dragonstones_env import games
from dragonstones_env.core import same_game
from dragonstones_env.games import GameSpec
from dragonstones_env.policies import PolicyError, load_policy, zoo
from dragonstones_env.registry import ByGame
from training.league import KINDS, League


class ConfigError(ValueError):
    """A configuration that cannot be trained; the message names the key."""


LIMITS = {
    "n_envs": 1024,  # batched tables (each a few MB); a subproc table is a process: at most workers_subproc
    "n_envs_subproc": 64,
    "workers": 64,
    "torch_threads": 256,
    "total_timesteps": 10**11,
    "net_arch_layers": 16,
    "net_arch_width": 8192,
    "net_arch_hidden_parameters": 20_000_000,  # weights between hidden layers (the rest is in/out)
    "ppo.n_steps": 10**7,
    "eval.games": 10**6,
    "league.max_snapshots": 1000,
    "imitate.max_rows": 2_000_000,  # rows of about 6 kB (observation and mask): 12 GB at most
}
COLLECTORS = ("batched", "subproc")  # training/envs.py: how the tables are played
DEVICE = re.compile(r"cpu|cuda(:\d{1,2})?|mps|auto")


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (YAML keeps the last one
    silently: a duplicated ``learning_rate`` would hide the first)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: let the base class report it
                break
            if duplicate:
                raise ConfigError(f"duplicate key {key!r} (line {key_node.start_mark.line + 1}); give each key once")
            seen.add(key)
        return super().construct_mapping(node, deep)


def _load_yaml(text: str, where: str) -> Any:
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: builds plain data only
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from None
    except (yaml.YAMLError, RecursionError) as err:
        raise ConfigError(f"{where} is not valid YAML: {err}") from None




# The PettingZoo name (with its layout version) of each game id, as checkpoint cards record it
# (``ENV_NAMES["dragonstones"] == "dragonstones_v1"``), read from the game registry.
ENV_NAMES: Mapping[str, str] = ByGame(lambda spec: spec.name)


@dataclass
class PPOCommon:
    """The PPO hyperparameters both trainers share (SB3's :class:`PPO`, RLlib's ``RLlibPPOConfig``),
    written once; each trainer's section adds the keys of its own library."""

    learning_rate: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [256, 256])  # actor (and critic) hidden widths


@dataclass
class PPO(PPOCommon):
    """Stable-Baselines3's MaskablePPO: the ``ppo`` section of configs/default.yaml."""

    # per table, per update: with the batched collector's 64 tables, 8,192 decisions a rollout
    n_steps: int = 128
    batch_size: int = 1024
    n_epochs: int = 4


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
    copies ``teacher``'s decisions, then PPO and the league take over. Not used by --resume
    (the clone is in the checkpoint) nor by --finetune (the start is the given model)."""

    teacher: str = ""  # a policy spec, e.g. "heuristic"; "" starts from random weights
    opponents: list[str] = field(default_factory=list)  # the other seats' pool; [] = the teacher and the zoo
    games: int = 2000  # at most this many games of the teacher...
    max_rows: int = 150_000  # ...or until this many of its decisions are kept (about 1.2 GB)
    epochs: int = 8  # passes over the decisions
    batch_size: int = 512
    learning_rate: float = 1e-3
    value_coef: float = 0.5  # weight of the value head's loss (the discounted return that followed)
    holdout: float = 0.05  # share of decisions kept aside to measure agreement with the teacher
    # > 0: PPO's reward pays anchor_kl * log(pi / start) at each decision, a leash to where PPO
    # starts: the clone, or the --finetune model (training/anchor.py says why); 0: no leash
    anchor_kl: float = 0.0


@dataclass
class EvalConfig:
    every: int = 50_000  # timesteps between evaluations against the heuristic
    games: int = 60  # games per periodic evaluation
    players: int = 4
    final_games: int = 400  # games of the final evaluation (against heuristic, then random)
    # The robustness figure (dragonstones_env/evaluation/panel.py: the worst per-seat win-rate ratio to
    # parity over every mix of k learners against players - k copies of each zoo bot, the
    # heuristic and random). A rough figure during training, a finer one at the end.
    panel_every: int = 0  # timesteps between panels during training (0: none)
    panel_games: int = 12  # games per mix of those panels
    final_panel_games: int = 0  # games per mix of the panel at the end (0: none); in the card and printed


@dataclass
class RunConfig:
    """The keys every training script shares (training/train.py, training/train_rllib.py)."""

    run_name: str = "default"
    game: str = "dragonstones"  # the registry id: "dragonstones" or "drachenschatten"
    num_players: int | list[int] = 4  # a list: one size drawn per episode
    observation_mode: str = "recall"
    reward_shaping: float = 0.0  # Dragonstones: reward per point scored, on top of the final +1/-1/(n-1)
    characters: str | None = None  # Dragonstones: custom characters file (docs/custom-characters.md)
    exclude: list[str] = field(default_factory=list)  # Dragonstones: standard specials left out
    total_timesteps: int = 200_000
    seed: int = 0
    torch_threads: int = 1
    checkpoint_every: int = 50_000
    runs_dir: str = "runs"  # logs, checkpoints, snapshots
    out_dir: str = "runs/policies"  # the result: <out_dir>/<run_name>/ (python -m training.promote ships it)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def spec(self) -> GameSpec:
        """The game's spec, from the game registry."""
        try:
            return games.get(self.game)
        except games.UnknownGameError:
            raise ConfigError(f"game: unknown game {self.game!r}; the games are {', '.join(games.ids())}") from None

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

    @property
    def player_range(self) -> range:
        return self.spec.players

    def env_options(self) -> dict[str, Any]:
        """The config's env options this game has (``observation_mode``, ``reward_shaping``: Fist's)."""
        mine = {"observation_mode": self.observation_mode, "reward_shaping": self.reward_shaping}
        if self.characters or self.exclude:  # a custom deck (issue #16): only when asked for
            mine.update(characters=self.characters, exclude=list(self.exclude))
        return {k: v for k, v in mine.items() if k in self.spec.options}


@dataclass
class Config(RunConfig):
    time_budget_s: float = 0.0  # > 0: stop training after this much wall time (whatever the timesteps)
    # A checkpoint folder whose actor (policy.npz) and critic (value.npz) a new run starts from,
    # read without unpickling (training/start.py); "" starts from random weights or imitate.teacher
    start: str = ""
    # The tables played at once (training/envs.py): "batched" plays n_envs tables in lockstep in
    # `workers` processes, each opponent deciding for all its seats at once (training/collector.py);
    # "subproc" gives each of the n_envs tables a process of its own (SB3's SubprocVecEnv).
    collector: str = "batched"
    n_envs: int = 64
    workers: int = 1
    device: str = "cpu"
    progress_bar: bool = True
    ppo: PPO = field(default_factory=PPO)
    league: LeagueConfig = field(default_factory=LeagueConfig)
    imitate: ImitateConfig = field(default_factory=ImitateConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)


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
        if not math.isfinite(value):  # nan would pass every "> 0" check below, inf most of them
            raise ConfigError(f"{name}: must be a finite number, got {value!r}")
        return float(value)
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
    """Check the keys of :class:`RunConfig`."""
    need(cfg.game in games.ids(), "game", "must be " + " or ".join(games.ids()))
    sizes = cfg.num_players if isinstance(cfg.num_players, list) else [cfg.num_players]
    lo, hi = cfg.player_range.start, cfg.player_range.stop - 1
    need(bool(sizes) and all(lo <= n <= hi for n in sizes), "num_players", f"table sizes must be {lo}..{hi}")
    need(cfg.observation_mode in ("recall", "table"), "observation_mode", "must be 'recall' or 'table'")
    need(cfg.reward_shaping >= 0, "reward_shaping", "must be >= 0")
    need(cfg.reward_shaping == 0 or "reward_shaping" in cfg.spec.options, "reward_shaping",
         f"is not an option of {cfg.spec.title}")
    if cfg.characters or cfg.exclude:  # a custom deck: loaded now, so a bad card fails before training
        need("characters" in cfg.spec.options, "characters", f"is not an option of {cfg.spec.title}")
        try:
            cfg.spec.env(num_players=sizes[0], **cfg.env_options())
        except ValueError as err:
            raise ConfigError(f"characters: {err}") from None
    need(0 < cfg.total_timesteps <= LIMITS["total_timesteps"], "total_timesteps",
         f"must be 1..{LIMITS['total_timesteps']}")
    need(1 <= cfg.torch_threads <= LIMITS["torch_threads"], "torch_threads", f"must be 1..{LIMITS['torch_threads']}")
    need(cfg.checkpoint_every > 0, "checkpoint_every", "must be > 0")
    need(cfg.run_name.replace("-", "").replace("_", "").isalnum(), "run_name", "letters, digits, - and _ only")


def validate_league(league: LeagueConfig, kinds: tuple[str, ...]) -> None:
    """Check a league section (both trainers'): ``mix`` weights over ``kinds``, ``table``, PFSP,
    ``pool``, snapshots."""
    need(0.0 <= league.table <= 1.0, "league.table", "must be a share in 0..1")
    need(0.0 <= league.mixed <= 1.0 - league.table, "league.mixed", "must be a share in 0..1 with table + mixed <= 1")
    need(0.0 <= league.pfsp_power <= 20.0, "league.pfsp_power", "must be in 0..20")
    need(league.latest_every > 0, "league.latest_every", "must be > 0")
    need(set(league.mix) <= set(kinds), "league.mix", f"kinds are {list(kinds)}")
    need(all(w >= 0 for w in league.mix.values()) and sum(league.mix.values()) > 0, "league.mix",
         "weights must be >= 0 with a positive sum")
    need(league.mix.get("pool", 0) == 0 or bool(league.pool), "league.pool", "lists no policy but league.mix.pool > 0")
    need(league.snapshot_every > 0, "league.snapshot_every", "must be > 0")
    need(1 <= league.max_snapshots <= LIMITS["league.max_snapshots"], "league.max_snapshots",
         f"must be 1..{LIMITS['league.max_snapshots']}")
    need(all(isinstance(s, str) and s for s in league.pool), "league.pool", "lists policy specs (non-empty strings)")


def validate_net_arch(net_arch: list[int], key: str) -> None:
    """Hidden layer widths within :data:`LIMITS` (a checkpoint of them must load)."""
    need(1 <= len(net_arch) <= LIMITS["net_arch_layers"], key, f"1..{LIMITS['net_arch_layers']} hidden layers")
    need(all(1 <= w <= LIMITS["net_arch_width"] for w in net_arch), key,
         f"layer widths must be 1..{LIMITS['net_arch_width']}")
    hidden = sum(a * b for a, b in itertools.pairwise(net_arch))
    need(hidden <= LIMITS["net_arch_hidden_parameters"], key,
         f"{hidden} weights between hidden layers; at most {LIMITS['net_arch_hidden_parameters']}")


def validate_eval(e: EvalConfig, players: range) -> None:
    need(e.every > 0 and e.games >= 1 and e.final_games >= 0, "eval", "every > 0, games >= 1, final_games >= 0")
    need(e.games <= LIMITS["eval.games"] and e.final_games <= LIMITS["eval.games"], "eval.games",
         f"games and final_games must be at most {LIMITS['eval.games']}")
    need(e.players in players, "eval.players", f"must be {players.start}..{players.stop - 1}")
    need(e.panel_every >= 0 and e.panel_games >= 1 and e.final_panel_games >= 0, "eval",
         "panel_every >= 0, panel_games >= 1, final_panel_games >= 0")
    need(e.panel_games <= LIMITS["eval.games"] and e.final_panel_games <= LIMITS["eval.games"], "eval.panel_games",
         f"panel_games and final_panel_games must be at most {LIMITS['eval.games']}")


def validate_imitate(im: ImitateConfig) -> None:
    need(1 <= im.games <= LIMITS["eval.games"], "imitate.games", f"must be 1..{LIMITS['eval.games']}")
    need(1 <= im.max_rows <= LIMITS["imitate.max_rows"], "imitate.max_rows",
         f"must be 1..{LIMITS['imitate.max_rows']} (each row holds one observation in memory)")
    need(1 <= im.epochs <= 1000, "imitate.epochs", "must be 1..1000")
    need(im.batch_size >= 1, "imitate.batch_size", "must be >= 1")
    need(im.learning_rate > 0, "imitate.learning_rate", "must be > 0")
    need(im.value_coef >= 0, "imitate.value_coef", "must be >= 0")
    need(0 <= im.holdout < 1, "imitate.holdout", "must be a share in [0, 1)")
    need(im.anchor_kl >= 0, "imitate.anchor_kl", "must be >= 0 (0: no leash to the clone)")
    need(all(isinstance(s, str) and s for s in im.opponents), "imitate.opponents",
         "lists policy specs (non-empty strings)")


def validate(cfg: Config) -> Config:
    validate_run(cfg)
    need(cfg.time_budget_s >= 0, "time_budget_s", "must be >= 0 (0: no budget)")
    need(cfg.collector in COLLECTORS, "collector", f"must be one of {list(COLLECTORS)}")
    most = LIMITS["n_envs"] if cfg.collector == "batched" else LIMITS["n_envs_subproc"]
    need(1 <= cfg.n_envs <= most, "n_envs", f"must be 1..{most} with collector: {cfg.collector}")
    need(1 <= cfg.workers <= min(LIMITS["workers"], cfg.n_envs), "workers", "must be 1..min(64, n_envs)")
    need(cfg.workers == 1 or cfg.collector == "batched", "workers", "is the batched collector's (collector: batched)")
    need(DEVICE.fullmatch(cfg.device) is not None, "device", "must be cpu, cuda, cuda:N, mps or auto")
    p = cfg.ppo
    need(p.learning_rate > 0, "ppo.learning_rate", "must be > 0")
    need(2 <= p.n_steps <= LIMITS["ppo.n_steps"], "ppo.n_steps", f"must be 2..{LIMITS['ppo.n_steps']}")
    need(1 <= p.batch_size <= p.n_steps * cfg.n_envs, "ppo.batch_size", "must be 1..n_steps * n_envs")
    need(p.n_epochs >= 1, "ppo.n_epochs", "must be >= 1")
    need(0 < p.gamma <= 1, "ppo.gamma", "must be in (0, 1]")
    need(0 <= p.gae_lambda <= 1, "ppo.gae_lambda", "must be in [0, 1]")
    need(p.clip_range > 0, "ppo.clip_range", "must be > 0")
    need(p.ent_coef >= 0 and p.vf_coef >= 0, "ppo.ent_coef/vf_coef", "must be >= 0")
    validate_net_arch(p.net_arch, "ppo.net_arch")
    validate_league(cfg.league, KINDS)
    validate_imitate(cfg.imitate)
    validate_eval(cfg.eval, cfg.player_range)
    return cfg


def check_sources(cfg: Config) -> None:
    """The checks that load what the config names, before a run folder exists: the league's fixed
    seats (its pool and zoo) and the imitation teacher and its opponents (a ConfigError naming them).
    The start's weights are read and checked by training/start.py."""
    if cfg.start and cfg.imitate.teacher:
        raise ConfigError(f"start ({cfg.start}) is where the run starts, and so is imitate.teacher: give one of "
                          "them (--set start= clears start)")
    lg = cfg.league
    league = League(Path(cfg.runs_dir) / cfg.run_name, lg.mix, lg.pool, zoo=zoo(cfg.game), heuristic=cfg.heuristic,
                    table=lg.table, mixed=lg.mixed, pfsp_power=lg.pfsp_power, game=cfg.env_name)
    try:
        league.check()
    except (PolicyError, ValueError) as err:
        raise ConfigError(f"league.pool: {err}") from None
    for spec in filter(None, [cfg.imitate.teacher, *cfg.imitate.opponents]):
        try:
            game = getattr(load_policy(spec), "game", None)
        except PolicyError as err:
            raise ConfigError(f"imitate: {err}") from None
        if game is not None and not same_game(game, cfg.env_name):
            raise ConfigError(f"imitate: {spec!r} plays {game}, not {cfg.env_name}")


def parse_override(text: str) -> tuple[list[str], Any]:
    if not isinstance(text, str) or "=" not in text:
        raise ConfigError(f"--set {text!r}: expected key=value (e.g. ppo.learning_rate=1e-4)")
    key, raw = text.split("=", 1)
    keys = key.strip().split(".")
    if not all(k.strip() for k in keys):
        raise ConfigError(f"--set {text!r}: empty key; expected key=value (e.g. ppo.learning_rate=1e-4)")
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
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read config {path}: {err}") from None
    data = _load_yaml(text, f"config {path}")
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(f"config {path}: expected a mapping of keys, got {type(data).__name__}")
    if "base" not in data:
        return data
    base = data.pop("base")
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"config {path}: base: expected the path of another config, got {base!r}")
    base_path = (path.parent / base).resolve()
    if base_path in chain or base_path == path.resolve():
        raise ConfigError(f"config {path}: base: {base} makes a cycle ({' -> '.join(str(p) for p in chain)})")
    if len(chain) >= MAX_BASE_DEPTH:
        raise ConfigError(f"config {path}: base: more than {MAX_BASE_DEPTH} configs deep")
    return merge(read_file(base_path, (*chain, path.resolve())), data)


def read_config(path: str | Path | None, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The raw mapping of a YAML file (or {}) on top of its ``base`` chain, with ``key=value`` overrides applied."""
    data: dict[str, Any] = {} if path is None else read_file(Path(path))
    for text in overrides:
        keys, value = parse_override(text)
        node = data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {text!r}: {k} is not a section")
        node[keys[-1]] = value
    return data


def load_config(path: str | Path | None, overrides: Sequence[str] = ()) -> Config:
    """The config of a YAML file (or the defaults), with ``key=value`` overrides applied."""
    return validate(build(Config, read_config(path, overrides)))
