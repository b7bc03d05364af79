"""``--policy-factory NAME=package.module:function``: a user's own code making a policy for an evaluation.

This RUNS THAT CODE: the module is imported and the function called, as ``python -c`` would. It is
reachable only from the evaluation's command line and the ``factories`` argument of :func:`.evaluate`
and :func:`.panel`, never from a policy spec: ``load_policy``, the app, records, cards and configs take a
``module:function`` text for a (missing) path and refuse it without importing anything.

A worker process resolves the factory itself from its text (a function object is not sent between
processes), so the module must be importable there: from ``sys.path`` or the current directory,
which is put on ``sys.path`` as ``python -m`` does (the ``dragonstones`` script would not have it).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from dragonstones_env.policies import Policy, PolicyError, as_policy, available

from .facts import EvaluationError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_TARGET = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
FORM = "NAME=package.module:function"


def parse_factories(items: Iterable[str]) -> dict[str, str]:
    """``NAME=package.module:function`` texts as ``{NAME: "package.module:function"}``, checked (nothing
    imported): a NAME of letters, digits, ``_ . -``, not a built-in or shipped policy name, given once."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, target = str(item).partition("=")
        name, target = name.strip(), target.strip()
        if not sep or not _NAME.fullmatch(name) or not _TARGET.fullmatch(target):
            raise EvaluationError(f"--policy-factory {str(item)[:200]!r}: expected {FORM} (NAME: letters, digits, "
                                  "_ . -; the function's module importable from here)")
        if name in available():
            raise EvaluationError(f"--policy-factory {name}: {name!r} is a built-in or shipped policy's name; "
                                  "give the factory another")
        if name in out:
            raise EvaluationError(f"--policy-factory {name}: given twice")
        out[name] = target
    return out


def check_factories(factories: Mapping[str, str] | None) -> dict[str, str]:
    """``factories`` (NAME -> ``module:function``) as :func:`parse_factories` checks them."""
    return parse_factories(f"{name}={target}" for name, target in (factories or {}).items())


def make_policy(name: str, target: str, seed: int | None) -> Policy:
    """Import ``target``'s module, call its function (with ``seed=`` if it takes one, else with no
    arguments) and return its policy; any failure an :class:`EvaluationError` naming the factory."""
    module_name, _, attribute = target.partition(":")
    where = f"--policy-factory {name}={target}"
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:  # as `python -m` would: the user's module beside them
        sys.path.insert(0, cwd)
    try:
        function: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            function = getattr(function, part)
    except Exception as err:  # the user's module may fail in any way on import: report it, before any game
        raise EvaluationError(f"{where}: cannot import it ({type(err).__name__}: {err})") from None
    if not callable(function):
        raise EvaluationError(f"{where}: {attribute} is a {type(function).__name__}, not a function")
    try:
        takes_seed = "seed" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        takes_seed = False
    try:
        made = function(seed=seed) if takes_seed else function()
    except Exception as err:
        raise EvaluationError(f"{where}: calling it failed ({type(err).__name__}: {err})") from None
    try:
        return as_policy(made)
    except PolicyError as err:
        raise EvaluationError(f"{where}: it returned no policy ({err})") from None
