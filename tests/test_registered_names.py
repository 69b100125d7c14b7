"""Every name the package registers with Inspect is registered once, and a
log's metrics can be recomputed from the registry.

Inspect keeps one object per (type, name) and a second registration under a
name replaces the first without a word. ``inspect score``, ``edit_score`` and
log recovery then call ``inspect_ai.log.recompute_metrics``, which looks each
metric up by the name the log records: with a name taken twice it computes the
other family's metric (``success_rate = nan`` on a navigate log).

The registrations are recorded in a fresh interpreter (nothing of the package
imported before the recorder is in place: a fork of the session's warm
interpreter, ``tests/_warm.py``): the registry entry point imported, every
family's registry entry read, every task built once. Each (type, name) must
come from one place in the package. The recompute test runs every task (and
each memory setting that adds metrics) with a scripted model and recomputes
its metrics from the log with the entry point imported: every value must be
the logged one exactly, NaN where NaN was logged.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from _warm import WarmPython
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model

import spatialstale_evals._registry  # noqa: F401 - the entry point Inspect imports
from spatialstale_evals import detect, lifelong, navigate, probe, stale

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "stale_mini.json"

#: Registered twice before issue 34: ``navigation/metrics.py`` (navigate) and
#: ``lifetime/scoring.py`` (lifelong), which now names its own (``episode_success_rate`` ...).
LIFELONG_COLLISION = frozenset(f"metric:spatialstale_evals/{n}" for n in ("success_rate", "death_rate", "timeout_rate"))

#: Run in a fresh interpreter: records the package's call site of every registration.
RECORDER = r"""
import json, sys, traceback
from inspect_ai._util import registry

sites = {}


class Recording(dict):
    def __setitem__(self, key, value):
        stack = [f for f in traceback.extract_stack()[:-1] if "/spatialstale_evals/" in f.filename]
        if stack and key.split(":", 1)[-1].startswith("spatialstale_evals/"):
            # the innermost two frames of the package: the registering line and what called it
            where = tuple(f"{f.filename.rsplit('/spatialstale_evals/', 1)[-1]}:{f.lineno}" for f in stack[-2:])
            sites.setdefault(key, set()).add(where)
        super().__setitem__(key, value)


registry._registry = Recording(registry._registry)
import spatialstale_evals._registry  # noqa
from spatialstale_evals import task_functions
from spatialstale_evals.harness.family import families

families()
for name, task in task_functions().items():
    task(**({"path": sys.argv[1]} if name == "stale" else {}))
print(json.dumps({key: sorted(map(list, where)) for key, where in sites.items()}))
"""


@pytest.fixture(scope="module")
def registrations(warm_python: WarmPython) -> dict[str, list[list[str]]]:
    """Every (type:name) the package registers -> the distinct places it is registered from."""
    out = warm_python.run([sys.executable, "-c", RECORDER, str(MINI)], check=True, cwd=FIXTURES)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_kind_of_registration_is_recorded(registrations: dict[str, Any]) -> None:
    kinds = {key.split(":", 1)[0] for key in registrations}
    assert {"task", "solver", "scorer", "metric", "score_reducer", "modelapi"} <= kinds, kinds
    assert {f"task:spatialstale_evals/{t}" for t in ("detect", "navigate", "probe", "stale", "lifelong")} <= set(
        registrations
    )


def test_every_registered_name_is_registered_from_one_place(registrations: dict[str, Any]) -> None:
    twice = {key: where for key, where in registrations.items() if len(where) > 1}
    assert not twice, f"names registered from more than one place: {twice}"


def test_the_lifelong_rates_have_names_of_their_own(registrations: dict[str, Any]) -> None:
    assert all(len(registrations.get(key, [])) <= 1 for key in LIFELONG_COLLISION)


# -- recompute_metrics -------------------------------------------------------------------

#: (id, task builder, model, model roles, limit): every task, and the memory settings that add metrics.
RUNS: list[tuple[str, Any, str, dict[str, str] | None, int]] = [
    ("detect", lambda: detect(regime="L1"), "spatialstale/observer", None, 2),
    ("detect-edit", lambda: detect(regime="L1", output="edit"), "spatialstale/observer", None, 2),
    ("navigate", lambda: navigate(regime="L1", strategy="omcd", epochs=1), "spatialstale/memory", None, 2),
    (
        "navigate-tool",
        lambda: navigate(regime="L1", strategy="no_filter", memory_access="tool", epochs=1),
        "spatialstale/memory",
        None,
        1,
    ),
    ("probe", lambda: probe(regime="L1"), "spatialstale/observer", None, 2),
    ("probe-empty", lambda: probe(regime="L1"), "empty", None, 1),
    ("stale", lambda: stale(path=str(MINI)), "spatialstale/stale-aware", {"grader": "spatialstale/judge"}, 4),
    (
        "stale-tool",
        lambda: stale(path=str(MINI), memory_access="tool"),
        "spatialstale/stale-aware",
        {"grader": "spatialstale/judge"},
        4,
    ),
    ("lifelong", lambda: lifelong(regime="L1", episodes=2), "spatialstale/diligent", None, 1),
]


def empty_replies() -> Model:
    """A model whose every reply is empty (counted by ``empty_answers``, which only such replies move)."""
    empty = ModelOutput.from_content("mockllm/model", "")
    empty.usage = ModelUsage(input_tokens=1, output_tokens=0, total_tokens=1)
    return get_model("mockllm/model", custom_outputs=itertools.repeat(empty))


def metric_values(log: EvalLog) -> dict[str, float]:
    return {f"{s.name}/{m}": v.value for s in (log.results.scores if log.results else []) for m, v in s.metrics.items()}


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


#: Run in a fresh interpreter, as ``inspect score`` would: the entry point imported, each log's metrics recomputed.
RECOMPUTE = r"""
import json, sys
from inspect_ai.log import read_eval_log, recompute_metrics
import spatialstale_evals._registry  # noqa

out = {}
for path in sys.argv[1:]:
    log = read_eval_log(path)
    recompute_metrics(log)
    out[path] = {f"{s.name}/{m}": v.value for s in log.results.scores for m, v in s.metrics.items()}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def logged_and_recomputed(
    tmp_path_factory: pytest.TempPathFactory, warm_python: WarmPython
) -> dict[str, tuple[dict, dict]]:
    """Per run: (the metrics its log holds, the same recomputed from the log in a fresh
    interpreter, forked from the warm one: the entry point is all it imports of the package)."""
    logs: dict[str, EvalLog] = {}
    for name, build, model, roles, limit in RUNS:
        (log,) = inspect_eval(
            build(),
            model=empty_replies() if model == "empty" else model,
            model_roles=roles,
            limit=limit,
            log_dir=str(tmp_path_factory.mktemp(name)),
            display="none",
            log_realtime=False,
        )
        assert log.status == "success", (name, log.error)
        logs[name] = log
    out = warm_python.run(
        [sys.executable, "-c", RECOMPUTE, *(log.location for log in logs.values())], check=True, cwd=FIXTURES
    )
    again = json.loads(out.stdout.strip().splitlines()[-1])
    return {name: (metric_values(log), again[log.location]) for name, log in logs.items()}


@pytest.mark.parametrize("name", [run[0] for run in RUNS])
def test_recompute_metrics_reproduces_every_logged_metric(
    logged_and_recomputed: dict[str, tuple[dict, dict]], name: str
) -> None:
    logged, recomputed = logged_and_recomputed[name]
    assert logged, name
    if name == "probe-empty":  # the run this test needs: a count that only probe's own metric gives
        assert logged["probe_scorer/empty_answers"] > 0
    assert recomputed.keys() == logged.keys()
    differ = {k: (logged[k], recomputed[k]) for k in logged if not same(logged[k], recomputed[k])}
    assert not differ, f"{name}: (logged, recomputed) {differ}"
