"""``spatialstale datasets generate`` refuses what would replace the canonical
set (a folder inside the installed package, or one holding a canonical set)
unless ``--force``, and every bad option with one line naming it, before it
writes anything (issue 37: these ended in numpy's or the OS's tracebacks, and
``--out spatialstale_evals/data/spatialstale-v1 --count 2`` replaced the
benchmark without a word)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from spatialstale_evals import cli
from spatialstale_evals.world import dataset, lifetimes
from spatialstale_evals.world.output_folder import PACKAGE_DIR

CANON = Path(str(dataset.CANONICAL_DIR))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["datasets", "generate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def canonical_copy(folder: Path) -> Path:
    """The canonical set's 8x8 files and lifetimes (no size sub-folders) in ``folder``."""
    folder.mkdir()
    for name in ("MANIFEST.json", "L0.jsonl", "L1.jsonl", "L2.jsonl", "L3.jsonl"):
        shutil.copy(CANON / name, folder / name)
    shutil.copytree(CANON / "lifelong", folder / "lifelong")
    return folder


def test_a_folder_holding_a_canonical_set_is_refused_unless_forced(tmp_path: Path, capsys) -> None:
    copy = canonical_copy(tmp_path / "copy")
    before = {p.name: p.read_bytes() for p in copy.iterdir() if p.is_file()}
    code, out, err = run(capsys, "--out", str(copy), "--count", "2")
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0, err
    assert f"--out {copy}: holds a canonical spatialstale-v1 set" in err and "--force" in err
    assert {p.name: p.read_bytes() for p in copy.iterdir() if p.is_file()} == before
    # its lifetimes alone are a canonical set too
    (copy / "MANIFEST.json").unlink()
    assert run(capsys, "--out", str(copy), "--count", "2")[0] == 2
    # forced: written, a 2-instance set
    code, out, err = run(capsys, "--out", str(copy), "--count", "2", "--force")
    assert code == 0, err
    assert json.loads((copy / "MANIFEST.json").read_text())["count"] == 2
    assert len(lifetimes.load(copy, "L1")) == 2


def test_a_folder_inside_the_installed_package_is_refused(tmp_path: Path, capsys) -> None:
    """The issue's reproduction, aimed at a folder of the package that does not
    exist (so a broken guard cannot damage the checkout): refused, nothing
    created; and the canonical folder itself (through the checkout's link too)."""
    target = PACKAGE_DIR / "data" / "guard-test-set"
    try:
        code, out, err = run(capsys, "--out", str(target), "--count", "2")
        assert code == 2 and out == ""
        assert f"--out {target}: lies inside the installed package" in err, err
        assert not target.exists()
    finally:
        shutil.rmtree(target, ignore_errors=True)
    manifest = (CANON / "MANIFEST.json").read_bytes()
    for out_dir in (CANON, PACKAGE_DIR.parent / "datasets" / dataset.DATASET_VERSION):
        if out_dir.exists():
            assert run(capsys, "--out", str(out_dir), "--count", "2")[0] == 2
    assert (CANON / "MANIFEST.json").read_bytes() == manifest


def test_another_folder_is_written_as_before(tmp_path: Path, capsys) -> None:
    code, out, err = run(capsys, "--out", str(tmp_path / "a" / "b"), "--count", "2")
    assert code == 0, err
    assert dataset.verify(tmp_path / "a" / "b") == {f"L{i}.jsonl": 2 for i in range(4)}
    # a set of one's own is overwritten without --force (it is not canonical)
    assert run(capsys, "--out", str(tmp_path / "a" / "b"), "--count", "3")[0] == 0
    assert json.loads((tmp_path / "a" / "b" / "MANIFEST.json").read_text())["count"] == 3


@pytest.mark.parametrize(
    "args,message",
    [
        (["--master-seed", "-5"], "--master-seed -5: must be an integer in 0.."),
        (["--master-seed", str(2**64)], f"--master-seed {2**64}: must be an integer in 0.."),
        (["--count", "100000000"], "--count 100000000: must be an integer in 1..10000"),
        (["--count", "0"], "--count 0: must be an integer in 1..10000"),
        (["--out", "{file}"], "--out {file}: is a file, not a folder"),
        (["--out", "{file}/x/y"], "--out {file}/x/y: lies under {file}, which is a file"),
        (["--out", "/proc/x"], "--out /proc/x: cannot create the folder"),
        (["--size", "1x1"], "grid must be at least 2x2"),
    ],
)
def test_a_bad_option_is_one_line_naming_it_before_anything_is_written(
    args: list[str], message: str, tmp_path: Path, capsys
) -> None:
    file = tmp_path / "a-file"
    file.write_text("not a folder")
    args = [a.format(file=file) for a in args]
    out_dir = tmp_path / "out"
    code, out, err = run(capsys, "--out", str(out_dir), "--count", "2", *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert message.format(file=file) in err, err
    assert not out_dir.exists() and file.read_text() == "not a folder"
