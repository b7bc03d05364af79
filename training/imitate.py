"""Behaviour cloning: start the learner from a teacher bot's play before self-play begins.

A learner that starts from random weights spends its first million steps discovering what
the rule-based bots already know (bid on what scores, keep coins for decisive cards), and the
self-play league then pulls it towards whatever its early, weak copies are bad at: champion v1
(562,732 steps from scratch) lost to one heuristic bot seated among three copies of itself in
80-98% of games. Starting from a clone of a sound teacher, as AlphaStar started from human
replays before its league, puts the learner where the bots are and lets self-play improve on
that rather than rediscover it.

Read top to bottom:

1. :func:`collect` plays games in the training environment itself (the single-agent Gymnasium
   env, same observation mode, table sizes and reward shaping), the teacher in the learner's
   seat and ``opponents`` (a pool drawn per seat) in the others, and keeps every decision of
   the teacher: observation, action mask, action, and the discounted return that followed.
2. :func:`clone` fits the model's policy to the teacher's actions (cross-entropy of the masked
   distribution) and its value head to those returns (so that PPO's first advantages are not
   noise that would undo the clone), on a held-out split to report how well it copies.

The policy's target is the teacher's move (``imitate.target: action``), or, for a search teacher,
the share of its simulations that went to each move at the root (``visits``: AlphaZero's policy
target). A search's move after a few dozen noisy simulations is a noisy label; its visit counts say
how close the runner-up was (one expert-iteration step on moves alone made the DrachenSchatten
champion worse: docs/results.md).

A search teacher's games cost minutes to hours; :func:`save_demonstrations` keeps them in an .npz
(plain arrays: nothing in it is unpickled) with the settings that made them, and
:func:`load_demonstrations` reads them back, checked, so that one collection serves many fits
(``imitate.demonstrations``).

The teacher and everything else come from the ``imitate`` section of the config
(:class:`training.config.ImitateConfig`).
"""

from __future__ import annotations

import json
import math
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from threadpoolctl import threadpool_limits

from dragonstones_env.bounds import FILE_BYTES
from dragonstones_env.play.vector import worker_context
from dragonstones_env.policies import decide, load_policy, seat, table_of
from dragonstones_env.policies.search import SearchPolicy


@dataclass
class Demonstrations:
    """The teacher's decisions: one row per decision."""

    observations: np.ndarray  # float32 (rows, obs_size)
    masks: np.ndarray  # bool (rows, num_actions)
    actions: np.ndarray  # int64 (rows,): the teacher's moves
    returns: np.ndarray  # float32 (rows,): discounted reward from this decision to the end
    games: int
    wins: float  # the teacher's wins (shared wins split) over those games
    # the policy's target, a distribution over a few actions a row: targets (int64 (rows, k)) with
    # their weights (float32 (rows, k), each row summing to 1, padding weighted 0); None: the moves
    targets: np.ndarray | None = None
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.targets is None:
            self.targets = self.actions[:, None]
            self.weights = np.ones((len(self.actions), 1), np.float32)

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def concatenate(cls, parts: list[Demonstrations]) -> Demonstrations:
        """The decisions of ``parts``, in their order, as one (targets padded to the widest)."""
        width = max(p.targets.shape[1] for p in parts)
        targets = np.concatenate([_pad(p.targets, width, p.actions) for p in parts])
        weights = np.concatenate([_pad(p.weights, width, 0.0) for p in parts])
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("observations", "masks", "actions",
                                                                             "returns")),
                   games=sum(p.games for p in parts), wins=float(sum(p.wins for p in parts)), targets=targets,
                   weights=weights)


def _pad(columns: np.ndarray, width: int, fill: Any) -> np.ndarray:
    """``columns`` widened to ``width`` columns with ``fill`` (a row's value, or one for all)."""
    extra = width - columns.shape[1]
    if extra == 0:
        return columns
    pad = np.broadcast_to(np.asarray(fill, columns.dtype).reshape(-1, 1), (len(columns), extra))
    return np.concatenate([columns, pad], axis=1)


TARGETS = ("action", "visits")


def visit_target(visits: dict[int, int], width: int) -> tuple[list[int], list[float]]:
    """A search's root visits as a target: its ``width`` most visited actions (ties: the smaller
    action), weighted by their share of those visits."""
    top = sorted(visits.items(), key=lambda kv: (-kv[1], kv[0]))[:width]
    total = sum(v for _, v in top)
    return [a for a, _ in top], [v / total for _, v in top]


VISIT_WIDTH = 8  # the root actions a visits target keeps (a search of 200 simulations widens to 8)


def collect(env_id: str, teacher: str, opponents: list[str], games: int, gamma: float, seed: int,
            max_rows: int, workers: int = 1, target: str = "action", **env_kwargs: Any) -> Demonstrations:
    """``games`` games of ``teacher`` in the learner's seat of ``env_id``; each other seat draws
    its policy from ``opponents``. Stops after the game in which ``max_rows`` decisions are reached.
    ``target``: the policy's target, the teacher's move or (``visits``) a search's root visits.

    Game ``g`` is dealt from ``seed + g`` and the teacher reseeded with it, so the decisions are the
    same whatever ``workers`` (processes that share the games out: a search teacher spends a
    tenth of a second or more on a decision)."""
    if workers > 1 and games > 1:
        shares = [s for s in np.array_split(np.arange(games), workers) if len(s)]
        tasks = [(env_id, teacher, opponents, seed, int(s[0]), len(s), gamma, max_rows, target, env_kwargs)
                 for s in shares]
        # one BLAS thread a process, as the vector env's workers (dragonstones_env/play/vector.py says why)
        with ProcessPoolExecutor(len(tasks), mp_context=worker_context(), initializer=threadpool_limits,
                                 initargs=(1,)) as pool:
            played = [game for part in pool.map(_play_share, tasks) for game in part]
    else:
        played = _play_share((env_id, teacher, opponents, seed, 0, games, gamma, max_rows, target, env_kwargs))
    kept, rows = [], 0
    for game in played:  # the sequential rule: every game up to the one that reaches max_rows
        if rows >= max_rows:
            break
        kept.append(game)
        rows += len(game.actions)
    return Demonstrations.concatenate(kept)


def _play_share(task: tuple) -> list[Demonstrations]:
    """Games ``first .. first + count - 1`` of :func:`collect`, one :class:`Demonstrations` each;
    stops once they hold ``max_rows`` decisions (the games after could not be kept)."""
    env_id, teacher, opponents, seed, first, count, gamma, max_rows, target, env_kwargs = task
    if target not in TARGETS:
        raise ValueError(f"target {target!r}: the policy's target is one of {TARGETS}")
    env = gym.make(env_id, disable_env_checker=True, opponents=[list(opponents)], **env_kwargs)
    teacher_policy = load_policy(teacher, seed=seed)
    if target == "visits" and not isinstance(teacher_policy, SearchPolicy):
        raise ValueError(f"target 'visits' needs a search teacher (ismcts:...) that reports its root visits; "
                         f"{teacher!r} does not: use target 'action'")
    played: list[Demonstrations] = []
    rows = 0
    for g in range(first, first + count):
        obs, _ = env.reset(seed=seed + g)
        aec = env.unwrapped.aec
        bot = seat(teacher_policy, table_of(aec, env.unwrapped.seat, seed + g))  # the learner's seat
        obs_rows, mask_rows, actions, rewards, targets = [], [], [], [], []
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            # decide(): a search teacher is handed its seat's information state first
            action = decide(bot, aec, aec.agent_selection)
            obs_rows.append(obs.astype(np.float32, copy=True))
            mask_rows.append(mask.copy())
            actions.append(int(action))
            if target == "visits":
                targets.append(visit_target(bot.root_visits, VISIT_WIDTH))
            obs, reward, terminated, truncated, _ = env.step(action)
            rewards.append(float(reward))
            done = terminated or truncated
        # the return that followed each decision, as PPO's value head is asked to predict it
        g_t, tail = 0.0, []
        for r in reversed(rewards):
            g_t = r + gamma * g_t
            tail.append(g_t)
        demo = Demonstrations(np.stack(obs_rows), np.stack(mask_rows), np.asarray(actions, np.int64),
                              np.asarray(tail[::-1], np.float32), 1, float(rewards[-1] > 0))
        if targets:
            width = max(len(a) for a, _ in targets)
            demo.targets = np.array([a + [a[0]] * (width - len(a)) for a, _ in targets], np.int64)
            demo.weights = np.array([w + [0.0] * (width - len(w)) for _, w in targets], np.float32)
        played.append(demo)
        rows += len(actions)
        if rows >= max_rows:
            break
    env.close()
    return played


ARRAYS = {"observations": np.float32, "masks": np.bool_, "actions": np.int64, "returns": np.float32,
          "targets": np.int64, "weights": np.float32}  # a saved collection's arrays and their types


def save_demonstrations(demos: Demonstrations, path: str | Path, identity: dict[str, Any]) -> None:
    """``demos`` written to ``path`` (.npz, plain arrays) with ``identity``, the settings that made
    them (:func:`load_demonstrations` refuses a file of other settings). Written whole or not at all."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    with open(part, "wb") as f:  # a file object: np.savez would append .npz to a name
        np.savez(f, **{k: getattr(demos, k) for k in ARRAYS}, games=np.int64(demos.games),
                 wins=np.float64(demos.wins), identity=np.str_(json.dumps(identity, sort_keys=True)))
    part.replace(path)


def _check_size(path: str | Path) -> None:
    """A collection whose arrays would unpack to more than ``FILE_BYTES["demonstrations"]`` is
    refused before any is read: a small zip can hold huge compressed entries. The sizes are the
    zip directory's, which bound what reading an entry returns."""
    limit = FILE_BYTES["demonstrations"]
    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (OSError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path} is not a saved collection of demonstrations ({err})") from None
    if unpacked > limit:
        raise ValueError(f"{path}: its arrays unpack to {unpacked} bytes; a collection holds at most {limit} "
                         "(dragonstones_env/bounds.py FILE_BYTES)")


def saved_identity(path: str | Path) -> dict[str, Any]:
    """The settings a saved collection records (reads that entry only, once the file's size is checked)."""
    _check_size(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            identity = json.loads(str(data["identity"][()]))
    except (OSError, ValueError, KeyError) as err:  # not an .npz, pickled entries, no identity, bad JSON
        raise ValueError(f"{path} is not a saved collection of demonstrations ({err})") from None
    if not isinstance(identity, dict):
        raise ValueError(f"{path} is not a saved collection of demonstrations (its identity is not a mapping)")
    return identity


def identity_differences(recorded: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """Each setting where ``recorded`` and ``wanted`` (compared as JSON) differ, as "key: recorded X, now Y"."""
    wanted = json.loads(json.dumps(wanted, sort_keys=True))
    return [f"{k}: recorded {recorded.get(k)!r}, now {wanted.get(k)!r}"
            for k in sorted(set(recorded) | set(wanted)) if recorded.get(k) != wanted.get(k)]


def load_demonstrations(path: str | Path, identity: dict[str, Any], obs_size: int, num_actions: int) -> Demonstrations:
    """The collection :func:`save_demonstrations` wrote to ``path``, if it was made with ``identity``
    and its arrays are whole: the shapes of an observation (``obs_size``) and an action mask
    (``num_actions``), every move and target a legal action, every weight row summing to 1. A
    ValueError names what is wrong; nothing in the file is unpickled."""
    differences = identity_differences(saved_identity(path), identity)
    if differences:
        raise ValueError(f"{path} holds the demonstrations of other settings ({'; '.join(differences)}): "
                         "delete it to collect again, or name another file")
    _check_headers(path, obs_size, num_actions)
    arrays = _read_arrays(path)
    games, wins = arrays.pop("games"), arrays.pop("wins")
    _check_shapes(path, arrays, obs_size, num_actions)
    if not (games.shape == () == wins.shape and games.dtype.kind == "i" and wins.dtype.kind == "f"
            and int(games) >= 1 and 0 <= float(wins) <= int(games)):
        raise ValueError(f"{path}: games {games!r} and wins {wins!r} must be counts with 0 <= wins <= games >= 1")
    _check_values(path, arrays, num_actions)
    return Demonstrations(**arrays, games=int(games), wins=float(wins))


def _check_headers(path: str | Path, obs_size: int, num_actions: int) -> None:
    """Each entry's shape from its ``.npy`` header, before any is read: no row wider than the game's
    observation or action count (1e8-wide targets in 1.17 MB unpacked to 1.2 GB), and the bytes the
    headers claim within ``FILE_BYTES["demonstrations"]`` (a header claiming 4 TiB is refused by
    name, not a MemoryError)."""
    limit, width, claimed = FILE_BYTES["demonstrations"], max(obs_size, num_actions), 0
    try:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                with archive.open(name) as f:
                    version = np.lib.format.read_magic(f)
                    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                        np.lib.format.read_array_header_2_0
                    shape, _, dtype = read(f)
                if any(int(n) > width for n in shape[1:]):
                    raise ValueError(f"{path}: {name} has rows of shape {tuple(shape[1:])}; this game's are at "
                                     f"most {width} wide")
                claimed += math.prod(int(n) for n in shape) * np.dtype(dtype).itemsize
    except (OSError, zipfile.BadZipFile, EOFError) as err:
        raise ValueError(f"{path} is not a saved collection of demonstrations ({err})") from None
    if claimed > limit:
        raise ValueError(f"{path}: its arrays' headers claim {claimed} bytes; a collection holds at most {limit} "
                         "(dragonstones_env/bounds.py FILE_BYTES)")


def _read_arrays(path: str | Path) -> dict[str, np.ndarray]:
    """Every entry a collection has, read as plain arrays (an object array is refused, not unpickled)."""
    with np.load(path, allow_pickle=False) as data:
        missing = [k for k in (*ARRAYS, "games", "wins") if k not in data.files]
        if missing:
            raise ValueError(f"{path} has no {', '.join(missing)}: not a whole collection")
        arrays = {}
        for k in (*ARRAYS, "games", "wins"):
            try:
                arrays[k] = data[k]
            except ValueError as err:  # an object array: numpy would have to unpickle it, and does not
                raise ValueError(f"{path}: {k} is not a plain array ({err})") from None
    return arrays


def _check_shapes(path: str | Path, arrays: dict[str, np.ndarray], obs_size: int, num_actions: int) -> None:
    """Each array of its type and of the shape ``rows`` decisions of this game give."""
    for k, dtype in ARRAYS.items():
        if arrays[k].dtype != dtype:
            raise ValueError(f"{path}: {k} is {arrays[k].dtype}, a collection's {k} are {np.dtype(dtype)}")
    if arrays["actions"].ndim != 1 or len(arrays["actions"]) == 0:
        raise ValueError(f"{path}: actions has shape {arrays['actions'].shape}; a collection has one move a decision, "
                         "and at least one decision")
    rows = len(arrays["actions"])
    width = arrays["targets"].shape[1] if arrays["targets"].ndim == 2 else -1
    shapes = {"observations": (rows, obs_size), "masks": (rows, num_actions), "returns": (rows,),
              "targets": (rows, width), "weights": (rows, width)}
    for k, shape in shapes.items():
        if arrays[k].shape != shape or width < 1:
            raise ValueError(f"{path}: {k} has shape {arrays[k].shape}; this game's collection of {rows} "
                             f"decisions has {shape} (observations of {obs_size}, {num_actions} actions)")


def _check_values(path: str | Path, arrays: dict[str, np.ndarray], num_actions: int) -> None:
    """Every move and weighted target a legal action of its decision, weights a distribution, numbers finite."""
    actions, targets, weights, masks = (arrays[k] for k in ("actions", "targets", "weights", "masks"))
    if not (np.all((actions >= 0) & (actions < num_actions)) and np.all((targets >= 0) & (targets < num_actions))):
        raise ValueError(f"{path}: a move or a target is not an action (0..{num_actions - 1})")
    weighted = np.where(weights > 0, targets, actions[:, None])  # a padded column: the move, always legal
    if not (np.all(np.take_along_axis(masks, actions[:, None], 1)) and np.all(np.take_along_axis(masks, weighted, 1))):
        raise ValueError(f"{path}: a move or a target is an action its decision's mask does not allow")
    if not (np.all(weights >= 0) and np.allclose(weights.sum(axis=1), 1.0, atol=1e-4)):
        raise ValueError(f"{path}: each decision's target weights must be >= 0 and sum to 1")
    if not (np.isfinite(arrays["observations"]).all() and np.isfinite(arrays["returns"]).all()):
        raise ValueError(f"{path}: observations and returns must be finite numbers")


def clone(model: Any, demos: Demonstrations, epochs: int, batch_size: int, learning_rate: float,
          value_coef: float, holdout: float, seed: int, log: Any = print) -> dict[str, float]:
    """Fit ``model.policy`` (an sb3-contrib ``MaskableActorCriticPolicy``) to ``demos``; returns
    the held-out agreement with the teacher (the share of decisions where the clone's most likely
    action is the teacher's) and the final losses."""
    import torch  # the training stack is imported by the scripts that use it, not by policies

    policy = model.policy
    device = policy.device
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(demos))
    n_hold = int(len(demos) * holdout)
    held, train = order[:n_hold], order[n_hold:]

    def tensors(idx: np.ndarray) -> tuple[torch.Tensor, ...]:
        return tuple(torch.as_tensor(getattr(demos, k)[idx], device=device)
                     for k in ("observations", "masks", "targets", "weights", "returns"))

    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.set_training_mode(True)
    stats: dict[str, float] = {}
    for epoch in range(epochs):
        rng.shuffle(train)
        total_pi = total_v = 0.0
        for start in range(0, len(train), batch_size):
            obs, masks, targets, weights, rets = tensors(train[start:start + batch_size])
            dist = policy.get_distribution(obs, action_masks=masks)
            # cross-entropy with the target distribution (one column of weight 1: the teacher's move)
            log_probs = dist.distribution.logits.gather(1, targets)
            loss_pi = -(weights * log_probs).sum(dim=1).mean()
            loss_v = torch.nn.functional.mse_loss(policy.predict_values(obs).flatten(), rets)
            loss = loss_pi + value_coef * loss_v
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            total_pi += float(loss_pi.detach()) * len(obs)
            total_v += float(loss_v.detach()) * len(obs)
        stats = {"epoch": epoch + 1, "loss_policy": total_pi / len(train), "loss_value": total_v / len(train)}
        if n_hold:
            stats["holdout_agreement"] = agreement(policy, demos, held, batch_size)
        log("imitate: " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in stats.items()))
    policy.set_training_mode(False)
    return stats


def agreement(policy: Any, demos: Demonstrations, idx: np.ndarray, batch_size: int) -> float:
    """The share of decisions ``idx`` where the policy's most likely action is the teacher's."""
    import torch

    same = 0
    with torch.no_grad():
        for start in range(0, len(idx), batch_size):
            part = idx[start:start + batch_size]
            obs = torch.as_tensor(demos.observations[part], device=policy.device)
            masks = torch.as_tensor(demos.masks[part], device=policy.device)
            probs = policy.get_distribution(obs, action_masks=masks).distribution.probs
            same += int((probs.argmax(dim=1).cpu().numpy() == demos.actions[part]).sum())
    return same / max(1, len(idx))
