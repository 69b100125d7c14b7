"""Regenerate the worked example report, ``docs/example-report/``, at the
current task version from a scripted run of every task family.

    python benchmarks/example_report.py [--out docs/example-report] [--seeds 3] [--epochs 2] [--keep-logs DIR]
        [--regimes L1 ...]

It runs, with the scripted agents in place of a model (no network, no key),
into a fresh log folder:

    spatialstale matrix --model spatialstale/memory --tasks detect navigate probe \\
        --seeds 3 --epochs 2 --display none --log-dir LOGS/lake
    spatialstale matrix --model spatialstale/diligent,spatialstale/write_once --tasks lifelong \\
        --seeds 3 --display none --log-dir LOGS/lifelong
    inspect eval spatialstale_evals/stale.py -T path=tests/fixtures/stale_mini.json \\
        --model spatialstale/stale-aware --model-role grader=spatialstale/judge --log-dir LOGS/stale
    (the same with spatialstale/stale-naive)
    spatialstale report LOGS --out docs/example-report --quiet

and writes the report's folder anew (the old REPORT.md and plots are removed
first), with one line under the report's title saying how it was made and at which
task version (``tests/test_docs.py`` checks that version against
``spatialstale_evals/eval.yaml``). The scripted agents are deterministic, so
a rerun gives the same tables; only the generation time and the log file names
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
from pathlib import Path

from inspect_ai import eval as inspect_eval

from spatialstale_evals import cli, task_functions
from spatialstale_evals.harness.family import families
from spatialstale_evals.metadata import task_version

ROOT = Path(__file__).resolve().parents[1]

#: The stale task's corpus: the test fixture (the published file is 306 MB and a download).
STALE_CORPUS = ROOT / "tests" / "fixtures" / "stale_mini.json"
#: Who answers which family: the lake's built-in agent, the lifelong and stale tasks' own.
LAKE_AGENT = "spatialstale/memory"
LIFELONG_AGENTS = ("spatialstale/diligent", "spatialstale/write_once")
STALE_AGENTS = ("spatialstale/stale-aware", "spatialstale/stale-naive")
STALE_GRADER = "spatialstale/judge"
#: What the report names as its log folder (the run's own folder is temporary).
LOGS_NAME = "example-report-logs"
#: The line under the title of the example's REPORT.md; ``{version}`` is the task version it ran at.
PROVENANCE = (
    "_Worked example: every task family with the scripted agents, made by "
    "`python benchmarks/example_report.py` ({how}) at task version {version}._"
)


def lake_families() -> list[str]:
    """The run matrix's families other than ``lifelong`` (which its own agents run)."""
    return [name for name, family in families().items() if family.matrix is not None and name != "lifelong"]


def run(logs: Path, seeds: int, epochs: int, regimes: list[str] | None = None) -> None:
    """Every family's scripted run, each into its own subfolder of ``logs``
    (on ``regimes`` only if given: a smaller run, the smoke test's)."""
    matrix = ["--display", "none", "--seeds", str(seeds), *(["--regimes", *regimes] if regimes else [])]
    lake = ["matrix", "--model", LAKE_AGENT, "--tasks", *lake_families(), "--epochs", str(epochs)]
    if code := cli.main([*lake, *matrix, "--log-dir", str(logs / "lake")]):
        raise SystemExit(f"the lake matrix failed ({code})")
    lifelong = ["matrix", "--model", ",".join(LIFELONG_AGENTS), "--tasks", "lifelong"]
    if code := cli.main([*lifelong, *matrix, "--log-dir", str(logs / "lifelong")]):
        raise SystemExit(f"the lifelong matrix failed ({code})")
    stale = task_functions()["stale"]
    for agent in STALE_AGENTS:
        (log,) = inspect_eval(
            stale(path=str(STALE_CORPUS)),
            model=agent,
            model_roles={"grader": STALE_GRADER},
            log_dir=str(logs / "stale"),
            display="none",
        )
        if log.status != "success":
            raise SystemExit(f"the stale task with {agent} ended {log.status}: {log.error}")


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
    parser.add_argument("--keep-logs", type=Path, default=None, help="write the logs here (absent or empty)")
    parser.add_argument("--regimes", nargs="+", default=None, help="these regimes only (default: the paper's)")
    args = parser.parse_args(argv)
    if args.keep_logs is not None and args.keep_logs.exists() and any(args.keep_logs.iterdir()):
        parser.error(f"--keep-logs {args.keep_logs} is not empty: the report would count its logs too")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        logs = (args.keep_logs or Path(tmp) / LOGS_NAME).resolve()
        run(logs, args.seeds, args.epochs, args.regimes)
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
