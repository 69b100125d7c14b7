"""``spatialstale ...`` commands as child processes forked from the test's own
interpreter, for tests whose claim is about what several *processes* of our
CLI do to one log tree (run at once, one after another, one killed mid-run).

A cold ``python -m spatialstale_evals.cli`` spends ~7 s of CPU importing
Inspect, pandas and our modules and ~9 s more on its first eval (Inspect's
lazily imported providers and state) before it does the command's work,
~1-2 s for these small matrices. A forked child starts with this process's
modules (and, once it has run an eval, its warm state; and every patch the
session installed, conftest.py's included) and runs the same
``cli.main(argv)`` the console script runs; it is still its own process (own
pid, own file locks, own event loop, killable), which is what the tests
need. Start-up itself is tested where it is the claim (tests/test_packaging.py,
the CLI's own subprocess tests).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path


def fork_cli(argv: list[str], output: Path, before: Callable[[], None] | None = None) -> int:
    """Start ``spatialstale <argv>`` in a forked child, in a session of its own
    (``os.killpg(pid, ...)`` stops it), its stdout and stderr into ``output``;
    ``before`` runs in the child first (a patch the child alone should see).
    Returns the child's pid (see :func:`wait`)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # the child: never returns into the test
        os.setsid()
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdout = sys.stderr = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True
        )
        from spatialstale_evals import cli

        if before is not None:
            before()
        code = cli.main(argv)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported in the output, exit code 1
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
        finally:
            os._exit(code)


def wait(pid: int, timeout: float = 300) -> int:
    """The exit code of the forked child ``pid``; killed (and an error) if it runs past ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"the forked command {pid} ran past {timeout} s")
        time.sleep(0.1)


def stop(pid: int) -> None:
    """Kill the forked child ``pid`` and its session (SIGKILL) and reap it; nothing for one already reaped."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
