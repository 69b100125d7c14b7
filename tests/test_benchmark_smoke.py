"""Every script under ``benchmarks/`` (not ``studies/``) run at its smallest
size, as a user would (a subprocess from the checkout, its logs in a temporary
folder): it exits 0 and no column of a table it prints is blank (every cell
empty, ``-`` or ``nan``), which is how a script that reads a moved field shows
it. A script this module does not run must say why in :data:`NOT_RUN`, so a new
script is smoke-tested or excused on purpose."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"

#: Each script's smallest run (one seed, one regime where the script runs a matrix: a table of one
#: regime is a table; the report over several regimes is tests/test_analysis.py's); ``{tmp}`` is a temporary folder.
RUNS: dict[str, list[str]] = {
    "lifelong_tokens": ["--lifetimes", "1", "--parts", "trust", "--log-dir", "{tmp}/logs"],  # score_table
    "scripted_reference": ["--seeds", "1", "--agents", "observer", "--regimes", "L1", "--log-dir", "{tmp}/logs"],
    "lifelong_architectures": ["--lifetimes", "1", "--episodes", "2", "--regimes", "L1", "--threshold", "3000",
                               "--log-dir", "{tmp}/logs"],  # fmt: skip
    "memory_access": ["--seeds", "1", "--log-dir", "{tmp}/logs"],
    "stale_cost": ["--path", str(ROOT / "tests" / "fixtures" / "stale_mini.json")],
    "stale_rubric_agreement": ["--grader", "spatialstale/judge"],
    "latency": ["--latencies", "100", "--connections", "2", "--episodes-per-connection", "1",
                "--samples-per-connection", "1", "--only", "navigate"],  # fmt: skip
    "matrix_time": ["--log-dir", "{tmp}/logs", "--", "--tasks", "detect", "--seeds", "1", "--epochs", "1",
                    "--regimes", "L1", "--modalities", "text"],  # fmt: skip
    "example_report": ["--out", "{tmp}/report", "--seeds", "1", "--epochs", "1", "--regimes", "L1"],
    "lifelong_shared": ["--regimes", "L1", "--lifetimes", "1", "--episodes", "2", "--runs",
                        "shared diligent->write_once", "--log-dir", "{tmp}/logs"],  # fmt: skip
}
#: Columns a smallest run leaves blank because they are undefined there, not broken, and why.
UNDEFINED: dict[str, set[str]] = {
    "memory_access": {"p (Holm)"},  # one seed: no paired test
    "scripted_reference": {"sd", "flag rate notes"},  # one seed: no spread; no distractor notes by default
    "lifelong_architectures": {"statistic", "pvalue", "pvalue_holm"},  # one lifetime: no paired test
}
#: Scripts that write their tables to a file rather than print them: the file (``{tmp}`` as above), and
#: whether its blank columns are checked. example_report's is ``spatialstale report``'s REPORT.md, where at
#: one seed every statistic that needs two (sd, paired tests, correlations) is undefined: it must run and
#: write its tables; their content is tests/test_analysis.py's.
TABLE_FILES: dict[str, tuple[str, bool]] = {"example_report": ("{tmp}/report/REPORT.md", False)}
#: Scripts not run here, and why.
NOT_RUN = {
    "perf": "its smallest run (--quick) takes minutes: it times the suite, and tests/test_latency.py checks its parts",
    "quickstart_time": "needs the local server and minutes of SmolLM2 (the quickstart: tests/test_local_model.py)",
    "view_screenshots": "needs a Chromium; its routes and task list: tests/test_benchmarks.py",
    "lifelong_scores": "its smallest run is still two dozen evals (over a minute of the suite's ten); its runs are "
    "tests/test_lifelong_scores.py's (trivial writers, scripted agents) and its gain tests/test_lifelong_metrics.py's",
    "memory_bounds": "timings, not a table; the bound and the quota it times: tests/test_memory_bounds.py",
}


def blank_columns(text: str) -> list[str]:
    """The headers of every markdown-table column in ``text`` whose cells are all blank."""
    blank, rows = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|") and line.rstrip().endswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
            continue
        if len(rows) > 2 and set(rows[1][0]) <= set("-: "):
            header, body = rows[0], rows[2:]
            for k, name in enumerate(header):
                if all(k >= len(row) or row[k] in ("", "-", "nan", "None") for row in body):
                    blank.append(name)
        rows = []
    return blank


def test_every_script_is_run_or_excused() -> None:
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")}
    assert scripts == set(RUNS) | set(NOT_RUN), scripts ^ (set(RUNS) | set(NOT_RUN))


def test_a_blank_column_is_found() -> None:
    table = "| a | b |\n|---|---|\n| 1 | - |\n| 2 |  |\n"
    assert blank_columns(table) == ["b"]
    assert blank_columns(table.replace("| - |", "| 0.5 |")) == []


@pytest.mark.parametrize("script", sorted(RUNS))
def test_the_script_prints_full_tables_at_its_smallest_size(script: str, tmp_path: Path) -> None:
    if script == "view_screenshots" and not shutil.which("chromium"):
        pytest.skip("no chromium")
    args = [a.replace("{tmp}", str(tmp_path)) for a in RUNS[script]]
    env = os.environ | {"INSPECT_LOG_DIR": str(tmp_path / "inspect-logs")}
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{script}.py"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    where, checked = TABLE_FILES.get(script, (None, True))
    text = Path(where.replace("{tmp}", str(tmp_path))).read_text(encoding="utf-8") if where else out.stdout
    assert "|---" in text, f"{script} wrote no table: {text[-2000:]}"
    if checked:
        assert set(blank_columns(text)) <= UNDEFINED.get(script, set()), text[-4000:]
