"""``spatialstale report`` reads a folder honestly (issue 37): of several copies
of one eval (the same eval id) it keeps the most complete readable one and
lists every other with the reason (a damaged copy with a readable header hid
the good one, and that model vanished from every table); a log whose only
sample errored is labelled as such, not "superseded"; the printed summary
counts every family (it left out lifelong); and ``--out`` naming a file is a
one-line error."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalError, read_eval_log, write_eval_log

from spatialstale_evals import cli
from spatialstale_evals.analysis import logs
from spatialstale_evals.analysis.records import read_samples
from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.detect import detect
from spatialstale_evals.lifelong import lifelong

SEEDS = 3


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A scripted detect log (3 samples) and a lifelong log (1 lifetime of 1 episode)."""
    folder = tmp_path_factory.mktemp("runs")
    (det,) = inspect_eval(detect(regime="L1"), model="spatialstale/memory", log_dir=str(folder / "detect"),
                          display="none", limit=SEEDS, log_realtime=False)  # fmt: skip
    (life,) = inspect_eval(lifelong(regime="L1", episodes=1), model="spatialstale/diligent",
                           log_dir=str(folder / "lifelong"), display="none", limit=1, log_realtime=False)  # fmt: skip
    assert det.status == life.status == "success"
    return {"detect": Path(det.location), "lifelong": Path(life.location)}


def damaged_copy(good: Path, to: Path) -> Path:
    """``good`` with its first sample's JSON cut in half: the header still reads."""
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(to, "w", zipfile.ZIP_DEFLATED) as dst:
        first = next(n for n in src.namelist() if n.startswith("samples/"))
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, data[: len(data) // 2] if name == first else data)
    return to


def tp_by_sample(path: Path) -> dict[str, int]:
    """Each sample's true positives, read from the log itself (the counts the scorer recorded)."""
    return {str(s.id): s.scores["detection_scorer"].metadata["counts"]["tp"] for s in read_eval_log(str(path)).samples}


def test_a_damaged_copy_does_not_hide_the_good_copy_of_one_eval(runs: dict[str, Path], tmp_path: Path) -> None:
    good = shutil.copy(runs["detect"], tmp_path / "a-good.eval")
    bad = damaged_copy(runs["detect"], tmp_path / "z-damaged.eval")
    # the damaged copy is the newer file, so it is first in the best-first order
    os.utime(bad, (os.path.getmtime(good) + 60,) * 2)
    assert read_eval_log(str(bad), header_only=True).eval.eval_id == read_eval_log(str(good)).eval.eval_id
    with pytest.raises(Exception):  # noqa: B017 - whatever Inspect raises: the copy's samples cannot be read
        read_samples(str(bad), "detect")
    with pytest.warns(logs.SkippedLog, match="z-damaged.eval"):
        result = build_report(tmp_path, tmp_path / "out")
    det = result.logset.detect
    assert dict(zip(det["instance_id"], det["tp"])) == tp_by_sample(Path(good))
    assert len(det) == SEEDS
    assert list(result.logset.evals["log"]) == [str(good)]
    (aside,) = result.logset.skipped
    assert aside[0] == str(bad)
    assert "another copy of eval" in aside[1] and f"({good}: {SEEDS} usable sample(s))" in aside[1]
    assert "this copy: unreadable samples" in aside[1]
    md = result.markdown.read_text()
    assert "z-damaged.eval" in md and "spatialstale/memory" in md


def test_of_two_readable_copies_the_more_complete_is_read(runs: dict[str, Path], tmp_path: Path) -> None:
    """An eval-retry log shares the eval id with the failed log it retried: the
    copy with more usable samples is read, whichever is newer."""
    full = read_eval_log(str(runs["detect"]))
    short = full.model_copy(deep=True)
    short.samples = short.samples[:1]
    short.status = "error"
    write_eval_log(short, str(tmp_path / "z-newer-short.eval"))
    shutil.copy(runs["detect"], tmp_path / "a-full.eval")
    os.utime(tmp_path / "z-newer-short.eval", (os.path.getmtime(tmp_path / "a-full.eval") + 60,) * 2)
    loaded = logs.load(tmp_path)
    assert len(loaded.detect) == SEEDS
    assert [Path(p).name for p, _ in loaded.skipped] == ["z-newer-short.eval"]
    assert "this copy: 1 usable sample(s)" in loaded.skipped[0][1]


def test_a_log_whose_only_sample_errored_is_labelled_so(runs: dict[str, Path], tmp_path: Path) -> None:
    log = read_eval_log(str(runs["detect"]))
    log.samples = log.samples[:1]
    log.samples[0].error = EvalError(message="boom", traceback="", traceback_ansi="")
    log.samples[0].scores = None
    log.status = "error"
    log.eval.dataset.sample_ids = [log.samples[0].id]
    write_eval_log(log, str(tmp_path / "errored.eval"))
    result = build_report(tmp_path, tmp_path / "out")
    (status,) = result.tables["inputs"]["status"]
    assert status == "error (no usable sample: 1 errored, 0 unscored)"
    assert "superseded" not in status
    assert "0 log(s) counted, 0 superseded, 1 with no usable sample, 0 skipped" in result.markdown.read_text()


def test_the_printed_summary_counts_lifelong(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    shutil.copy(runs["lifelong"], tmp_path)
    shutil.copy(runs["detect"], tmp_path)
    assert cli.main(["report", str(tmp_path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert f"{SEEDS} detect sample(s)" in line and "1 lifelong " in line, line


def test_report_out_naming_a_file_is_one_line(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    shutil.copy(runs["detect"], tmp_path)
    file = tmp_path / "REPORT.md"
    file.write_text("mine")
    for out in (file, file / "sub"):
        assert cli.main(["report", str(tmp_path), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out {out}: ") and err.count("\n") == 1, err
    assert file.read_text() == "mine"
