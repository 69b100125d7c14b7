"""The local model: SmolLM2-135M-Instruct served by llama-cpp-python.

The end-to-end tests (marker ``local_model``) run against a real model nobody
here wrote, started and stopped by the fixture. They assert structure, not
quality: both tasks finish with status success, every sample is scored, at
least one real ``move`` tool call was made, everything the model said was
either parsed or counted as a fallback / parse failure, and the logs open with
``read_eval_log``. They fail (do not skip) when the [local] extra is not installed.

The unit tests (no marker, no server) pin what the package promises without
starting anything: the names the CLI and the quickstart use, an import that
needs no [local] extra, the server's command line, its state files, and the
chat format's output (those needing ``markupsafe`` or ``llama_cpp`` skip
without them).

Select or skip the end-to-end tests by marker: ``pytest -m local_model`` / ``pytest -m "not local_model"``.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from spatialstale_evals import local_model, quickstart
from spatialstale_evals.local_model import chat_format
from spatialstale_evals.local_model import server as lm_server

ROOT = Path(__file__).resolve().parents[1]

MAX_STEPS = 4
MAX_TOKENS = 512


# -- end to end against the real server ----------------------------------------


@pytest.fixture(scope="module")
def server():
    try:
        local_model.check_ready()
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


@pytest.mark.local_model
def test_server_answers(server):
    assert local_model.models_answer(server.port) == [local_model.MODEL_ALIAS]
    info = local_model.status(server.port)
    assert info["running"] and info["answering"] and info["pid"] == server.pid


@pytest.mark.local_model
def test_both_tasks_succeed_and_every_sample_is_scored(logs):
    assert len(logs) == 2
    for log in logs:
        assert log.status == "success", (log.eval.task, log.error)
        assert log.samples, log.eval.task
        for sample in log.samples:
            assert sample.error is None, sample.error
            assert sample.scores, f"{log.eval.task} sample {sample.id} has no score"


@pytest.mark.local_model
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


@pytest.mark.local_model
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


@pytest.mark.local_model
def test_requests_carry_temperature_and_max_tokens(logs):
    for log in logs:
        for sample in log.samples:
            requests = [e.call.request for e in sample.events if e.event == "model" and e.call]
            assert requests
            for request in requests:
                assert request.get("temperature") == 0 and request.get("max_tokens") == MAX_TOKENS, request.keys()


@pytest.mark.local_model
def test_logs_open_with_read_eval_log(logs):
    from inspect_ai.log import read_eval_log

    for log in logs:
        again = read_eval_log(log.location)
        assert again.status == "success"
        assert len(again.samples or []) == len(log.samples)
        header = read_eval_log(log.location, header_only=True)
        assert header.results is not None and header.results.scores


# -- unit tests: no server -----------------------------------------------------

# Every name the CLI, the quickstart and the tests above use from the package.
USED_NAMES = (
    "DEFAULT_PORT",
    "INSPECT_MODEL",
    "MODEL_ALIAS",
    "N_CTX",
    "START_TIMEOUT",
    "LocalModelError",
    "check_inspect_client",
    "check_llama_cpp",
    "check_ready",
    "find_gguf",
    "models_answer",
    "pid_alive",
    "running_server",
    "start",
    "status",
    "stop",
)


def test_package_exports_every_name_in_use():
    missing = [name for name in USED_NAMES if name not in local_model.__all__ or not hasattr(local_model, name)]
    assert not missing, missing
    assert local_model.INSPECT_MODEL == "llama-cpp-python/smollm2"
    assert (local_model.DEFAULT_PORT, local_model.N_CTX, local_model.START_TIMEOUT) == (8765, 8192, 120.0)


def test_import_needs_no_local_extra():
    """The [local] extra's modules are imported where they are used, never on import."""
    code = (
        "import json, sys, spatialstale_evals.local_model\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('llama_cpp', 'openai', 'markupsafe'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(result.stdout) == []


def test_server_command_runs_the_launcher_with_the_wrapped_format():
    command = lm_server.server_command(Path("/m.gguf"), 8765, threads=2)
    assert command == [
        sys.executable,
        "-m",
        "spatialstale_evals.local_model",
        "--model",
        "/m.gguf",
        "--model_alias",
        "smollm2",
        "--host",
        "127.0.0.1",
        "--port",
        "8765",
        "--chat_format",
        "spatialstale-chatml-function-calling",
        "--n_ctx",
        "8192",
        "--n_threads",
        "2",
        "--n_threads_batch",
        "2",
    ]
    stock = lm_server.server_command(Path("/m.gguf"), 9, 512, 1, chat_format.STOCK_CHAT_FORMAT)
    assert stock[:3] == [sys.executable, "-m", "llama_cpp.server"] and "chatml-function-calling" in stock
    # the launcher is this package, runnable with -m
    assert lm_server.LAUNCHER == local_model.__name__
    assert (ROOT / "spatialstale_evals" / "local_model" / "__main__.py").is_file()


def test_threads_and_environment_defaults(monkeypatch):
    monkeypatch.setenv("SPATIALSTALE_LOCAL_THREADS", "3")
    assert lm_server.default_threads() == 3
    assert lm_server.server_command(Path("/m.gguf"), 1)[-3:] == ["3", "--n_threads_batch", "3"]
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert lm_server.server_env()["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert lm_server.server_env()["OMP_WAIT_POLICY"] == "ACTIVE"


def test_state_files_and_status_without_a_server(monkeypatch, tmp_path):
    monkeypatch.setenv("SPATIALSTALE_STATE_DIR", str(tmp_path))
    port = lm_server.free_port()
    assert lm_server.state_file(port) == tmp_path / f"local-model-{port}.json"
    assert lm_server.server_log(port) == tmp_path / f"local-model-{port}.log"
    info = local_model.status(port)
    assert info == {
        "port": port,
        "base_url": f"http://127.0.0.1:{port}/v1",
        "recorded": False,
        "pid": None,
        "running": False,
        "answering": False,
        "models": None,
        "model_file": None,
        "log": str(tmp_path / f"local-model-{port}.log"),
        "uptime_s": None,
    }
    assert local_model.stop(port) is None
    # a recorded server whose PID is gone: reported, then stop() clears the record
    state = local_model.ServerState(2**22 + 1, port, "/m.gguf", "/m.log", 0.0, ["python"])
    lm_server.state_file(port).write_text(json.dumps(dataclasses.asdict(state)))
    assert local_model.status(port)["recorded"] and not local_model.status(port)["running"]
    assert local_model.stop(port) == state and not lm_server.state_file(port).exists()


CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Say \"yes\" or 'no'."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "It's row 1."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "Row 2."},
        ],
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "move", "arguments": '{"a": "up"}'}}],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "move", "content": [{"type": "text", "text": "moved <up>"}]},
]


def test_text_messages_makes_every_message_plain_text():
    markupsafe = pytest.importorskip("markupsafe")
    before = json.dumps(CONVERSATION)
    system, user, assistant, tool = chat_format.text_messages(CONVERSATION)
    assert json.dumps(CONVERSATION) == before, "the input was modified"
    assert system == {"role": "system", "content": "Say \"yes\" or 'no'."}
    assert user["content"] == f"It's row 1.\n{chat_format.IMAGE_PLACEHOLDER}\nRow 2."
    assert assistant["tool_calls"][0]["function"] == {"name": "move", "arguments": '{"a": "up"}'}
    assert tool == {"role": "user", "content": "Result of move: moved <up>"}
    arguments = assistant["tool_calls"][0]["function"]["arguments"]
    for text in (system["content"], user["content"], tool["content"], arguments):
        assert isinstance(text, markupsafe.Markup), "not marked safe: the template would escape it"


@pytest.fixture
def llama_chat_format():
    """llama-cpp-python's chat-format registry, with :data:`CHAT_FORMAT` unregistered afterwards."""
    module = pytest.importorskip("llama_cpp.llama_chat_format")
    yield module
    registry = module.LlamaChatCompletionHandlerRegistry()
    if chat_format.CHAT_FORMAT in registry._chat_handlers:
        registry.unregister_chat_handler(chat_format.CHAT_FORMAT)


class _Prompt(Exception):
    """What a fake model raises with the prompt it was given."""


class _FakeLlama:
    def create_completion(self, prompt: str, **kwargs: Any) -> Any:
        raise _Prompt(prompt)


def _prompt(module: Any, name: str) -> str:
    handler = module.LlamaChatCompletionHandlerRegistry().get_chat_completion_handler_by_name(name)
    with pytest.raises(_Prompt) as raised:
        handler(llama=_FakeLlama(), messages=CONVERSATION)
    return str(raised.value)


def test_registered_format_renders_plain_text_prompts(llama_chat_format):
    """Through llama-cpp-python's real template: the stock format escapes quotes and
    prints content lists as a repr; the registered one gives the model plain text."""
    stock = _prompt(llama_chat_format, chat_format.STOCK_CHAT_FORMAT)
    assert "&#34;" in stock and "&#39;type&#39;" in stock
    chat_format.register_chat_format()
    prompt = _prompt(llama_chat_format, chat_format.CHAT_FORMAT)
    assert prompt == (
        "<|im_start|>system\nSay \"yes\" or 'no'.<|im_end|>\n"
        f"<|im_start|>user\nIt's row 1.\n{chat_format.IMAGE_PLACEHOLDER}\nRow 2.<|im_end|>\n"
        '<|im_start|>assistant\nfunctions.move:\n{"a": "up"}<|im_end|>\n'
        "<|im_start|>user\nResult of move: moved <up><|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_launcher_runs_llama_cpp_server():
    pytest.importorskip("llama_cpp.server")
    result = subprocess.run(
        [sys.executable, "-m", lm_server.LAUNCHER, "--help"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: llama_cpp.server") and "--chat_format" in result.stdout


def test_llama_cpp_is_declared_in_the_local_extra():
    """What the linter's IECQ004 ignore on the ``llama_cpp`` imports takes on trust:
    the package is llama-cpp-python, and the [local] extra declares it."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(dep.startswith("llama-cpp-python") for dep in extra["local"])
    pytest.importorskip("llama_cpp")
    from importlib.metadata import packages_distributions

    assert [d.lower().replace("_", "-") for d in packages_distributions()["llama_cpp"]] == ["llama-cpp-python"]
