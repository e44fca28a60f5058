"""The package's floors (docs/architecture.md): every module imports only from its own floor or
below, analyses never reach the engine, no two modules import each other (directly or round a
circle), no module is over 300 lines, and the package root holds at most 15 modules."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers import paths

PACKAGE = paths.ROOT / "helpers"
# ground floor first; a module may import from its own floor and the floors below
FLOORS = [
    {"paths", "files", "parquet_io", "progress", "provenance", "selection_parser"},
    {"data"},
    {"models"},
    {"engine"},
    {"methods"},
    {"store"},
    {"runner"},
    {"analysis"},
    {"runs"},
    {"zoo", "plots", "explain", "reporting", "explore"},
    {"sweep"},
    {"cli", "demo", "__main__", "__init__"},
]
NEVER = {"analysis": {"engine", "runner", "runs"}}  # analyses read the store, never the engine


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(paths.ROOT).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports (``from . import x`` of a module counts as x)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def floor_of(name: str) -> tuple[int, str]:
    part = name.split(".")[1] if "." in name else "__init__"
    for level, members in enumerate(FLOORS):
        if part in members:
            return level, part
    raise AssertionError(f"{name} is on no floor: add its package to FLOORS and docs/architecture.md")


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def test_every_import_goes_to_the_same_floor_or_below():
    wrong = []
    for name, targets in graph().items():
        level, part = floor_of(name)
        for target in targets:
            t_level, t_part = floor_of(target)
            if t_level > level or t_part in NEVER.get(part, ()):
                wrong.append(f"{name} -> {target}")
    assert not wrong, "imports of a higher floor (or a forbidden one):\n" + "\n".join(sorted(wrong))


def test_no_import_circle():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                return path + [node, target]
            if target not in state and (circle := visit(target, path + [node])):
                return circle
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (circle := visit(node, [])):
            pytest.fail("import circle: " + " -> ".join(circle[circle.index(circle[-1]):]))


def test_modules_are_short_and_the_root_is_small():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 300}
    assert not long, f"modules over 300 lines: {long}"
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= 15, f"{len(root)} modules at the package root: {root}"


def test_the_check_sees_a_wrong_import(tmp_path):
    # the import reader resolves relative imports (so the floor check is not vacuous)
    probe = tmp_path / "probe.py"
    probe.write_text("from ..runner import run_methods\nfrom . import accuracy\nfrom .. import methods\n")
    known = {"helpers.runner", "helpers.analysis.accuracy", "helpers.methods", "helpers.analysis.probe"}
    assert imports("helpers.analysis.probe", probe, known) == {"helpers.runner", "helpers.analysis.accuracy",
                                                                 "helpers.methods"}
