"""The benchmark scripts' own logic, where they do more than call the suite:
``benchmarks/scripted_reference.py`` prints the report's detection,
navigation and probe tables, found by their section titles."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from spatialstale_evals.analysis.layout import TITLES

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@functools.cache
def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def report_text(names: list[str]) -> str:
    """A report as ``spatialstale report`` lays it out: family headings, then
    each table's section (its title, table, note)."""
    parts = ["# SpatialSTALE report\n\nLogs: `x`."]
    for k, name in enumerate(names):
        if k % 3 == 0:
            parts.append(f"## Family {k}")
        parts.append(f"### {TITLES[name]}\n\n| {name} |\n|---|\n| 1 |\n\nNote on {name}.")
    parts.append("## Plots\n\n![plot](plot.png)")
    return "\n\n".join(parts) + "\n"


def test_scripted_reference_prints_the_named_sections_in_order() -> None:
    script = load("scripted_reference")
    printed = script.sections(report_text(list(TITLES)), ("navigation", "detection", "probe"))
    expected = "\n\n".join(
        f"### {TITLES[name]}\n\n| {name} |\n|---|\n| 1 |\n\nNote on {name}."
        for name in ("navigation", "detection", "probe")
    )
    assert printed == expected


def test_scripted_reference_names_a_missing_section() -> None:
    script = load("scripted_reference")
    with pytest.raises(SystemExit, match="probe"):
        script.sections(report_text([name for name in TITLES if name != "probe"]), ("detection", "probe"))
