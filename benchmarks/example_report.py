"""Regenerate the worked example report, ``docs/example-report/``, at the
current task version from a scripted run of every task family.

    python benchmarks/example_report.py [--out docs/example-report] [--seeds 3] [--epochs 2] [--keep-logs DIR]
        [--regimes L1 ...]

It runs, with the scripted agents in place of a model (no network, no key),
each registered family's example (``TaskFamily.example``: its agents, model
roles and task arguments) into a fresh log folder, one subfolder a family:
a family in the run matrix through it, for today's families

    spatialstale matrix --model spatialstale/memory --tasks detect --seeds 3 --epochs 2 \
        --display none --log-dir LOGS/detect            (navigate and probe the same)
    spatialstale matrix --model spatialstale/diligent,spatialstale/write_once --tasks lifelong \
        --seeds 3 --epochs 2 --display none --log-dir LOGS/lifelong

and a family outside it once per agent on its example's arguments,

    inspect eval spatialstale_evals/stale.py -T path=tests/fixtures/stale_mini.json \
        --model spatialstale/stale-aware --model-role grader=spatialstale/judge --log-dir LOGS/stale
    (the same with spatialstale/stale-naive)

then ``spatialstale report LOGS --out docs/example-report --quiet``, and
writes the report's folder anew (the old REPORT.md and plots are removed
first), with one line under the report's title saying how it was made and at which
task version (``tests/test_docs.py`` checks that version against
``spatialstale_evals/eval.yaml``). A new family is in the example as soon as
its entry names an example. The scripted agents are deterministic, so a rerun
gives the same tables; only the generation time and the log file names
(Inspect's timestamps and ids) differ. The ``stale`` task is not in the run
matrix (its corpus is a file, not the lake's seeds): it runs on the test
fixture's five records. The ``memory`` agent answers the lake tasks; the
lifelong task's own agents (``diligent`` repairs its notes, ``write_once``
never does) run the lifelong task.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval

from spatialstale_evals import cli
from spatialstale_evals.harness.family import TaskFamily, families
from spatialstale_evals.metadata import task_version

ROOT = Path(__file__).resolve().parents[1]

#: What the report names as its log folder (the run's own folder is temporary).
LOGS_NAME = "example-report-logs"
#: The line under the title of the example's REPORT.md; ``{version}`` is the task version it ran at.
PROVENANCE = (
    "_Worked example: every task family with the scripted agents, made by "
    "`python benchmarks/example_report.py` ({how}) at task version {version}._"
)


def example_families(names: Sequence[str] | None = None) -> dict[str, TaskFamily]:
    """The registered families with an example (``names``: only those), in registration order."""
    found = {name: f for name, f in families().items() if f.example is not None and (names is None or name in names)}
    if names is not None and (unknown := sorted(set(names) - set(found))):
        raise SystemExit(f"no example for the task family(ies) {unknown}")
    return found


def task_args(args: dict[str, Any]) -> dict[str, Any]:
    """An example's task arguments as the task takes them (a file as its path)."""
    return {k: str(v) if isinstance(v, Path) else v for k, v in args.items()}


def run_family(family: TaskFamily, logs: Path, seeds: int, epochs: int, regimes: list[str] | None = None) -> None:
    """One family's example into ``logs``: through the run matrix when it is in it
    (on ``regimes`` only if given: a smaller run, the smoke test's), else each agent once."""
    example = family.example
    assert example is not None
    if family.matrix is not None:
        command = ["matrix", "--model", ",".join(example.models), "--tasks", family.name, "--display", "none"]
        command += ["--seeds", str(seeds), "--epochs", str(epochs), "--log-dir", str(logs)]
        command += ["--regimes", *regimes] if regimes else []
        command += [f"--model-role={role}={model}" for role, model in example.roles.items()]
        if code := cli.main(command):
            raise SystemExit(f"the {family.name} matrix failed ({code})")
        return
    task = family.task_function()
    for agent in example.models:
        (log,) = inspect_eval(
            task(**task_args(dict(example.args))),
            model=agent,
            model_roles=dict(example.roles) or None,
            log_dir=str(logs),
            display="none",
        )
        if log.status != "success":
            raise SystemExit(f"the {family.name} task with {agent} ended {log.status}: {log.error}")


def run(
    logs: Path, seeds: int, epochs: int, names: Sequence[str] | None = None, regimes: list[str] | None = None
) -> None:
    """Every family's example run (``names``: only those; ``regimes``: only
    those in the matrix runs), each into its own subfolder of ``logs``."""
    for name, family in example_families(names).items():
        run_family(family, logs / name, seeds, epochs, regimes)


def write_report(logs: Path, out: Path, how: str) -> None:
    """``spatialstale report`` into a clean ``out``, with the provenance line on top."""
    if out.exists():
        for old in [out / "REPORT.md", *out.glob("*.png")]:
            old.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    here = Path.cwd()
    os.chdir(logs.parent)  # the report names its log folder as given: a stable relative name
    try:
        if code := cli.main(["report", logs.name, "--out", str(out), "--quiet"]):
            raise SystemExit(f"the report failed ({code})")
    finally:
        os.chdir(here)
    report = out / "REPORT.md"
    title, rest = report.read_text(encoding="utf-8").split("\n", 1)
    provenance = PROVENANCE.format(how=how, version=task_version())
    report.write_text(f"{title}\n\n{provenance}\n{rest}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "example-report")
    parser.add_argument("--seeds", type=int, default=3, help="first N instances of each regime (3)")
    parser.add_argument("--epochs", type=int, default=2, help="navigation episodes per seed (2)")
    parser.add_argument("--regimes", nargs="+", default=None, help="these regimes only (default: the paper's)")
    parser.add_argument("--keep-logs", type=Path, default=None, help="write the logs here (absent or empty)")
    args = parser.parse_args(argv)
    if args.keep_logs is not None and args.keep_logs.exists() and any(args.keep_logs.iterdir()):
        parser.error(f"--keep-logs {args.keep_logs} is not empty: the report would count its logs too")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        logs = (args.keep_logs or Path(tmp) / LOGS_NAME).resolve()
        run(logs, args.seeds, args.epochs, regimes=args.regimes)
        ran = time.perf_counter() - began
        how = f"{args.seeds} seeds per regime, {args.epochs} navigation epochs"
        how += f", regimes {' '.join(args.regimes)}" if args.regimes else ""
        write_report(logs, args.out.resolve(), how)
    took = time.perf_counter() - began
    report = args.out / "REPORT.md"
    print(f"wrote {report} at task version {task_version()}: runs {ran:.0f} s, report {took - ran:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
