"""The mark that says this machine wrote a file that unpickles (issue #30).

SB3's ``model.zip`` (and an RLlib checkpoint folder) is read by unpickling, which runs whatever
code the file holds. Training reads one back in two places -- ``--resume`` (the run's own
checkpoint under the config's ``runs_dir``) and ``--finetune`` -- and a shared config can point
``runs_dir`` anywhere, so "this run's own checkpoint" proves nothing by its path. What proves it
is a mark written beside the file when it is saved: ``model.zip.mark``, a JSON object with the
file's SHA-256 and an HMAC-SHA-256 of that hash under a key that only this user's machine has
(:func:`key_path`: 32 random bytes made on the first save, readable by the user alone). A plain
hash would stop a file damaged or swapped after saving, but anyone shipping a hostile
``model.zip`` could ship its hash as well; the keyed mark cannot be made without the key. A file
whose mark is missing, from another machine, or not its own is refused (the reader's
``--trust-model-zip`` overrides, for a file the user made elsewhere or trusts like code).

The readers hash the bytes they then load (``io.BytesIO``), so the file cannot be swapped
between the check and the unpickling. A folder (RLlib's checkpoint) is hashed as the sorted list
of its files' paths and hashes. Nothing here reads a pickle.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import warnings
from pathlib import Path

from dragonstones_env.bounds import InputError, read_limited

from .base import PolicyError

MARK_SUFFIX = ".mark"  # model.zip -> model.zip.mark
KEY_ENV = "DRAGONSTONES_MARK_KEY"  # a key file's path, instead of the default (the tests set one)
_KEY_BYTES = 32
_DOMAIN = b"dragonstones_env mark v1\0"  # what the HMAC is of: this prefix and the file's SHA-256


def key_path() -> Path:
    """Where this user's mark key is: ``$DRAGONSTONES_MARK_KEY``, else
    ``$XDG_CONFIG_HOME/dragonstones_env/mark.key`` (``~/.config/...`` by default)."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV])
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "dragonstones_env" / "mark.key"


def _key(create: bool) -> bytes | None:
    """The key's bytes; made (readable by this user only) when ``create`` and there is none yet."""
    path = key_path()
    if create and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first: use that one
            pass
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(_KEY_BYTES))
    if key_problem(path) is not None:
        return None
    try:
        key = path.read_bytes()[: _KEY_BYTES + 1]
    except OSError:
        return None
    return key if len(key) == _KEY_BYTES else None


def key_problem(path: Path) -> str | None:
    """Why the key file cannot be trusted, checked each time it is used (not only when made): a
    key others can read or write lets them forge marks. None when it is this user's alone, or absent."""
    try:
        info = path.stat()
    except OSError:
        return None  # no key: the callers say so
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"the mark key {path} belongs to another user (uid {info.st_uid})"
    if info.st_mode & 0o077:
        return (f"the mark key {path} can be read or written by others (mode {info.st_mode & 0o777:o}): "
                f"chmod 600 {path}, or delete it to make a new one (marks made with it are then refused)")
    return None


def _hmac(key: bytes, sha256: str) -> str:
    return hmac.new(key, _DOMAIN + bytes.fromhex(sha256), hashlib.sha256).hexdigest()


def digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, or of a folder's sorted ``relative path, file hash`` lines
    (symbolic links refused: a folder's mark covers what is in it)."""
    if path.is_symlink():
        raise PolicyError(f"{path}: a symbolic link; a marked file is a plain file or folder")
    if path.is_file():
        h = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    lines = []
    for item in sorted(path.rglob("*")):
        if item.is_symlink() or not (item.is_file() or item.is_dir()):
            raise PolicyError(f"{item}: not a plain file or folder; a marked folder holds only those")
        if item.is_file():
            lines.append(f"{item.relative_to(path).as_posix()}\0{digest(item)}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def mark_path(path: Path) -> Path:
    return path.with_name(path.name + MARK_SUFFIX)


def write_mark(path: str | Path, sha256: str | None = None) -> Path:
    """Write ``<path>.mark`` for the file or folder ``path`` (``sha256``: its :func:`digest`, if
    known already). Without a usable key the mark has no HMAC, and readers refuse it."""
    path = Path(path)
    sha256 = sha256 or digest(path)
    key = _key(create=True)
    if key is None and key_problem(key_path()):  # readers will refuse this mark: say why now
        warnings.warn(f"{key_problem(key_path())}; {path}'s mark is written without it", stacklevel=2)
    mark = {"file": path.name, "sha256": sha256, "hmac_sha256": None if key is None else _hmac(key, sha256)}
    out = mark_path(path)
    out.write_text(json.dumps(mark, indent=2) + "\n")
    return out


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_mark(path: Path) -> dict | str:
    """The mark of ``path`` as a dict, or why there is no usable one."""
    mark_file = mark_path(path)
    if not mark_file.is_file():
        return f"{path} has no {mark_file.name}: it was not written by training on this machine (or before marks)"
    try:
        mark = json.loads(read_limited(mark_file, "run_state", "mark"))
    except (OSError, InputError, ValueError) as err:
        return f"{mark_file} is not a readable mark ({err})"
    if not isinstance(mark, dict) or not all(isinstance(mark.get(k), str) for k in ("sha256", "hmac_sha256")):
        return f"{mark_file} is not a mark of this project (or was written without a key)"
    return mark


def precheck_mark(path: str | Path) -> str | None:
    """What :func:`check_mark` can say without reading ``path`` itself: no mark, an unreadable one,
    no usable key (a file of gigabytes is then refused unread); None when only the hash is left."""
    path = Path(path)
    mark = _read_mark(path)
    if isinstance(mark, str):
        return mark
    problem = key_problem(key_path())
    if problem is not None:
        return f"{problem}; {path}'s mark cannot be checked with it"
    if _key(create=False) is None:
        return f"this machine has no mark key ({key_path()}): {path} was marked elsewhere"
    return None


def check_mark(path: str | Path, sha256: str | None = None) -> str | None:
    """None when ``path`` (a file or folder, of :func:`digest` ``sha256`` if given: the hash of the
    bytes about to be loaded) carries this machine's mark; else why not, in words."""
    path = Path(path)
    problem = precheck_mark(path)
    if problem is not None:
        return problem
    mark, key, mark_file = _read_mark(path), _key(create=False), mark_path(path)
    if not isinstance(mark, dict) or key is None:  # changed since the precheck: refuse, never unpickle
        return f"{mark_file} or the mark key changed while it was checked"
    sha256 = sha256 or digest(path)
    if not hmac.compare_digest(mark["sha256"], sha256):
        return f"{path} changed since it was marked (its SHA-256 is not the one in {mark_file.name})"
    if not hmac.compare_digest(mark["hmac_sha256"], _hmac(key, sha256)):
        return f"{mark_file} was not made with this machine's key ({key_path()}): marked elsewhere, or forged"
    return None
