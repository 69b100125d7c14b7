"""The benchmark scripts' own logic, where they do more than call the suite:
``benchmarks/scripted_reference.py`` prints the report's detection,
navigation and probe tables, found by their section titles;
``example_report.py`` and ``view_screenshots.py`` cover every task, and the
screenshots open the viewer's own routes."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from spatialstale_evals.analysis.layout import titles

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
TITLES = titles()


@functools.cache
def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass of the script looks its module up there
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


def test_the_example_report_and_the_screenshots_run_every_task() -> None:
    """``example_report.py`` and ``view_screenshots.py`` loop over the families'
    examples (``TaskFamily.example``); a task of ``eval.yaml`` without one would be
    missing from the example and the tasks page."""
    import yaml

    meta = yaml.safe_load((BENCHMARKS.parent / "spatialstale_evals" / "eval.yaml").read_text(encoding="utf-8"))
    tasks = {task["name"] for task in meta["tasks"]}
    assert set(load("view_screenshots").shots()) == tasks
    assert set(load("example_report").example_families()) == tasks


def test_the_screenshot_routes_are_the_viewers() -> None:
    """The viewer's hash routes (Inspect's ``logSamplesUrl``): the log file relative to the
    served folder, each path part URL-encoded, then ``samples/`` or
    ``samples/sample/<id>/<epoch>/<tab>`` of the first sample by (id, epoch)."""
    from inspect_ai.log import EvalLog, EvalSample

    log = EvalLog.model_construct(
        location="/logs/run/a b.eval",
        samples=[
            EvalSample.model_construct(id="L2-001", epoch=1),
            EvalSample.model_construct(id="L2-000", epoch=2),
            EvalSample.model_construct(id="L2-000", epoch=1),
        ],
    )
    marker, routes = load("view_screenshots").routes(log, Path("/logs"))
    assert marker == "L2-000"
    assert routes == {
        "samples": "#/logs/run/a%20b.eval/samples/",
        "transcript": "#/logs/run/a%20b.eval/samples/sample/L2-000/1/transcript",
    }
