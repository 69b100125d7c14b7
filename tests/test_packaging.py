"""The suite as users install it: a wheel, not the checkout.

The wheel is built from this checkout and installed (no editable install,
none of the [local] extra's weights or state) into a new venv; every command
then runs with a working directory outside the repository, so nothing can
come from the source tree. This is what a ``pip install spatialstale-evals``
or ``pip install git+...`` user gets. The venv sees this environment's
packages (a ``.pth`` file naming its site folders: ``--system-site-packages``
would show the *base* interpreter's instead when pytest runs inside a venv,
which is where a user runs it) and the wheel goes in with ``--no-deps``:
the dependencies are the ones this environment resolved from the same
pyproject, so reinstalling them proves nothing more and costs a minute and a
half; what the test proves is that the *package* Python imports, its data and
its entry points (the CLI, Inspect's task registry) are the wheel's, read
from the venv. (The linter's view of an environment without the [local]
extra: ``test_conformance.py::test_inspect_evals_lint_passes``.)
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import gymnasium
import pytest
from _builtins import BUILTIN_REGIMES, regime_files
from inspect_ai.log import read_eval_log

from spatialstale_evals.world import dataset
from spatialstale_evals.world.lifetimes import LIFETIME_DIR

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "spatialstale_evals" / "data" / dataset.DATASET_VERSION


def _run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _build_isolation() -> list[str]:
    """pip's options for building this checkout: in this environment when it has the build backend (the
    [test] extra installs it; pip checks it against ``[build-system] requires``), else in pip's isolated
    build environment, which installs the backend afresh on every build (5 of the build's 7 s of CPU)."""
    return ["--no-build-isolation", "--check-build-dependencies"] if importlib.util.find_spec("hatchling") else []


def _running_site_dirs() -> list[str]:
    """The folders the Python running the tests imports packages from (its
    ``sys.path``: a venv's own site-packages, a user site, an editable install's
    folders), none inside the checkout."""
    dirs = [str(Path(d).absolute()) for d in sys.path if d and Path(d).is_dir()]
    return [d for d in dict.fromkeys(dirs) if not Path(d).resolve().is_relative_to(ROOT)]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the venv's bin folder, a working directory outside the repository)."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", *_build_isolation(), "-q", "-w", str(dist)]
    built = _run([*pip_wheel, str(ROOT)], cwd=base)
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("spatialstale_evals-*.whl")
    # A plain venv that sees the import folders of the Python running the tests (a venv's own, not its base
    # interpreter's), after its own: the wheel installed in it comes first. A .pth line adds its folder only
    # (no .pth inside it is run), and none inside the checkout is named. pip comes from there too: it
    # installs into the interpreter that runs it, the venv's.
    venv.create(base / "venv", system_site_packages=False, with_pip=False, symlinks=True)
    bin_dir = base / "venv" / "bin"
    (site_dir,) = (base / "venv" / "lib").glob("python*/site-packages")
    (site_dir / "_running_environment.pth").write_text("\n".join(_running_site_dirs()) + "\n", encoding="utf-8")
    pip = _run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], cwd=base)
    assert pip.returncode == 0, pip.stderr[-3000:]
    work = base / "elsewhere"
    work.mkdir()
    return bin_dir, work


def checkout_manifests() -> dict[str, dict]:
    """Each canonical size's MANIFEST.json in the checkout, by size: what the wheel must ship."""
    top = DATA / dataset.MANIFEST
    sizes = json.loads(top.read_text(encoding="utf-8"))["sizes"]
    folders = {size: DATA if k == 0 else DATA / size for k, size in enumerate(sizes)}
    return {
        size: json.loads((folder / dataset.MANIFEST).read_text(encoding="utf-8")) for size, folder in folders.items()
    }


#: Run in the venv: where the package, its data and its Inspect entry point come
#: from, and the sha256 of every data file its manifests list (of the JSONL
#: text, as the manifests record it), and one file of each size loaded.
SHIPPED = """
import gzip, hashlib, json, sys
from importlib import metadata
import gymnasium
import spatialstale_evals
from spatialstale_evals.world import dataset
from spatialstale_evals.world.lifetimes import LIFETIME_DIR
(entry,) = [e for e in metadata.entry_points(group="inspect_ai") if e.name == "spatialstale_evals"]
files, loaded = {}, {}
for size in dataset.sizes_of(None):
    folder = dataset.resolve(None, size)
    names = list(dataset.read_manifest(folder)["files"])
    for name in names:
        data = (folder / name).read_bytes()
        files[f"{size}/{name}"] = hashlib.sha256(gzip.decompress(data) if name.endswith(".gz") else data).hexdigest()
    loaded[size] = len(dataset.load(None, dataset.regime_of(names[-1]), size))
print(json.dumps({"package": spatialstale_evals.__file__, "data": str(dataset.CANONICAL_DIR),
                  "entry_point": str(entry.dist.locate_file("")), "files": files, "loaded": loaded,
                  "dependency": gymnasium.__file__}))
"""


def test_the_wheel_ships_the_data_and_uses_it(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    out = _run([str(bin_dir / "python"), "-c", SHIPPED], cwd=work)
    assert out.returncode == 0, out.stderr
    shipped = json.loads(out.stdout)
    venv_root = str(bin_dir.parent)
    for where in ("package", "data", "entry_point"):  # Inspect finds the tasks through the wheel's metadata
        assert shipped[where].startswith(venv_root), f"{where} from {shipped[where]}, not the venv"
    # its dependencies are the ones the tests run with, from the same folder (not a base interpreter's when
    # the tests run in a venv; .ci/run's venv links its packages in, so the path, not the file, tells)
    assert os.path.abspath(shipped["dependency"]) == os.path.abspath(gymnasium.__file__)
    manifests = checkout_manifests()
    # every file of every size (the larger sets too, 32x32 gzipped), intact
    expected = {f"{size}/{name}": e["sha256"] for size, m in manifests.items() for name, e in m["files"].items()}
    assert shipped["files"] == expected
    assert shipped["loaded"] == {size: m["count"] for size, m in manifests.items()}
    # the CLI's entry point, regenerating byte for byte (the other sizes: tests/test_sizes.py, from the checkout)
    first = next(iter(manifests))
    verified = _run([str(bin_dir / "spatialstale"), "datasets", "verify", "--size", first], cwd=work)
    assert verified.returncode == 0, verified.stderr
    oks = [line for line in verified.stdout.splitlines() if ": OK (" in line and " instances" in line]
    assert len(oks) == len(manifests[first]["files"]) and all(line.startswith(shipped["data"]) for line in oks)
    assert all(f": OK ({manifests[first]['count']} instances" in line for line in oks)
    # and the lifelong task's lifetimes, from the wheel too
    lives = json.loads((DATA / LIFETIME_DIR / dataset.MANIFEST).read_text(encoding="utf-8"))
    lifetime_oks = [line for line in verified.stdout.splitlines() if ": OK (" in line and " lifetimes" in line]
    assert len(lifetime_oks) == len(lives["files"]) and all(line.startswith(shipped["data"]) for line in lifetime_oks)


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
    # a fresh process: the package's own regimes, one file each, and the lifelong task's lifetimes
    made_here = sorted(p.name for p in (work / "mine").iterdir())
    assert made_here == sorted([*regime_files(BUILTIN_REGIMES), dataset.MANIFEST, LIFETIME_DIR])
    # the installed package's canonical set is refused (issue 37), and left as it was
    where = _run([str(bin_dir / "python"), "-c", "from spatialstale_evals.world import dataset; "
                  "print(dataset.CANONICAL_DIR)"], cwd=work).stdout.strip()  # fmt: skip
    assert where.startswith(str(bin_dir.parent)), where
    manifest = (Path(where) / dataset.MANIFEST).read_bytes()
    refused = _run([str(bin_dir / "spatialstale"), "datasets", "generate", "--out", where, "--count", "2"], cwd=work)
    assert refused.returncode == 2 and "lies inside the installed package" in refused.stderr, refused.stderr
    assert (Path(where) / dataset.MANIFEST).read_bytes() == manifest


def test_inspect_runs_the_registered_tasks_from_anywhere(installed: tuple[Path, Path]) -> None:
    """Both tasks by their registry names, in one ``inspect eval`` (Inspect from
    this environment, the tasks from the wheel's entry point)."""
    bin_dir, work = installed
    log_dir = work / "logs"
    tasks = ["spatialstale_evals/detect", "spatialstale_evals/navigate"]
    options = ["--model", "spatialstale/observer", "--limit", "1", "--epochs", "1", "--display", "plain"]
    command = [str(bin_dir / "python"), "-m", "inspect_ai", "eval", *tasks, *options, "--log-dir", str(log_dir)]
    out = _run(command, cwd=work)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    # the logs are files: read here, with the Inspect the venv's runs use too (no interpreter started to read)
    logs = [read_eval_log(str(path)) for path in log_dir.glob("*.eval")]
    metrics = [{k: v.value for s in log.results.scores for k, v in s.metrics.items()} for log in logs]
    results = {log.eval.task.split("/")[-1]: [log.status, m] for log, m in zip(logs, metrics, strict=True)}
    assert len(logs) == 2
    assert set(results) == {"detect", "navigate"}
    assert all(status == "success" for status, _ in results.values())
    assert results["detect"][1]["f1"] == 1.0 and results["navigate"][1]["success_rate"] == 1.0
