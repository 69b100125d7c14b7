"""End to end against a real model nobody here wrote: SmolLM2-135M-Instruct
served by llama-cpp-python (started and stopped by the fixture).

Asserts structure, not quality: both tasks finish with status success, every
sample is scored, at least one real ``move`` tool call was made, everything
the model said was either parsed or counted as a fallback / parse failure,
and the logs open with ``read_eval_log``.

Select or skip it by marker: ``pytest -m local_model`` / ``pytest -m "not local_model"``.
It fails (does not skip) when the [local] extra is not installed.
"""

from __future__ import annotations

import pytest

from spatialstale_evals import local_model, quickstart

pytestmark = pytest.mark.local_model

MAX_STEPS = 4
MAX_TOKENS = 512


@pytest.fixture(scope="module")
def server():
    try:
        local_model.check_llama_cpp()
        local_model.check_inspect_client()
        local_model.find_gguf()
    except local_model.LocalModelError as exc:
        pytest.fail(f"the local-model test needs the [local] extra: {exc}", pytrace=False)
    with local_model.running_server() as state:
        yield state
    assert not local_model.pid_alive(state.pid), "the fixture's server outlived the fixture"


@pytest.fixture(scope="module")
def logs(server, tmp_path_factory):
    from spatialstale_evals.detect import detect
    from spatialstale_evals.navigate import navigate

    tasks = [
        detect(regime="L1", modality="text"),
        navigate(regime="L2", strategy="omcd", max_steps=MAX_STEPS, epochs=1),
    ]
    log_dir = tmp_path_factory.mktemp("local-model-logs")
    return quickstart.run_evals(
        local_model.INSPECT_MODEL,
        log_dir,
        limit=1,
        max_steps=MAX_STEPS,
        max_tokens=MAX_TOKENS,
        tasks=tasks,
        model_base_url=server.base_url,
    )


def _by_task(logs, name):
    found = [log for log in logs if log.eval.task.endswith(name)]
    assert len(found) == 1, [log.eval.task for log in logs]
    return found[0]


def test_server_answers(server):
    assert local_model.models_answer(server.port) == [local_model.MODEL_ALIAS]
    info = local_model.status(server.port)
    assert info["running"] and info["answering"] and info["pid"] == server.pid


def test_both_tasks_succeed_and_every_sample_is_scored(logs):
    assert len(logs) == 2
    for log in logs:
        assert log.status == "success", (log.eval.task, log.error)
        assert log.samples, log.eval.task
        for sample in log.samples:
            assert sample.error is None, sample.error
            assert sample.scores, f"{log.eval.task} sample {sample.id} has no score"


def test_detect_every_entry_judged_or_counted_as_parse_failure(logs):
    log = _by_task(logs, "detect")
    for sample in log.samples:
        (score,) = sample.scores.values()
        windows = score.metadata["windows"]
        assert windows
        for window in windows:
            entries = window["entries"]
            assert entries == 64
            assert len(window["judgements"]) + window["parse_failures"] == entries
            assert window["tp"] + window["fp"] + window["fn"] + window["tn"] == entries
            assert window["calls"] == -(-entries // 10)
        # the audit reached the model: real replies, real token counts
        assert sample.model_usage and sum(u.total_tokens for u in sample.model_usage.values()) > 0


def test_navigate_every_step_is_a_move_call_or_a_fallback(logs):
    log = _by_task(logs, "navigate")
    total_moves = 0
    for sample in log.samples:
        (score,) = sample.scores.values()
        rec = score.metadata
        assert rec["outcome"] in ("success", "death", "timeout")
        assert 1 <= rec["steps"] <= MAX_STEPS
        assert len(rec["actions"]) == rec["steps"]
        moves = rec["steps"] - len(rec["fallbacks"])
        assert moves >= 0
        # the omcd audit ran and was counted entry by entry
        assert rec["audits"] and rec["audit_calls"] >= 1
        for audit in rec["audits"]:
            assert audit["tp"] + audit["fp"] + audit["fn"] + audit["tn"] == 64
        # each decision is visible in the messages: an assistant reply answered
        # by the move tool (a valid call) or by the fallback
        replies = [m for m in sample.messages if m.role == "assistant"]
        assert len(replies) == rec["steps"]
        tool_moves = [
            m
            for m in sample.messages
            if m.role == "tool" and m.function == "move" and not str(m.text).startswith(("No valid move", "Ignored"))
        ]
        assert len(tool_moves) == moves
        total_moves += moves
    calls = [
        call
        for sample in log.samples
        for m in sample.messages
        if m.role == "assistant"
        for call in m.tool_calls or []
        if call.function == "move" and not call.parse_error
    ]
    assert total_moves >= 1 and calls, "SmolLM2 made no real move tool call"


def test_requests_carry_temperature_and_max_tokens(logs):
    for log in logs:
        for sample in log.samples:
            requests = [e.call.request for e in sample.events if e.event == "model" and e.call]
            assert requests
            for request in requests:
                assert request.get("temperature") == 0 and request.get("max_tokens") == MAX_TOKENS, request.keys()


def test_logs_open_with_read_eval_log(logs):
    from inspect_ai.log import read_eval_log

    for log in logs:
        again = read_eval_log(log.location)
        assert again.status == "success"
        assert len(again.samples or []) == len(log.samples)
        header = read_eval_log(log.location, header_only=True)
        assert header.results is not None and header.results.scores
