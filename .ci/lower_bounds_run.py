"""Run by ``.ci/lower-bounds`` with the venv's Python, from outside the checkout:
a scripted eval of every task (one sample, no key, no network) and
``spatialstale report`` on their logs, on whatever versions that venv holds.
Exits non-zero on an import error, a task that does not end in ``success``, a
failed report or a report that skipped a log."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

from inspect_ai import eval as inspect_eval

from spatialstale_evals import TASKS, task_functions

CHECKOUT = Path(sys.argv[1])
OUT = Path(sys.argv[2])
#: Each task's scripted run: the model (a scripted agent), its roles and task options (kept small).
RUNS: dict[str, tuple[str, dict[str, str], dict[str, object]]] = {
    "detect": ("spatialstale/observer", {}, {}),
    "navigate": ("spatialstale/observer", {}, {"epochs": 1, "max_steps": 20}),
    "probe": ("spatialstale/observer", {}, {}),
    "stale": (
        "spatialstale/stale-aware",
        {"grader": "spatialstale/judge"},
        {"path": str(CHECKOUT / "tests" / "fixtures" / "stale_mini.json")},
    ),
    "lifelong": ("spatialstale/diligent", {}, {"episodes": 2}),
}


def main() -> int:
    missing = set(TASKS) - set(RUNS)
    if missing:
        print(f"no scripted run for {sorted(missing)}: add one to {__file__}", file=sys.stderr)
        return 1
    names = ("inspect-ai", "pandas", "pillow", "numpy", "scipy", "matplotlib", "gymnasium", "pyarrow", "pyyaml")
    print("versions: " + ", ".join(f"{name} {metadata.version(name)}" for name in names), flush=True)
    tasks, logs = task_functions(), OUT / "logs"
    failed = []
    for name in TASKS:
        model, roles, options = RUNS[name]
        (log,) = inspect_eval(
            tasks[name](**options), model=model, model_roles=roles or None, limit=1, log_dir=str(logs), display="none"
        )
        print(f"{name} ({model}): {log.status}", flush=True)
        if log.status != "success":
            failed.append(name)
    report = subprocess.run(
        ["spatialstale", "report", str(logs), "--out", str(OUT / "report")], capture_output=True, text=True
    )
    print(f"spatialstale report: exit {report.returncode}", flush=True)
    text = report.stdout + report.stderr
    if report.returncode != 0 or "Skipped" in text or "skipped" in text:
        print(text[-3000:], file=sys.stderr)
        failed.append("report")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
