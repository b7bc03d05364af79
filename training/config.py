"""Training configuration: every hyperparameter, its default, and validation.

A YAML file sets any of these keys (sections ``ppo``, ``league``, ``eval``); ``--set
section.key=value`` overrides one. An unknown key, a wrong type or an impossible value stops
the run before training, with a message naming the key.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A configuration that cannot be trained; the message names the key."""


@dataclass
class PPO:
    learning_rate: float = 3e-4
    n_steps: int = 1024  # per environment, per update
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [256, 256])


@dataclass
class LeagueConfig:
    # Weights of each kind of opponent, drawn per seat and episode (training/league.py).
    mix: dict[str, float] = field(default_factory=lambda: {"snapshot": 0.4, "heuristic": 0.4, "random": 0.2})
    pool: list[str] = field(default_factory=list)  # extra policy specs, drawn with weight mix["pool"]
    snapshot_every: int = 50_000  # timesteps between frozen snapshots joining the pool
    max_snapshots: int = 8  # the newest are kept


@dataclass
class EvalConfig:
    every: int = 50_000  # timesteps between evaluations against the heuristic
    games: int = 60  # games per periodic evaluation
    players: int = 4
    final_games: int = 400  # games of the final evaluation (against heuristic, then random)


@dataclass
class RunConfig:
    """The keys every training script shares (training/train.py, training/train_rllib.py)."""

    run_name: str = "default"
    env: str = "Dragonstones-v0"  # or "DrachenSchatten-v0"
    num_players: int | list[int] = 4  # a list: one size drawn per episode
    observation_mode: str = "recall"
    reward_shaping: float = 0.0  # Dragonstones: reward per point scored, on top of the final +1/-1/(n-1)
    total_timesteps: int = 200_000
    seed: int = 0
    torch_threads: int = 1
    checkpoint_every: int = 50_000
    runs_dir: str = "runs"  # logs, checkpoints, snapshots
    out_dir: str = "policies"  # the result: <out_dir>/<run_name>/

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def game(self) -> str:
        return "drachenschatten" if self.env.startswith("DrachenSchatten") else "dragonstones"

    @property
    def env_name(self) -> str:
        """The PettingZoo name of the game (what checkpoint cards record)."""
        return f"{self.game}_v0"

    @property
    def heuristic(self) -> str:
        """The spec of the game's rule-based bot."""
        return "ds-heuristic" if self.game == "drachenschatten" else "heuristic"

    @property
    def player_range(self) -> range:
        return range(2, 5) if self.game == "drachenschatten" else range(3, 7)


@dataclass
class Config(RunConfig):
    time_budget_s: float = 0.0  # > 0: stop training after this much wall time (whatever the timesteps)
    n_envs: int = 2  # SubprocVecEnv workers
    device: str = "cpu"
    progress_bar: bool = True
    ppo: PPO = field(default_factory=PPO)
    league: LeagueConfig = field(default_factory=LeagueConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)


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
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
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
    need(cfg.env in ("Dragonstones-v0", "DrachenSchatten-v0"), "env", "must be Dragonstones-v0 or DrachenSchatten-v0")
    sizes = cfg.num_players if isinstance(cfg.num_players, list) else [cfg.num_players]
    lo, hi = cfg.player_range.start, cfg.player_range.stop - 1
    need(bool(sizes) and all(lo <= n <= hi for n in sizes), "num_players", f"table sizes must be {lo}..{hi}")
    need(cfg.observation_mode in ("recall", "table"), "observation_mode", "must be 'recall' or 'table'")
    need(cfg.reward_shaping >= 0, "reward_shaping", "must be >= 0")
    need(cfg.reward_shaping == 0 or cfg.game == "dragonstones", "reward_shaping", "exists for Dragonstones only")
    need(cfg.total_timesteps > 0, "total_timesteps", "must be > 0")
    need(cfg.torch_threads >= 1, "torch_threads", "must be >= 1")
    need(cfg.checkpoint_every > 0, "checkpoint_every", "must be > 0")
    need(cfg.run_name.replace("-", "").replace("_", "").isalnum(), "run_name", "letters, digits, - and _ only")


def validate_league(league: Any, kinds: tuple[str, ...]) -> None:
    """Check a league section: ``mix`` weights over ``kinds``, ``pool``, snapshots."""
    need(set(league.mix) <= set(kinds), "league.mix", f"kinds are {list(kinds)}")
    need(all(w >= 0 for w in league.mix.values()) and sum(league.mix.values()) > 0, "league.mix",
         "weights must be >= 0 with a positive sum")
    need(league.mix.get("pool", 0) == 0 or bool(league.pool), "league.pool", "lists no policy but league.mix.pool > 0")
    need(league.snapshot_every > 0, "league.snapshot_every", "must be > 0")
    need(league.max_snapshots >= 1, "league.max_snapshots", "must be >= 1")


def validate_eval(e: EvalConfig, players: range) -> None:
    need(e.every > 0 and e.games >= 1 and e.final_games >= 0, "eval", "every > 0, games >= 1, final_games >= 0")
    need(e.players in players, "eval.players", f"must be {players.start}..{players.stop - 1}")


def validate(cfg: Config) -> Config:
    from .league import KINDS

    validate_run(cfg)
    need(cfg.time_budget_s >= 0, "time_budget_s", "must be >= 0 (0: no budget)")
    need(cfg.n_envs >= 1, "n_envs", "must be >= 1")
    p = cfg.ppo
    need(p.learning_rate > 0, "ppo.learning_rate", "must be > 0")
    need(p.n_steps >= 2, "ppo.n_steps", "must be >= 2")
    need(1 <= p.batch_size <= p.n_steps * cfg.n_envs, "ppo.batch_size", "must be 1..n_steps * n_envs")
    need(p.n_epochs >= 1, "ppo.n_epochs", "must be >= 1")
    need(0 < p.gamma <= 1, "ppo.gamma", "must be in (0, 1]")
    need(0 <= p.gae_lambda <= 1, "ppo.gae_lambda", "must be in [0, 1]")
    need(p.clip_range > 0, "ppo.clip_range", "must be > 0")
    need(p.ent_coef >= 0 and p.vf_coef >= 0, "ppo.ent_coef/vf_coef", "must be >= 0")
    need(bool(p.net_arch) and all(w > 0 for w in p.net_arch), "ppo.net_arch", "layer widths must be > 0")
    validate_league(cfg.league, KINDS)
    validate_eval(cfg.eval, cfg.player_range)
    return cfg


def parse_override(text: str) -> tuple[list[str], Any]:
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected key=value (e.g. ppo.learning_rate=1e-4)")
    key, raw = text.split("=", 1)
    return key.strip().split("."), yaml.safe_load(raw)


def read_config(path: str | Path | None, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The raw mapping of a YAML file (or {}), with ``key=value`` overrides applied."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = yaml.safe_load(Path(path).read_text()) or {}
        except OSError as err:
            raise ConfigError(f"cannot read config {path}: {err}") from None
        except yaml.YAMLError as err:
            raise ConfigError(f"config {path} is not valid YAML: {err}") from None
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
