"""The drawing of the package layout in docs/architecture.md is the real import graph.

Each node of the ```mermaid block lists top-level modules and packages (``games/``, ``cli.py``);
every module of ``dragonstones_env`` and ``training`` belongs to the node of its top-level name.
An arrow is drawn exactly when some module of one node imports a module of another (imports under
``if TYPE_CHECKING:`` are annotations, not dependencies, as for import-linter).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("dragonstones_env", "training")
NODE = re.compile(r'^\s*(\w+)\["([^"]*)"\]\s*$')
ARROW = re.compile(r"^\s*(\w+)\s*-->\s*(.+?)\s*$")
MEMBER = re.compile(r"([\w]+)(?:/|\.py\b)")


def drawing(text: str) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """(top-level name -> node, arrows between nodes) of the page's one mermaid block."""
    blocks = re.findall(r"^```mermaid\n(.*?)^```", text, flags=re.M | re.S)
    assert len(blocks) == 1, f"docs/architecture.md should hold one mermaid drawing, has {len(blocks)}"
    node_of, arrows = {}, set()
    for line in blocks[0].splitlines():
        if match := NODE.match(line):
            for member in MEMBER.findall(match[2]):
                assert member not in node_of, f"{member} is drawn in two nodes"
                node_of[member] = match[1]
        elif match := ARROW.match(line):
            arrows |= {(match[1], target.strip()) for target in match[2].split("&")}
    return node_of, arrows


def top_level(module: str) -> str:
    """``dragonstones_env.games.dragonstones.env`` -> ``games``; the package's own __init__ -> ``__init__``."""
    parts = module.split(".")
    if parts[0] == "training":
        return "training"
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(path: Path, node: ast.ImportFrom) -> list[str]:
    """The modules an ``from X import a, b`` reads: ``X.a`` where that is a module, else ``X``."""
    if node.level:
        package = _module_name(path).split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    found = []
    for alias in node.names:
        candidate = ROOT.joinpath(*f"{base}.{alias.name}".split("."))
        found.append(f"{base}.{alias.name}" if candidate.is_dir() or candidate.with_suffix(".py").is_file()
                     else base)
    return found


def imports(path: Path) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                found.update(_resolve(path, child))
            visit(child)

    visit(ast.parse(path.read_text(), filename=str(path)))
    return {name for name in found if name.split(".")[0] in PACKAGES}


def real_graph() -> tuple[set[str], set[tuple[str, str]]]:
    """(every top-level name, every import between two different top-level names)."""
    names, arrows = set(), set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            source = top_level(_module_name(path))
            names.add(source)
            arrows |= {(source, top_level(m)) for m in imports(path) if top_level(m) != source}
    return names, arrows


def differences(text: str) -> tuple[set, set]:
    """(imports between nodes the drawing misses, arrows drawn with no import behind them)."""
    node_of, drawn = drawing(text)
    _, arrows = real_graph()
    real = {(node_of[a], node_of[b]) for a, b in arrows if a in node_of and b in node_of and node_of[a] != node_of[b]}
    return real - drawn, drawn - real


def test_every_top_level_module_is_in_one_node_of_the_drawing():
    node_of, _ = drawing(DOC.read_text())
    names, _ = real_graph()
    assert not names - set(node_of), f"not drawn in docs/architecture.md: {sorted(names - set(node_of))}"
    assert not set(node_of) - names, f"drawn but not in the package: {sorted(set(node_of) - names)}"


def test_the_drawn_arrows_are_the_imports_between_nodes():
    missing, invented = differences(DOC.read_text())
    assert not missing, f"imports the drawing misses: {sorted(missing)}"
    assert not invented, f"arrows drawn with no import behind them: {sorted(invented)}"


def test_the_check_sees_a_missing_or_an_invented_arrow():
    text = DOC.read_text()
    assert differences(text.replace("    registry --> core\n", "")) == ({("registry", "core")}, set())
    assert differences(text.replace("    registry --> core\n", "    registry --> core & games\n")) == (
        set(), {("registry", "games")})
