"""Every script under ``benchmarks/`` (not ``studies/``) run at its smallest
size, as a user would (``python benchmarks/<script>.py ...`` from the checkout,
its logs in a temporary folder): it exits 0 and no column of a table it prints
is blank (every cell empty, ``-`` or ``nan``), which is how a script that reads
a moved field shows it. A script this module does not run must say why in
:data:`NOT_RUN`, so a new script is smoke-tested or excused on purpose.

The scripts run one after another in one subprocess (:data:`DRIVER`), each as
its own ``__main__`` with its own argv, ``sys.path[0]``, working directory and
environment: a fresh interpreter per script would spend most of its time
importing Inspect and its providers' clients (about 15 s of CPU each, as long
as most of these runs), ten times over. The driver's garbage collector is tuned
as a matrix run tunes it (``runs.matrix.GC_THRESHOLDS``, the heap alive before
each script frozen out of its passes), as the suite's own process is
(tests/conftest.py): collection changes no output, and with the default
thresholds this module spent about a sixth more CPU (142 s against 116 s)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spatialstale_evals.runs.matrix import GC_THRESHOLDS

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


#: Runs the scripts of the JSON file argv[1] ([script, argv, stdout file, stderr file, environment
#: changes] each) one after another, each as ``python script argv`` would: ``__main__``, its folder
#: first on ``sys.path``, the checkout as working directory; the exit code of each goes to argv[2].
#: The collector's thresholds are argv[3] (JSON); argv[4], the tests' folder, gives the quiet console's
#: live display that lays nothing out (tests/_quiet_live.py, as the test workers have it: the scripts'
#: own ``display="none"`` evals draw nothing either way).
DRIVER = """
import contextlib, gc, json, os, runpy, sys, traceback
runs, codes_file, codes = json.load(open(sys.argv[1])), sys.argv[2], {}
gc.set_threshold(*json.loads(sys.argv[3]))
sys.path.insert(0, sys.argv[4])
import _quiet_live
_quiet_live.install()
del sys.path[0]
path0, cwd, environ = sys.path[0], os.getcwd(), dict(os.environ)
for script, argv, out, err, env in runs:
    gc.collect()
    gc.freeze()
    os.environ.update(env)
    sys.argv, sys.path[0] = [script, *argv], os.path.dirname(script)
    with open(out, "w") as o, open(err, "w") as e, contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    codes[script] = code
    sys.path[0] = path0
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(environ)
json.dump(codes, open(codes_file, "w"))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str, Path]]:
    """Every script of :data:`RUNS`, run by :data:`DRIVER`: script -> (exit code, stdout, stderr, its folder)."""
    root = tmp_path_factory.mktemp("smoke")
    spec: list[list[Any]] = []
    for script, template in sorted(RUNS.items()):
        tmp = root / script
        tmp.mkdir()
        args = [a.replace("{tmp}", str(tmp)) for a in template]
        spec.append([str(BENCHMARKS / f"{script}.py"), args, str(tmp / "stdout"), str(tmp / "stderr"),
                     {"INSPECT_LOG_DIR": str(tmp / "inspect-logs")}])  # fmt: skip
    (root / "runs.json").write_text(json.dumps(spec), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(root / "runs.json"), str(root / "codes.json"), json.dumps(GC_THRESHOLDS),
         str(Path(__file__).parent)],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    codes = json.loads((root / "codes.json").read_text(encoding="utf-8"))
    return {
        Path(script).stem: (code, Path(out).read_text(encoding="utf-8"), Path(err).read_text(encoding="utf-8"),
                            Path(out).parent)  # fmt: skip
        for (script, _, out, err, _), code in zip(spec, codes.values(), strict=True)
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
def test_the_script_prints_full_tables_at_its_smallest_size(script: str, runs) -> None:
    code, stdout, stderr, tmp_path = runs[script]
    assert code == 0, stdout[-2000:] + stderr[-3000:]
    where, checked = TABLE_FILES.get(script, (None, True))
    text = Path(where.replace("{tmp}", str(tmp_path))).read_text(encoding="utf-8") if where else stdout
    assert "|---" in text, f"{script} wrote no table: {text[-2000:]}"
    if checked:
        assert set(blank_columns(text)) <= UNDEFINED.get(script, set()), text[-4000:]
