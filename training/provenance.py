"""Where a checkpoint came from, for its card: the commit and the machine (versions read from the
installed distributions' metadata, so that nothing heavy is imported to name them)."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any


def git_commit() -> str | None:
    """The checkout's commit, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine(*packages: str) -> dict[str, Any]:
    """The platform, CPU count, Python, and the version of each of ``packages`` (None if not installed)."""
    out: dict[str, Any] = {"platform": platform.platform(), "cpus": os.cpu_count(),
                           "python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
