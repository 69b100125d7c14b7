"""Faults that lose nothing (marker ``local_model``): the local server is
killed with SIGKILL in the middle of a navigate run and restarted, and the
run is finished the way a user would: ``inspect eval-retry`` on its log, or
the same ``spatialstale matrix`` command again. Every sample is then in the
log exactly once, scored, and the first run's error names the lost
connection.

The runs go through the CLIs in a subprocess; the kill comes after the server
has answered ``KILL_AFTER`` requests (its access log counts them), so some
samples are done and some are not. Both runs cap their retries
(``--max-retries 1 --timeout 20``; the matrix also ``--retry-attempts 0``),
so a dead server ends them in seconds instead of minutes of backoff: the
settings the README's "Faults" paragraph recommends for a local server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from spatialstale_evals import local_model
from spatialstale_evals.local_model import server as lm_server

ROOT = Path(__file__).resolve().parents[1]
SAMPLES, MAX_STEPS = 4, 3
KILL_AFTER = 4  # requests answered before the kill: a sample done, the others not
INSPECT = [sys.executable, "-c", "from inspect_ai._cli.main import main; main()"]
MATRIX = [sys.executable, "-m", "spatialstale_evals.cli", "matrix"]
#: What both runs share: one episode at a time, short replies, few retries.
GENERATION = ["--max-connections", "1", "--max-samples", "1", "--temperature", "0", "--max-tokens", "64",
              "--max-retries", "1", "--timeout", "20", "--display", "plain"]  # fmt: skip


def answered(log: Path) -> int:
    return log.read_text(encoding="utf-8", errors="replace").count('"POST /v1/chat/completions')


def first_run(kind: str, base_url: str, log_dir: Path) -> list[str]:
    if kind == "eval-retry":
        return [*INSPECT, "eval", "spatialstale_evals/navigate.py", "-T", "strategy=no_filter",
                "-T", f"max_steps={MAX_STEPS}", "--epochs", "1", "--limit", str(SAMPLES),
                "--model", local_model.INSPECT_MODEL, "--model-base-url", base_url,
                "--log-dir", str(log_dir), *GENERATION]  # fmt: skip
    return [*MATRIX, "--model", local_model.INSPECT_MODEL, "--model-base-url", base_url, "--log-dir", str(log_dir),
            "--tasks", "navigate", "--regimes", "L2", "--strategies", "no_filter", "--seeds", str(SAMPLES),
            "--epochs", "1", "--factor", f"max_steps={MAX_STEPS}", "--retry-attempts", "0", *GENERATION]  # fmt: skip


def run(command: list[str], timeout: float) -> str:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=timeout, check=False)
    return (done.stdout + done.stderr).decode(errors="replace")


def logs_in(log_dir: Path) -> list[EvalLog]:
    return [read_eval_log(info.name) for info in list_eval_logs(str(log_dir))]


@pytest.mark.local_model
@pytest.mark.parametrize("kind", ["eval-retry", "matrix"])
def test_a_killed_server_loses_and_doubles_nothing(kind: str, tmp_path: Path) -> None:
    try:
        local_model.check_llama_cpp()
        local_model.find_gguf()
    except local_model.LocalModelError as exc:
        pytest.fail(f"the fault test needs the [local] extra: {exc}", pytrace=False)
    port = lm_server.free_port()
    state = lm_server.start(port)
    try:
        command = first_run(kind, state.base_url, tmp_path)
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while answered(Path(state.log)) < KILL_AFTER:
            assert process.poll() is None, "the run ended before the kill: " + process.stdout.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the server answered too few requests in 5 minutes"
            time.sleep(0.2)
        os.killpg(state.pid, signal.SIGKILL)
        output = process.communicate(timeout=300)[0].decode(errors="replace")
        (first,) = logs_in(tmp_path)
        assert first.status == "error", output[-2000:]
        assert first.error is not None and "connect" in (first.error.message + first.error.traceback).lower()
        done_before = {s.id for s in first.samples or [] if s.scores}
        assert 0 < len(done_before) < SAMPLES, done_before

        state = lm_server.start(port)  # the same address: the one the log records
        again = (
            [*INSPECT, "eval-retry", first.location, "--log-dir", str(tmp_path)] if kind == "eval-retry" else command
        )
        output = run(again, timeout=600)
    finally:
        lm_server.stop(port)
    finished = [log for log in logs_in(tmp_path) if log.status == "success"]
    assert len(finished) == 1, output[-2000:]
    ids = [s.id for s in finished[0].samples or []]
    assert len(ids) == len(set(ids)) == SAMPLES  # every sample, once
    assert done_before <= set(ids)
    for sample in finished[0].samples or []:
        value = sample.scores["navigation_scorer"].value
        assert sum(value[k] for k in ("success", "death", "timeout", "limit")) == 1  # one outcome each
        assert 1 <= value["steps"] <= MAX_STEPS
    print(  # the README's and the closing note's figures (pytest -s)
        f"{kind}: first run {first.status} after {len(done_before)} of {SAMPLES} samples "
        f"({first.error.message.splitlines()[0][:160]}); finished: {len(ids)} samples, once each"
    )
