"""No module outside the game registry restates a game fact.

What a game is (its table sizes and default size, its env names and versions) lives on its
``GameSpec`` (``dragonstones_env/registry.py`` and ``dragonstones_env/games/``); everything else
looks it up. This scans the code (not docstrings or comments) of the package, the trainers, the
tools and the examples for the ways a copy creeps back in: a players constant of its own, a
branch on a game's name, a versioned env name written out, a table keyed by game id.
"""

from __future__ import annotations

import ast
from pathlib import Path

from dragonstones_env import games

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("dragonstones_env", "training", "tools", "examples")
REGISTRY = ("dragonstones_env/games/", "dragonstones_env/registry.py")
PLAYER_CONSTANTS = {"DEFAULT_PLAYERS", "MIN_PLAYERS", "MAX_PLAYERS", "default_players"}
# Each exception says why the literal is not a copy of a game fact.
ALLOWED = {
    ("dragonstones_env/policies/checkpoint.py", "'dragonstones_v0'"):
        "a card written before there was a second game has no env: it is Fist's v0, a fact of old files",
    ("tools/golden_streams.py", "dict keyed by game id"):
        "which tables the recorded golden streams cover: data of the recording, not of the games",
}


def game_names() -> set[str]:
    names = set()
    for spec in games.all():
        names |= {spec.id, spec.name, spec.gym_id, *(v.name for v in spec.older)}
    return names


def versioned_names() -> set[str]:
    """Env names with a version (``dragonstones_v1``): current, older and unregistered (Fist's v0)."""
    return {f"{spec.id}_v{n}" for spec in games.all() for n in range(10)}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _strings(node: ast.AST) -> list[str]:
    """The string constants of a literal, or of a tuple/list/set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for element in node.elts for s in _strings(element)]
    return []


def findings(path: Path, text: str) -> list[tuple[str, str]]:
    """(what, where) for each restated game fact in one module's code."""
    tree = ast.parse(text, filename=str(path))
    names, versioned, docstrings = game_names(), versioned_names(), _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            # a bare annotation (``MIN_PLAYERS: ClassVar[int]`` on the env base class) states nothing
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if node.value else []
            for target in targets:
                if isinstance(target, ast.Name) and target.id in PLAYER_CONSTANTS:
                    found.append((f"{target.id} assigned", where))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(s in names for side in sides for s in _strings(side)):
                found.append(("a game's name compared", where))
        elif isinstance(node, ast.Dict):
            if any(s in names for key in node.keys if key is not None for s in _strings(key)):
                found.append(("dict keyed by game id", where))
        elif isinstance(node, ast.Constant) and node.value in versioned and id(node) not in docstrings:
            found.append((repr(node.value), where))
    return found


def scanned_files() -> list[Path]:
    files = [p for folder in SCANNED for p in sorted((ROOT / folder).rglob("*.py"))]
    return [p for p in files if not str(p.relative_to(ROOT)).startswith(REGISTRY)]


def test_no_module_outside_the_registry_restates_a_game_fact():
    problems, allowed_seen = [], set()
    for path in scanned_files():
        relative = str(path.relative_to(ROOT))
        for what, where in findings(Path(relative), path.read_text()):
            if (relative, what) in ALLOWED:
                allowed_seen.add((relative, what))
            else:
                problems.append(f"{where}: {what}")
    assert not problems, "game facts restated outside dragonstones_env/games and registry.py:\n" + "\n".join(problems)
    assert allowed_seen == set(ALLOWED), f"exceptions that no longer occur: {set(ALLOWED) - allowed_seen}"


def test_the_scan_sees_each_kind_of_restated_fact():
    code = '''
"""Docstrings may say dragonstones_v1."""
DEFAULT_PLAYERS = 3
def f(game, spec):
    if game == "drachenschatten":
        return {"dragonstones": 4}
    return spec.name in ("dragonstones_v1", "other"), "drachenschatten_v1"
'''
    kinds = [what for what, _ in findings(Path("x.py"), code)]
    assert sorted(kinds) == sorted(["DEFAULT_PLAYERS assigned", "a game's name compared", "dict keyed by game id",
                                    "a game's name compared", "'drachenschatten_v1'", "'dragonstones_v1'"]), kinds
