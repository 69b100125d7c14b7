"""The hosted path against an OpenAI-compatible server that offers only chat
completions, as llama.cpp's server, vLLM and most proxies do: a stub on
127.0.0.1 answers ``POST /v1/chat/completions`` with one ``move`` tool call
and ``/v1/responses`` with 404.

Inspect's ``openai`` provider sends a model name it does not know as OpenAI's
to the Responses API, so ``spatialstale quickstart --model openai/<name>
--model-base-url ...`` would fail on such a server unless it passes
``responses_api=False``; these tests run one ``navigate`` episode through the
quickstart's own code path (``quickstart.run_evals`` with
``quickstart.hosted_eval_args``) both ways and read what the server received.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from spatialstale_evals import quickstart
from spatialstale_evals.world.grid import MOVE_ORDER

#: A name Inspect's openai provider does not know: it would pick the Responses API.
MODEL = "openai/stub-chat-only-model"
MAX_STEPS = 2
#: The stub's every reply: one move, a direction the tool offers.
DIRECTION = "DOWN"


class ChatOnlyServer(ThreadingHTTPServer):
    """Records each request's path; ``requests`` is read by the tests."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ChatOnlyHandler)
        self.requests: list[tuple[str, dict[str, Any]]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class ChatOnlyHandler(BaseHTTPRequestHandler):
    server: ChatOnlyServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append((self.path, request))
        if self.path != "/v1/chat/completions":
            self._reply(404, {"error": {"message": f"{self.path} not found", "type": "not_found_error"}})
            return
        move = {"name": "move", "arguments": json.dumps({"direction": DIRECTION})}
        call = {"id": "call_1", "type": "function", "function": move}
        self._reply(
            200,
            {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "created": 0,
                "model": request.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                        "finish_reason": "tool_calls",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatOnlyServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")  # the client wants one; the stub ignores it
    stub = ChatOnlyServer()
    thread = threading.Thread(target=stub.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        stub.shutdown()
        stub.server_close()


def run_no_filter_episode(tmp_path: Any, eval_args: dict[str, Any]) -> Any:
    """One no_filter episode of the quickstart, as ``spatialstale quickstart`` runs it."""
    (task,) = [t for t in quickstart.quickstart_tasks(1, MAX_STEPS) if t.tokens == "no_filter"]
    (log,) = quickstart.run_evals(MODEL, tmp_path, 1, MAX_STEPS, tasks=[task], max_retries=0, **eval_args)
    return log


def test_the_quickstart_passes_chat_completions_for_an_openai_model_at_a_url() -> None:
    url = "http://127.0.0.1:1/v1"
    assert quickstart.hosted_eval_args(MODEL, url) == {"model_base_url": url, "model_args": {"responses_api": False}}
    assert quickstart.hosted_eval_args("openai-api/local/x", url) == {"model_base_url": url}  # chat completions already
    assert quickstart.hosted_eval_args(MODEL, None) == {}


def test_without_the_flag_the_server_answers_404(server: ChatOnlyServer, tmp_path: Any) -> None:
    log = run_no_filter_episode(tmp_path, {"model_base_url": server.base_url})
    assert log.status == "error" or any(s.error for s in log.samples or [])
    paths = {path for path, _ in server.requests}
    assert paths == {"/v1/responses"}, paths


def test_with_the_quickstarts_arguments_the_episode_runs(server: ChatOnlyServer, tmp_path: Any) -> None:
    log = run_no_filter_episode(tmp_path, quickstart.hosted_eval_args(MODEL, server.base_url))
    assert log.status == "success", log.error
    assert {path for path, _ in server.requests} == {"/v1/chat/completions"}
    # every step was the stub's move, taken as a tool call (no fallback), and the server saw the move tool
    (sample,) = log.samples
    (score,) = sample.scores.values()
    steps, fallbacks = score.metadata["steps"], score.metadata["fallbacks"]
    assert 1 <= steps <= MAX_STEPS and fallbacks == []
    assert len(server.requests) == steps
    for _, request in server.requests:
        (tool,) = request["tools"]
        assert tool["function"]["name"] == "move"
        assert tool["function"]["parameters"]["properties"]["direction"]["enum"] == list(MOVE_ORDER)


def quickstart_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: Any, *argv: str) -> list[str]:
    """``spatialstale quickstart ARGV``'s exit code 2 and its stderr lines (no key in the environment)."""
    from spatialstale_evals import cli

    for key in ("OPENAI_API_KEY", "AZUREAI_OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    assert cli.main(["quickstart", *argv, "--log-dir", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert 1 <= len(lines) <= 2 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and not re.search(r"\[/?(bold|blue)\]", err), err
    return lines


def test_a_missing_key_is_one_plain_line_naming_it(monkeypatch, tmp_path, capsys) -> None:
    pytest.importorskip("openai")
    (line,) = quickstart_error(monkeypatch, tmp_path, capsys, "--model", "openai/gpt-4o")
    assert "OPENAI_API_KEY" in line
    assert not list((tmp_path / "logs").glob("*.eval")), "no task started"


def test_a_missing_provider_package_is_one_plain_line_naming_it(monkeypatch, tmp_path, capsys) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "openai", None)  # the [openai] extra not installed
    (line,) = quickstart_error(monkeypatch, tmp_path, capsys, "--model", "openai/gpt-4o")
    assert "openai" in line and "pip install" in line, line


def test_a_base_url_where_nothing_listens_fails_at_once(monkeypatch, tmp_path, capsys) -> None:
    import socket
    import time

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    began = time.perf_counter()
    (line,) = quickstart_error(monkeypatch, tmp_path, capsys, "--model", MODEL, "--model-base-url", url)
    assert time.perf_counter() - began < 30  # Inspect's retries would take minutes
    assert f"nothing answers at {url}" in line and "--model-base-url" in line
