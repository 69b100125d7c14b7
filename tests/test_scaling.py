"""The recipe of ``docs/scaling.md`` for running the matrix on several machines:
split it by task into ``spatialstale matrix`` processes, each writing its logs
into one tree, then ``spatialstale report`` on the tree. Processes that run at
the same time write their own subfolders; parts run one after another may share
one folder (two ``eval_set`` runs finishing in one folder at once can fail: the
one finishing reads every log there, including one the other is writing).

The processes here are real ``spatialstale matrix`` commands with the
scripted ``memory`` agent (instant), concurrent where the layout says so: each
is a child process forked from this interpreter running the CLI's ``main``
(tests/_fork.py: the claim is about what several processes of our CLI do to
one log tree, not about a cold interpreter's start-up, which costs ~15 s of
CPU a process against ~1-2 s of work here). The report must count exactly the
samples the logs hold, each once: the expected counts are read from the log
files with Inspect's own reader, apart from the report's code, and checked
against what the split asked for.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from _fork import fork_cli, stop, wait
from inspect_ai.log import list_eval_logs, read_eval_log

from spatialstale_evals.analysis.report import build_report

SEEDS, EPOCHS = 2, 2
#: The two halves of one matrix (L1 only, to keep it short): the detection side
#: and the navigation side, as two machines would run them.
HALVES = {
    "detect": ["--tasks", "detect", "--modalities", "text"],
    "navigate": ["--tasks", "navigate", "--strategies", "no_filter", "omcd", "--epochs", str(EPOCHS)],
}


def run_halves(root: Path, layout: str) -> dict[str, Path]:
    """Run both halves, each in its own process (``subfolders``: at once, each
    into ``root/<half>``; ``shared``: one after the other, both into ``root``);
    returns each half's log folder."""
    folders = {name: root / name if layout == "subfolders" else root for name in HALVES}
    running = {}
    try:
        for name in HALVES:
            argv = ["matrix", "--model", "spatialstale/memory", "--seeds", str(SEEDS), "--regimes", "L1"]
            argv += ["--log-dir", str(folders[name]), "--display", "none", *HALVES[name]]
            output = root.parent / f"{name}.out"
            running[name] = (fork_cli(argv, output), output)
            if layout == "shared":
                finished(name, *running.pop(name))
        if layout == "subfolders":
            assert len(running) == 2, "both halves were started before either was waited for"
        for name, (pid, output) in running.items():
            finished(name, pid, output)
    finally:
        for pid, _ in running.values():  # a half left running when the other failed
            stop(pid)
    return folders


def finished(name: str, pid: int, output: Path) -> None:
    """Wait for one half; it must have run its whole part."""
    code = wait(pid, timeout=300)
    out = output.read_text(encoding="utf-8")
    assert code == 0, f"{name} half failed:\n{out}"
    assert "matrix complete" in out


def samples_in_logs(root: Path) -> Counter[tuple[str, str, str, int]]:
    """(task, strategy, sample id, epoch) of every sample in every log under
    ``root``, read with Inspect's reader."""
    found: Counter[tuple[str, str, str, int]] = Counter()
    for info in list_eval_logs(str(root), recursive=True):
        log = read_eval_log(info.name)
        assert log.status == "success"
        task = log.eval.task.rsplit("/", 1)[-1]
        strategy = str((log.eval.task_args or {}).get("strategy", ""))
        for sample in log.samples or []:
            found[(task, strategy, str(sample.id), sample.epoch)] += 1
    return found


def test_matrix_and_report_take_a_remote_log_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log folder given as a URL (``s3://...`` on a real cluster) stays a URL:
    Inspect writes and reads it through fsspec. ``memory://`` is fsspec's
    in-process filesystem, so the matrix runs in this process."""
    from spatialstale_evals.cli import main

    monkeypatch.chdir(tmp_path)
    url = "memory://spatialstale-test/logs"
    argv = ["matrix", "--model", "spatialstale/memory", "--log-dir", url, "--display", "none"]
    assert main(argv + ["--seeds", str(SEEDS), "--regimes", "L1"] + HALVES["detect"]) == 0
    assert list(tmp_path.iterdir()) == [], "nothing written to a local folder named like the URL"
    assert [Path(info.name).name.endswith(".eval") for info in list_eval_logs(url, recursive=True)] == [True]

    report = build_report(url, tmp_path / "report")
    assert sorted(report.logset.detect["instance_id"]) == [f"L1-{i:03d}" for i in range(SEEDS)]


@pytest.mark.parametrize("layout", ["subfolders", "shared"])
def test_split_matrix_merges_in_one_report(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "logs"
    folders = run_halves(root, layout)

    found = samples_in_logs(root)
    ids = [f"L1-{i:03d}" for i in range(SEEDS)]
    expected = Counter({("detect", "", i, 1): 1 for i in ids})
    epochs = range(1, EPOCHS + 1)
    expected.update({("navigate", s, i, e): 1 for s in ("no_filter", "omcd") for i in ids for e in epochs})
    assert found == expected, "each half ran exactly its tasks, once"

    report = build_report(root, tmp_path / "report")
    detect, navigate = report.logset.detect, report.logset.navigate
    assert len(detect) == SEEDS and len(navigate) == 2 * SEEDS * EPOCHS, "both halves, nothing doubled"
    assert not navigate.duplicated(["strategy", "instance_id", "epoch"]).any()
    assert sorted(detect["instance_id"]) == ids
    assert set(navigate["strategy"]) == {"no_filter", "omcd"}
    assert len(report.logset.evals) == 3 and not report.logset.skipped

    # eval_set's own manifest: per subfolder it lists that half's tasks; in one
    # shared folder the last half to write it wins (docs/scaling.md says so).
    manifests = {Path(folder, "eval-set.json") for folder in folders.values()}
    listed = sum(len(json.loads(m.read_text(encoding="utf-8"))["tasks"]) for m in manifests)
    assert listed == (3 if layout == "subfolders" else 2), "navigate (2 strategies) wrote the shared one last"
