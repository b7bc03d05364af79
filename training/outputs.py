"""Where a command may write its result (issue #49): never into an existing folder without the
command's overwrite flag, never into the shipped checkpoints' folder.

``--set out_dir=policies --set run_name=champion`` replaced the shipped champion, and the
exploiter's ``--out`` and ``training.meta --write-mixture`` could do the same: what is shipped
changes only through ``python -m training.promote`` (which checks what it copies).
"""

from __future__ import annotations

import os
from pathlib import Path

from dragonstones_env.policies.registry import shipped_dir


class OutputError(ValueError):
    """An output folder a command must not write to; the message names it and the way out."""


def check_output(folder: str | Path, what: str, overwrite: bool, flag: str = "--overwrite") -> Path:
    """``folder`` (the output named ``what``, e.g. ``--out``), refused when it is inside the shipped
    checkpoints' folder, or when it exists and is not empty (or is a file) unless ``overwrite``
    (the command's ``flag``)."""
    folder = Path(folder)
    shipped = Path(os.path.realpath(shipped_dir()))
    target = Path(os.path.realpath(folder))
    if target == shipped or shipped in target.parents:
        raise OutputError(f"{what} {folder} is inside the shipped checkpoints' folder ({shipped}): write to "
                          "runs/ and ship a result with python -m training.promote")
    if folder.exists() and not overwrite and (not folder.is_dir() or any(folder.iterdir())):
        raise OutputError(f"{what} {folder} exists and is not empty: pass {flag} to replace what is there, or "
                          "choose another folder")
    return folder
