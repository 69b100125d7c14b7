"""The suite as users install it: a wheel in a fresh virtual environment.

The wheel is built from this checkout and installed (no editable install,
none of the [local] extra) into a new venv that sees nothing of this
environment; every command then runs with a working directory outside the
repository, so nothing can come from the source tree. This is what a
``pip install spatialstale-evals`` or ``pip install git+...`` user gets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the venv's bin folder, a working directory outside the repository)."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)], cwd=base)
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("spatialstale_evals-*.whl")
    venv.create(base / "venv", with_pip=True, symlinks=True)
    bin_dir = base / "venv" / "bin"
    # the test extra's linter too: it checks the source tree against what this venv has installed
    pip = _run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel), "inspect-evals-lint>=0.12"], cwd=base
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    work = base / "elsewhere"
    work.mkdir()
    return bin_dir, work


def test_the_wheel_ships_the_data_and_uses_it(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    code = (
        "import spatialstale_evals, sys; from spatialstale_evals.world import dataset; "
        "print(spatialstale_evals.__file__); print(dataset.CANONICAL_DIR); "
        "print(len(dataset.load(None, 'L2'))); print(dataset.sizes_of(None) == list(dataset.SIZES)); "
        "print(len(dataset.load(None, 'L3', '32x32')))"
    )
    out = _run([str(bin_dir / "python"), "-c", code], cwd=work)
    assert out.returncode == 0, out.stderr
    package, data, count, sizes, count32 = out.stdout.split()
    venv_root = str(bin_dir.parent)
    assert package.startswith(venv_root) and data.startswith(venv_root), "imported from the venv, not the checkout"
    assert (count, sizes, count32) == ("50", "True", "50")  # the larger sets ship too (32x32 gzipped)
    verified = _run([str(bin_dir / "spatialstale"), "datasets", "verify", "--size", "8x8,16x16"], cwd=work)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.count(": OK (50 instances") == 8  # L0-L3 of each


def test_a_wheel_built_from_the_sdist_ships_the_data(installed: tuple[Path, Path]) -> None:
    """The release route (``python -m build``: an sdist, then a wheel from it).
    ``datasets/spatialstale-v1`` links to the package data; the sdist must keep
    the files at the package path, once, and the wheel must have every one."""
    bin_dir, work = installed
    python = str(bin_dir / "python")
    tools = _run([python, "-m", "pip", "install", "-q", "build", "hatchling>=1.18"], cwd=work)
    assert tools.returncode == 0, tools.stderr[-3000:]
    dist = work / "release"
    # without --sdist or --wheel, build makes the sdist and then the wheel from it
    built = _run([python, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)], cwd=work)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (archive,) = dist.glob("spatialstale_evals-*.tar.gz")
    (wheel,) = dist.glob("spatialstale_evals-*.whl")

    data = ROOT / "spatialstale_evals" / "data"
    expected = sorted(
        Path(folder, name).relative_to(ROOT).as_posix()
        for folder, _, names in os.walk(data)
        for name in names
        if not name.startswith(".")
    )
    assert len(expected) >= 15, expected  # four regimes and a manifest per size
    with tarfile.open(archive) as tar:
        packed = sorted(name.split("/", 1)[1] for name in tar.getnames() if "/" in name)
    assert [n for n in packed if n.startswith("spatialstale_evals/data/") and "." in n.rsplit("/", 1)[1]] == expected
    assert [n for n in packed if n.startswith("datasets/")] == ["datasets/README.md"], "the data once, in the package"
    with zipfile.ZipFile(wheel) as whl:
        shipped = sorted(n for n in whl.namelist() if n.startswith("spatialstale_evals/data/"))
    assert shipped == expected


def test_generate_writes_only_where_it_is_told(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    missing = _run([str(bin_dir / "spatialstale"), "datasets", "generate"], cwd=work)
    assert missing.returncode != 0 and "--out" in missing.stderr
    made = _run([str(bin_dir / "spatialstale"), "datasets", "generate", "--out", "mine", "--count", "2"], cwd=work)
    assert made.returncode == 0, made.stderr
    made_here = sorted(p.name for p in (work / "mine").iterdir())
    assert made_here == [f"L{i}.jsonl" for i in range(4)] + ["MANIFEST.json", "lifelong"]  # lifelong: its lifetimes


@pytest.mark.parametrize(
    "task,args",
    [("detect", ["--limit", "2"]), ("navigate", ["--limit", "1", "--epochs", "1"])],
)
def test_inspect_runs_the_registered_tasks_from_anywhere(
    installed: tuple[Path, Path], task: str, args: list[str]
) -> None:
    bin_dir, work = installed
    log_dir = work / f"logs-{task}"
    out = _run(
        [str(bin_dir / "inspect"), "eval", f"spatialstale_evals/{task}", "--model", "spatialstale/observer",
         "--log-dir", str(log_dir), "--display", "plain", *args],
        cwd=work,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (log_file,) = log_dir.glob("*.eval")
    code = (
        "import sys; from inspect_ai.log import read_eval_log; log = read_eval_log(sys.argv[1]); "
        "print(log.status, {k: v.value for s in log.results.scores for k, v in s.metrics.items()})"
    )
    read = _run([str(bin_dir / "python"), "-c", code, str(log_file)], cwd=work)
    status, metrics = read.stdout.split(" ", 1)
    assert status == "success"
    assert ("'f1': 1.0" in metrics) if task == "detect" else ("'success_rate': 1.0" in metrics)


def test_the_conformance_linter_passes_without_the_local_extra(installed: tuple[Path, Path]) -> None:
    """inspect-evals-lint maps imports to distributions through what is
    installed: in this venv xllamacpp (the [local] extra) is not."""
    bin_dir, _ = installed
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('xllamacpp') is not None)"
    assert _run([str(bin_dir / "python"), "-c", code], cwd=ROOT).returncode == 0, "xllamacpp must be absent here"
    out = _run(
        [str(bin_dir / "python"), "-m", "inspect_evals_lint", "--task", "spatialstale_evals/detect.py",
         "--output-format", "json"],
        cwd=ROOT,
    )  # fmt: skip
    report = json.loads(out.stdout)
    findings = [
        f"{d['code']} {d.get('file', '')}: {d['message']}"
        for package in report["packages"]
        for d in package["diagnostics"]
        if d["status"] in ("fail", "warn")
    ]
    assert report["passed"] and out.returncode == 0 and not findings, "\n".join(findings) or out.stderr
