"""What ``run_matrix`` checks about its log folder before ``eval_set`` runs.

* **One matrix per folder.** ``eval_set`` decides what is left to run from
  the logs it finds; two matrices started on one folder both find nothing
  finished and both run (and pay for) every task. So a run holds a lock file
  in a local log folder (``LOCK_NAME``, from ``filelock``: an OS lock, freed
  when the process ends however it ends, so a killed run leaves no stale
  lock) and a second run on the folder stops at once with one line. On an
  object store (``s3://...``) there is no lock: the store offers no atomic
  one that ``eval_set`` would honour, so run one matrix per prefix.
* **Every log readable.** ``eval_set`` reads every log header in the folder,
  and one it cannot read (a truncated ``.eval``: ``EOCD not found``) ended the
  command in a long traceback naming no file. The headers are read first
  here, and an unreadable one stops the run with one line naming each such
  file and what to do (move it out of the folder: its task then runs again).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout
from inspect_ai.log import list_eval_logs, read_eval_log

from spatialstale_evals.analysis.logs import is_url

#: The lock file a running matrix holds in its (local) log folder.
LOCK_NAME = ".spatialstale-matrix.lock"


class LogFolderError(ValueError):
    """A log folder a matrix cannot run in: busy, or holding a log it cannot read."""


@contextmanager
def matrix_lock(log_dir: str | Path) -> Iterator[None]:
    """Hold the folder's lock for the block; ``LogFolderError`` if another run holds it.
    A remote folder is not locked (module docstring)."""
    if is_url(log_dir):
        yield
        return
    folder = Path(log_dir)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / LOCK_NAME))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise LogFolderError(
            f"another spatialstale matrix is running in {log_dir} (it holds {folder / LOCK_NAME}); "
            "wait for it to finish, or use another --log-dir"
        ) from None
    try:
        yield
    finally:
        lock.release()


def unreadable_logs(log_dir: str | Path) -> list[tuple[str, str]]:
    """``(path, error)`` of every log under ``log_dir`` whose header cannot be read."""
    if not is_url(log_dir) and not Path(log_dir).exists():
        return []
    bad = []
    for info in list_eval_logs(str(log_dir), recursive=True):
        try:
            read_eval_log(info.name, header_only=True)
        except Exception as exc:  # noqa: BLE001 - any failure to read is reported by name
            bad.append((info.name.removeprefix("file://"), f"{type(exc).__name__}: {str(exc)[:120]}"))
    return bad


def check_logs_readable(log_dir: str | Path) -> None:
    """``LogFolderError`` naming every unreadable log (``unreadable_logs``) and the remedy."""
    bad = unreadable_logs(log_dir)
    if bad:
        named = "; ".join(f"{path} ({error})" for path, error in bad)
        raise LogFolderError(
            f"cannot read {len(bad)} log(s) in {log_dir}: {named}. Move them out of the folder (or delete them) "
            "and run the same command again: their tasks are then run again"
        )
