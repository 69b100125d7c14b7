"""``spatialstale matrix`` and its log folder (issue 37): a second matrix on a
local folder is refused while the first runs (both used to run every task);
a log it cannot read stops it with one line naming the file (it was an
83-line traceback ending ``ValueError: EOCD not found``), and once the file
is moved out the same command runs."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from spatialstale_evals import cli
from spatialstale_evals.runs.guard import LOCK_NAME, matrix_lock

ARGS = ["matrix", "--model", "spatialstale/observer", "--seeds", "1", "--regimes", "L1", "--modalities", "text",
        "--tasks", "detect", "--display", "none"]  # fmt: skip


def hold(folder: Path) -> int:
    """A process of its own (this one forked: it has the guard imported already)
    that holds the folder's lock as a running matrix does, until it is killed; its pid."""
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into pytest
        try:
            os.close(readable)
            with matrix_lock(folder):
                os.write(writable, b"held")
                time.sleep(600)
        finally:
            os._exit(1)
    os.close(writable)
    with os.fdopen(readable, "rb") as said:
        held = said.read(4)
    if held != b"held":
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise AssertionError("the holder did not take the lock")
    return pid


def logs_in(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.eval"))


def test_a_second_matrix_on_one_folder_is_refused_while_the_first_holds_it(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "logs"
    holder = hold(folder)
    try:
        assert cli.main([*ARGS, "--log-dir", str(folder)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: another spatialstale matrix is running in {folder}") and err.count("\n") == 1
        assert logs_in(folder) == []  # nothing ran
    finally:
        os.kill(holder, signal.SIGKILL)  # as a killed run ends: the OS frees the lock
        os.waitpid(holder, 0)
    with matrix_lock(folder):  # free again
        pass
    assert (folder / LOCK_NAME).exists()


def test_an_unreadable_log_stops_the_matrix_naming_it_and_moved_out_it_runs(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    bad = folder / "2026-01-01T00-00-00-00-00_detect_truncated.eval"
    bad.write_bytes(b"PK\x03\x04" + b"\0" * 200)  # a zip cut short: no end of central directory
    assert cli.main([*ARGS, "--log-dir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot read 1 log(s) in {folder}: {bad} (") and err.count("\n") == 1, err
    assert "Move them out of the folder" in err
    assert logs_in(folder) == [bad]
    bad.rename(tmp_path / bad.name)
    assert cli.main([*ARGS, "--log-dir", str(folder)]) == 0, capsys.readouterr().err
    assert len(logs_in(folder)) == 1


@pytest.mark.parametrize("where", ["s3://bucket/logs", "memory://logs"])
def test_a_remote_folder_is_not_locked(where: str) -> None:
    with matrix_lock(where), matrix_lock(where):  # nothing to hold on an object store (runs/guard.py)
        pass
