"""A fault that loses nothing (marker ``local_model``): the local server is
killed with SIGKILL in the middle of a navigate run and restarted, and the
run is finished the way a user would, with ``inspect eval-retry`` on its log.
Every sample is then in the log exactly once, scored, and the first run's
error names the lost connection. (The other resume mechanism, the same
``spatialstale matrix`` command again after the matrix itself was killed, is
``test_analysis.py::test_matrix_resumes_after_a_kill_without_redoing_finished_tasks``:
it resumes through the same Inspect logs, without a model server.)

The server is the session's (``local_server`` in ``conftest.py``): killed
here, and restarted on its port, where the rest of the session finds it. The
run goes through the CLI in a subprocess, one episode at a time; the kill
comes after the server has answered ``KILL_AFTER`` = ``MAX_STEPS`` more
requests (its output counts them: llama.cpp reports each answer's timing,
ending with a ``total time`` line), so the first episode is done whatever its
length and, with ``SAMPLES`` two more than that, at least one is not. The
episodes show no memory notes (``no_memory``): the fault is in the transport,
and a prompt without the 64 notes takes the server a third of the time. The run
caps its retries (``--max-retries 1``), so a dead server ends it in seconds
instead of an unbounded backoff: the setting the "Faults" paragraph of
docs/matrix-and-report.md recommends for a local server.
"Doubles nothing": the samples finished before the kill keep their uuids, and
the restarted server answers no more requests than the unfinished episodes
can make.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _local_server import LocalServer
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from spatialstale_evals import local_model

ROOT = Path(__file__).resolve().parents[1]
MAX_STEPS = 1  # one request per episode: the fewest that still leave episodes done and undone
KILL_AFTER = MAX_STEPS  # answers before the kill: the first episode (at most MAX_STEPS moves) is done
SAMPLES = KILL_AFTER + 2  # ... and one is not, even if every episode took one request and one more was answered
INSPECT = [sys.executable, "-m", "inspect_ai"]
#: One episode at a time, short replies, few retries.
GENERATION = ["--max-connections", "1", "--max-samples", "1", "--temperature", "0", "--max-tokens", "64",
              "--max-retries", "1", "--display", "plain"]  # fmt: skip


def answered(log: Path) -> int:
    """Completions the server has answered: llama.cpp reports each one's timing, ending with its total time."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return sum("print_timing" in line and "total time" in line for line in lines)


def first_run(base_url: str, log_dir: Path) -> list[str]:
    return [*INSPECT, "eval", "spatialstale_evals/navigate.py", "-T", "strategy=no_memory",
            "-T", f"max_steps={MAX_STEPS}", "--epochs", "1", "--limit", str(SAMPLES),
            "--model", local_model.INSPECT_MODEL, "--model-base-url", base_url,
            "--log-dir", str(log_dir), *GENERATION]  # fmt: skip


def run(command: list[str], timeout: float) -> str:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=timeout, check=False)
    return (done.stdout + done.stderr).decode(errors="replace")


def logs_in(log_dir: Path) -> list[EvalLog]:
    return [read_eval_log(info.name) for info in list_eval_logs(str(log_dir))]


@pytest.mark.local_model
def test_a_killed_server_loses_and_doubles_nothing(local_server: LocalServer, tmp_path: Path) -> None:
    log_dir, console, process = tmp_path / "logs", tmp_path / "first-run.out", None
    before = answered(local_server.log)  # the session's server may have answered earlier tests
    try:
        with open(console, "wb") as out:
            process = subprocess.Popen(first_run(local_server.base_url, log_dir), cwd=ROOT, stdout=out,
                                       stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + 600
        while answered(local_server.log) - before < KILL_AFTER:
            assert process.poll() is None, "the run ended before the kill: " + console.read_text()[-2000:]
            assert time.monotonic() < deadline, "the server answered too few requests in 10 minutes"
            time.sleep(0.2)
        killed = local_server.pid
        os.killpg(killed, signal.SIGKILL)
        process.wait(timeout=300)
        (first,) = logs_in(log_dir)
        assert first.status == "error", console.read_text()[-2000:]
        assert first.error is not None and "APIConnectionError" in first.error.message, first.error
        done_before = {s.id: s.uuid for s in first.samples or [] if s.scores}
        assert 0 < len(done_before) < SAMPLES, done_before
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        if not local_model.pid_alive(local_server.pid):
            local_server.restart()  # the same address (the one the log records), for the rest of the session
    assert local_server.pid != killed
    output = run([*INSPECT, "eval-retry", first.location, "--log-dir", str(log_dir)], timeout=900)
    asked_again = answered(local_server.log)  # the restarted server writes a new log
    finished = [log for log in logs_in(log_dir) if log.status == "success"]
    assert len(finished) == 1, output[-2000:]
    ids = [s.id for s in finished[0].samples or []]
    assert len(ids) == len(set(ids)) == SAMPLES  # every sample, once
    kept = {s.id: s.uuid for s in finished[0].samples or [] if s.id in done_before}
    assert kept == done_before  # the episodes finished before the kill were reused, not run again
    assert 1 <= asked_again <= (SAMPLES - len(done_before)) * MAX_STEPS
    for sample in finished[0].samples or []:
        value = sample.scores["navigation_scorer"].metadata["counts"]
        assert sum(value[k] for k in ("success", "death", "timeout", "limit")) == 1  # one outcome each
        assert 1 <= value["steps"] <= MAX_STEPS
    print(  # the docs' figures (pytest -s)
        f"eval-retry: first run {first.status} after {len(done_before)} of {SAMPLES} samples "
        f"({first.error.message.splitlines()[0][:160]}); the restarted server answered {asked_again} requests; "
        f"finished: {len(ids)} samples, once each"
    )
