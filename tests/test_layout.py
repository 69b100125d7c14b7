"""The package's import graph, read with ``ast`` from the source (no import
runs): no cycle; each task family's package imports only the shared layers
(``world/``, ``harness/``, the ``paper`` and ``metadata`` leaves) and itself;
``harness/`` imports no family; ``analysis/`` imports no task module; ``world/``
imports nothing of Inspect (and importing it loads none)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _warm import WarmPython

import spatialstale_evals

ROOT = Path(spatialstale_evals.__file__).parent
PKG = "spatialstale_evals"
#: Modules every layer may read: plain data, no imports of the suite.
LEAVES = {f"{PKG}.paper", f"{PKG}.metadata"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imports_of(module: str) -> set[str]:
    """The suite's modules ``module`` imports (a ``from pkg import name`` of a
    submodule counts as that submodule), and ``inspect_ai`` if it imports Inspect."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        for name in names:
            if name.split(".")[0] == "inspect_ai":
                found.add("inspect_ai")
            elif name in MODULES:
                found.add(name)
            elif name.startswith(PKG + "."):
                found.add(name.rsplit(".", 1)[0])
    found.discard(module)
    return found


GRAPH = {m: imports_of(m) for m in MODULES}


def family_packages() -> dict[str, str]:
    return {task: f"{PKG}.{package}" for task, package in spatialstale_evals.FAMILY_PACKAGES.items()}


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_graph_is_read() -> None:
    """The reader finds the imports the code has (so an empty graph cannot pass the rules below)."""
    assert f"{PKG}.harness.observe" in GRAPH[f"{PKG}.detection.windows"]
    assert f"{PKG}.navigation.strategies" in GRAPH[f"{PKG}.navigation.loop"]
    assert "inspect_ai" in GRAPH[f"{PKG}.harness.samples"]
    assert len(GRAPH) > 80


def test_no_import_cycle() -> None:
    seen: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(GRAPH.get(node, ())):
            if nxt not in GRAPH:
                continue
            if seen.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in seen:
                visit(nxt, [*path, nxt])
        seen[node] = 2

    for module in GRAPH:
        if module not in seen:
            visit(module, [module])
    # a package's __init__ importing its own submodules is not a cycle of design
    cycles = [c for c in cycles if not any(MODULES[m].name == "__init__.py" for m in c)]
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("task", list(spatialstale_evals.FAMILY_PACKAGES))
def test_a_family_package_imports_only_the_shared_layers_and_itself(task: str) -> None:
    package = family_packages()[task]
    allowed = (f"{PKG}.world", f"{PKG}.harness", package)
    members = [m for m in GRAPH if in_package(m, package)]
    assert members, f"no modules in {package}"
    wrong = {
        m: sorted(
            i for i in GRAPH[m] if i != "inspect_ai" and i not in LEAVES and not any(in_package(i, a) for a in allowed)
        )
        for m in members
    }
    assert not {m: w for m, w in wrong.items() if w}, f"{package} reaches outside the shared layers"


def test_harness_imports_no_family_and_no_periphery() -> None:
    outside = [*family_packages().values(), f"{PKG}.runs", f"{PKG}.analysis", f"{PKG}.scripted", f"{PKG}.local_model"]
    tasks = {f"{PKG}.{t}" for t in spatialstale_evals.TASKS}
    wrong = {
        m: sorted(i for i in GRAPH[m] if i in tasks or any(in_package(i, o) for o in outside))
        for m in GRAPH
        if in_package(m, f"{PKG}.harness")
    }
    assert not {m: w for m, w in wrong.items() if w}


def test_analysis_imports_no_task_module() -> None:
    tasks = {f"{PKG}.{t}" for t in spatialstale_evals.TASKS}
    wrong = {m: sorted(GRAPH[m] & tasks) for m in GRAPH if in_package(m, f"{PKG}.analysis")}
    assert not {m: w for m, w in wrong.items() if w}


def test_runs_imports_no_family_module() -> None:
    """The run matrix and its cost model read the families' registry entries only
    (``TaskFamily.matrix``, ``axes``, ``estimate``, ``cost_agents``, ``settings``):
    no module of ``runs/`` imports a family's package or task module, not even
    for the matrix's axes (``--strategies`` reads navigate's entry)."""
    families = [*family_packages().values(), *(f"{PKG}.{t}" for t in spatialstale_evals.TASKS)]
    members = [m for m in GRAPH if in_package(m, f"{PKG}.runs")]
    assert {f"{PKG}.runs.cost", f"{PKG}.runs.matrix", f"{PKG}.runs.cli"} <= set(members)
    assert f"{PKG}.harness.family" in GRAPH[f"{PKG}.runs.cost"] & GRAPH[f"{PKG}.runs.axes"]
    wrong = {
        m: sorted(i for i in GRAPH[m] if any(in_package(i, f) for f in families))
        for m in members
    }
    assert not {m: w for m, w in wrong.items() if w}


def test_world_imports_nothing_of_inspect_or_the_layers_above() -> None:
    wrong = {
        m: sorted(i for i in GRAPH[m] if i == "inspect_ai" or not (in_package(i, f"{PKG}.world") or i in LEAVES))
        for m in GRAPH
        if in_package(m, f"{PKG}.world")
    }
    assert not {m: w for m, w in wrong.items() if w}
    code = "import sys, spatialstale_evals.world as w; print(any(m.startswith('inspect_ai') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


#: Run in a fresh interpreter: build one task, print the suite's modules then loaded.
BUILD_ONE = r"""
import importlib, json, sys
name, args = sys.argv[1], json.loads(sys.argv[2])
getattr(importlib.import_module(f"spatialstale_evals.{name}"), name)(**args)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("spatialstale_evals."))))
"""


def fresh(warm_python: WarmPython) -> WarmPython:
    """The session's warm interpreter, which forks a fresh one per command: it
    loaded Inspect and the libraries but nothing of the package and no
    matplotlib (so what a child has loaded, the child loaded)."""
    warm_python.start()
    assert not [m for m in warm_python.preloaded if m.split(".")[0] in (PKG, "matplotlib")]
    return warm_python


@pytest.mark.parametrize("task", list(spatialstale_evals.FAMILY_PACKAGES))
def test_building_a_task_loads_no_module_of_another_family(task: str, warm_python: WarmPython) -> None:
    """What the import graph cannot see (a registry lookup, an ``importlib`` call):
    building the task in a fresh interpreter (forked from the warm one, which
    loaded none of the package) loads its own family's modules and the shared
    layers only."""
    import json

    args = {"path": str(Path(__file__).parent / "fixtures" / "stale_mini.json")} if task == "stale" else {}
    out = fresh(warm_python).run([sys.executable, "-c", BUILD_ONE, task, json.dumps(args)], check=True).stdout
    loaded = json.loads(out.strip().splitlines()[-1])
    others = {t: p for t, p in family_packages().items() if t != task}
    wrong = sorted(
        m for m in loaded if any(m == f"{PKG}.{t}" or in_package(m, p) for t, p in others.items())
    )
    assert f"{PKG}.{task}" in loaded and any(in_package(m, family_packages()[task]) for m in loaded)
    assert not wrong, f"building {task} loaded {wrong}"


def test_reading_the_registry_loads_no_plotting_library(warm_python: WarmPython) -> None:
    """A family's plots are drawn by a module its entry imports only when a report
    is drawn (``TaskFamily.plots``): reading the registry, as the scripted provider
    and the run matrix do in every interpreter, loads no matplotlib (in a fresh
    interpreter forked from the warm one, which loaded none of either)."""
    code = (
        "import sys; from spatialstale_evals.harness.family import families; families(); "
        "print(sorted(m for m in sys.modules if m == 'matplotlib' or m.endswith('.plots') or m.endswith('_plots')))"
    )
    out = fresh(warm_python).run([sys.executable, "-c", code], check=True).stdout
    assert out.strip() == "[]"
