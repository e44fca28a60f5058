"""The package's floors, as ``helpers/__init__.py`` names them (and docs/architecture.md draws
them): every module imports only from its own floor or below, analyses never reach the engine
(directly or through any other module, importing a module running its packages' ``__init__``),
no two modules import each other (directly or round a circle), no module is over 300 lines, and
the package root holds at most 15 modules."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import helpers
from helpers import paths

PACKAGE = paths.ROOT / "helpers"
FLOORS = [set(members) for _, members in helpers.FLOORS]  # ground floor first
NEVER = {floor: set(parts) for floor, parts in helpers.NEVER.items()}


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


def loaded_with(name: str, known: set[str]) -> set[str]:
    """The packages whose ``__init__`` runs when ``name`` is imported."""
    parts = name.split(".")
    return {p for i in range(2, len(parts)) if (p := ".".join(parts[:i])) in known}


def reach(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module that importing ``start`` runs (its imports, theirs, and their packages)."""
    known, seen, todo = set(edges), set(), [start]
    while todo:
        for target in edges[todo.pop()]:
            for module in {target} | loaded_with(target, known):
                if module not in seen:
                    seen.add(module)
                    todo.append(module)
    return seen


def test_every_import_goes_to_the_same_floor_or_below():
    wrong = []
    for name, targets in graph().items():
        level, part = floor_of(name)
        for target in targets:
            t_level, t_part = floor_of(target)
            if t_level > level or t_part in NEVER.get(part, ()):
                wrong.append(f"{name} -> {target}")
    assert not wrong, "imports of a higher floor (or a forbidden one):\n" + "\n".join(sorted(wrong))


def test_analyses_never_reach_the_engine_even_through_other_modules():
    edges = graph()
    wrong = []
    for name in sorted(edges):
        part = floor_of(name)[1]
        for target in sorted(reach(edges, name)):
            forbidden = floor_of(target)[1] in NEVER.get(part, ())
            if forbidden and target not in (helpers.ENGINE_CONTRACT, "helpers.engine"):
                wrong.append(f"{name} reaches {target}")
    assert not wrong, "modules reaching what their floor never may:\n" + "\n".join(wrong)


def test_the_transitive_rule_sees_a_module_reached_through_another():
    edges = {"helpers.analysis.a": {"helpers.methods.b"}, "helpers.methods.b": {"helpers.engine.interface"},
             "helpers.methods": set(), "helpers.engine.interface": set(), "helpers.engine": {"helpers.engine.causal"},
             "helpers.engine.causal": set()}
    # the engine package's __init__ runs with its interface: an eager one would load the scorers
    assert reach(edges, "helpers.analysis.a") == {"helpers.methods.b", "helpers.methods", "helpers.engine.interface",
                                                  "helpers.engine", "helpers.engine.causal"}


def test_the_engine_package_loads_no_scorer_with_its_interface():
    import subprocess
    import sys

    code = ("import sys, helpers.methods, helpers.analysis.separability; "
            "print(sorted(m for m in sys.modules if m.startswith('helpers.engine')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=paths.ROOT)
    assert out.stdout.strip() == "['helpers.engine', 'helpers.engine.interface']"


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


# What outside the engine may read of a scorer beyond the contract (helpers.engine.interface.Scorer):
# nothing. Attributes read on a name that holds a scorer (scorer, current, other, icl, self.scorer,
# pass_context.scorer) are checked; a scorer's ``loaded`` model is the engine's own.
SCORER_NAMES = {"scorer", "current", "other"}


def contract_members() -> set[str]:
    from helpers.engine.interface import Scorer

    return set(getattr(Scorer, "__annotations__", {})) | {n for n in vars(Scorer) if not n.startswith("_")}


def reads_on_scorers(source: str) -> list[tuple[int, str, bool]]:
    """(line, attribute, whether it is read on a scorer) of every attribute read in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            value = node.value
            on_scorer = (isinstance(value, ast.Name) and value.id in SCORER_NAMES) or \
                (isinstance(value, ast.Attribute) and value.attr == "scorer")
            out.append((node.lineno, node.attr, on_scorer))
    return out


def scorer_reads(source: str) -> list[tuple[int, str]]:
    """(line, attribute) of every attribute read on a scorer in ``source`` that the contract lacks,
    and every read of an attribute named ``loaded``."""
    members = contract_members()
    return sorted((line, attr) for line, attr, on_scorer in reads_on_scorers(source)
                  if attr == "loaded" or (on_scorer and attr not in members))


def outside_the_engine() -> list[Path]:
    places = [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] != "engine"]
    return places + sorted((paths.ROOT / "notebooks").glob("*.py"))


def test_nothing_outside_the_engine_reads_a_scorer_beyond_its_contract():
    found = [(str(path.relative_to(paths.ROOT)), line, attr) for path in outside_the_engine()
             for line, attr in scorer_reads(path.read_text(encoding="utf-8"))]
    # a DataFrame named `other` (a cross-model frame) and a list named `current` are not scorers
    allowed = {("helpers/analysis/precision.py", "shape"), ("helpers/zoo/training_streams.py", "append")}
    wrong = [f"{path}:{line} .{attr}" for path, line, attr in found if (path, attr) not in allowed]
    assert not wrong, "reads of a scorer outside its contract (add the member to the contract, or use one):\n" + \
        "\n".join(wrong)


def test_every_contract_member_has_a_reader_outside_the_engine_and_the_tests():
    read = {attr for path in outside_the_engine()
            for _, attr, on_scorer in reads_on_scorers(path.read_text(encoding="utf-8")) if on_scorer}
    unread = sorted(contract_members() - read)
    assert not unread, f"contract members no method, run or notebook reads on a scorer: {unread}"


def test_the_contract_scan_sees_a_hatch():
    assert scorer_reads("scorer.loaded.model\nruntime.scorer.executor\nx = self.scorer.name\nscorer.tokenizer") == \
        [(1, "loaded"), (2, "executor")]
    assert {"tokenizer", "name", "provenance", "score", "score_continuations", "features"} <= contract_members()
