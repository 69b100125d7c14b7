"""The server's lifecycle: start, wait, record, report, stop.

:func:`start` runs the launcher (``python -m spatialstale_evals.local_model``:
llama.cpp's C++ server from the prebuilt ``xllamacpp`` wheel) in the background
and waits until ``GET /v1/models`` answers. The server runs in its own session
(process group), so Ctrl-C in the terminal that started it does not reach it;
:func:`stop` ends it by the PID recorded in the state file (SIGTERM to the
group, then SIGKILL), and :func:`running_server` (for tests and scripts)
always stops the server it started, on success, failure or Ctrl-C.

State and output live in ``$SPATIALSTALE_STATE_DIR`` (default
``~/.cache/spatialstale``) as ``local-model-<port>.json`` and ``.log``, so a
later ``spatialstale local-model stop`` or ``status`` from another shell finds
the server.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from spatialstale_evals.local_model.config import DEFAULT_PORT, HOST, INSPECT_MODEL, MODEL_ALIAS, base_url
from spatialstale_evals.local_model.errors import INSTALL_HINT, LocalModelError
from spatialstale_evals.local_model.paths import state_dir
from spatialstale_evals.local_model.weights import ensure_gguf

LAUNCHER = "spatialstale_evals.local_model"  # python -m LAUNCHER: the server (__main__.py)
# The longest prompt the suite sends (navigate, text, all 64 memory notes, plus
# Inspect's tool-emulation preamble) measured 2.45k tokens (audits: 0.95k);
# 8192 leaves room for the reply and for history > 0.
N_CTX = 8192
START_TIMEOUT = 120.0


def check_backend() -> None:
    """Fail clearly if ``xllamacpp`` (llama.cpp's server, prebuilt) is missing."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelError(f"xllamacpp (llama.cpp's server) is not installed. Install: {INSTALL_HINT}")


def check_inspect_client() -> None:
    """Inspect's OpenAI-compatible providers need the ``openai`` package."""
    if importlib.util.find_spec("openai") is None:
        raise LocalModelError(
            f"the openai client (used by Inspect to talk to the server) is missing. Install: {INSTALL_HINT}"
        )


def check_ready() -> None:
    """The packages a run on the local model needs, checked before anything
    starts (the quickstart, the end-to-end and fault tests): the server
    (xllamacpp) and Inspect's client. The weights are fetched by :func:`start`
    if they are not here yet."""
    check_backend()
    check_inspect_client()


# -- where things are ----------------------------------------------------------


def state_file(port: int) -> Path:
    return state_dir() / f"local-model-{port}.json"


def server_log(port: int) -> Path:
    return state_dir() / f"local-model-{port}.log"


def inspect_model_args(port: int) -> dict[str, str]:
    """``get_model`` / ``inspect_ai.eval`` arguments for the server on ``port``."""
    return {"model": INSPECT_MODEL, "model_base_url": base_url(port)}


# -- probes --------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((HOST, port)) == 0


def models_answer(port: int, timeout: float = 2.0) -> list[str] | None:
    """The model ids ``GET /v1/models`` lists, or None if it does not answer."""
    try:
        with urllib.request.urlopen(f"{base_url(port)}/models", timeout=timeout) as response:
            body = json.load(response)
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return [m.get("id", "?") for m in body.get("data", [])] if isinstance(body, dict) else []


@dataclass(frozen=True)
class Speed:
    """How fast the server works now, in tokens per second (llama.cpp's own timing)."""

    prompt: float
    generation: float


#: What :func:`speed` sends: a prompt like the audits' memory notes, new to the
#: server's cache each time (its first line counts up), and 16 tokens to write.
SPEED_PROMPT = "\n".join(f"[mem_{k:03d}] SAFE at ({k // 8},{k % 8}): Frozen ice - safe to walk" for k in range(16))
_speed_requests = 0


def speed(port: int, timeout: float = 120.0) -> Speed:
    """Measure the server's prompt and generation speed with one short completion
    (a few seconds on 2 cores): the quickstart's estimates divide token counts by it."""
    global _speed_requests
    _speed_requests += 1
    body = {"prompt": f"Check {_speed_requests} at {time.time()}.\n{SPEED_PROMPT}\n", "max_tokens": 16,
            "temperature": 0, "ignore_eos": True}  # fmt: skip
    request = urllib.request.Request(
        f"{base_url(port)}/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        timings = json.load(response)["timings"]
    return Speed(float(timings["prompt_per_second"]), float(timings["predicted_per_second"]))


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs and is our launcher (guards against PID reuse)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return True  # no /proc (macOS): trust the signal check
    if not cmdline:  # a zombie: exited, not yet reaped
        return False
    return LAUNCHER in cmdline


# -- the state file ------------------------------------------------------------


@dataclass
class ServerState:
    """What ``start`` records about a running server."""

    pid: int
    port: int
    model: str
    log: str
    started: float
    command: list[str]

    @property
    def base_url(self) -> str:
        return base_url(self.port)


def read_state(port: int) -> ServerState | None:
    path = state_file(port)
    try:
        return ServerState(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


# -- the command ---------------------------------------------------------------


def default_threads() -> int:
    """``$SPATIALSTALE_LOCAL_THREADS``, else all cores."""
    configured = os.environ.get("SPATIALSTALE_LOCAL_THREADS")
    return max(1, int(configured)) if configured else max(1, os.cpu_count() or 1)


def server_env() -> dict[str, str]:
    """The server's environment: OpenMP threads sleep instead of spinning.

    llama.cpp is built with OpenMP (xllamacpp's wheel too: ``OPENMP = 1`` in
    ``xllamacpp.get_system_info()``), whose threads busy-wait by default; when
    another process wants the CPU that collapses throughput. Measured with
    llama-cpp-python's build on 2 cores, SmolLM2, a 1.7k-token prompt + 100 tokens out: idle,
    2 threads 6.6 s + 0.8 s (passive: 6.7 s + 2.3 s; 1 thread 12.6 s + 1.2 s);
    beside two busy processes, 2 threads 24 s + 3.5 s (passive: 14 s + 1.7 s;
    1 thread 18 s + 1.7 s), and beside this project's other test runs up to
    36 s + 37 s. Set ``OMP_WAIT_POLICY`` yourself to override.
    """
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def server_command(model: Path, port: int, n_ctx: int = N_CTX, threads: int | None = None) -> list[str]:
    """The launcher's command line (``__main__.py`` reads it)."""
    return [sys.executable, "-m", LAUNCHER, "--model", str(model), "--alias", MODEL_ALIAS, "--host", HOST,
            "--port", str(port), "--n-ctx", str(n_ctx), "--threads", str(threads or default_threads())]  # fmt: skip


# -- start, stop, status -------------------------------------------------------


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server output)"


def start(
    port: int = DEFAULT_PORT,
    timeout: float = START_TIMEOUT,
    n_ctx: int = N_CTX,
    threads: int | None = None,
) -> ServerState:
    """Start the server in the background, wait until ``/v1/models`` answers,
    record its PID, and return its state. Raises :class:`LocalModelError`."""
    check_backend()
    model = ensure_gguf()
    existing = read_state(port)
    if existing and pid_alive(existing.pid):
        raise LocalModelError(
            f"a local model server already runs on port {port} (PID {existing.pid}); "
            f"stop it with `spatialstale local-model stop --port {port}`"
        )
    if port_in_use(port):
        raise LocalModelError(f"port {port} on {HOST} is in use by another program; choose --port")
    command = server_command(model, port, n_ctx, threads)
    log_path = server_log(port)
    began = time.time()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C in the caller's terminal does not reach it
            env=server_env(),
        )
    state = ServerState(process.pid, port, str(model), str(log_path), began, command)
    state_file(port).write_text(json.dumps(asdict(state), indent=2))
    try:
        _wait_until_answering(process, port, timeout, log_path)
    except BaseException:
        _terminate(process.pid)
        with contextlib.suppress(ChildProcessError, OSError):
            process.wait(timeout=5)
        state_file(port).unlink(missing_ok=True)
        raise
    return state


def _wait_until_answering(process: subprocess.Popen[bytes], port: int, timeout: float, log_path: Path) -> None:
    """Poll ``GET /v1/models`` until it answers; raise if the server exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while models_answer(port) is None:
        if process.poll() is not None:
            raise LocalModelError(
                f"the local model server exited with code {process.returncode} before answering; "
                f"its output ({log_path}):\n{_tail(log_path)}"
            )
        if time.monotonic() > deadline:
            raise LocalModelError(
                f"the local model server did not answer GET {base_url(port)}/models within {timeout:.0f} s; "
                f"its output ({log_path}):\n{_tail(log_path)}"
            )
        time.sleep(0.25)


def _terminate(pid: int, grace: float = 10.0) -> None:
    """SIGTERM the server's process group, then SIGKILL after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)  # the server leads its own session/group
        except ProcessLookupError:
            return
        except PermissionError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)  # reap it if it is our child
            if not pid_alive(pid):
                return
            time.sleep(0.1)


def stop(port: int = DEFAULT_PORT) -> ServerState | None:
    """Stop the server recorded for ``port`` by its PID; the state it had, or
    None if none was recorded. Removes the state file."""
    state = read_state(port)
    if state is None:
        return None
    if pid_alive(state.pid):
        _terminate(state.pid)
    state_file(port).unlink(missing_ok=True)
    return state


def status(port: int = DEFAULT_PORT) -> dict[str, object]:
    """What is known about the server on ``port``."""
    state = read_state(port)
    alive = bool(state and pid_alive(state.pid))
    models = models_answer(port)
    return {
        "port": port,
        "base_url": base_url(port),
        "recorded": state is not None,
        "pid": state.pid if state else None,
        "running": alive,
        "answering": models is not None,
        "models": models,
        "model_file": state.model if state else None,
        "log": state.log if state else str(server_log(port)),
        "uptime_s": round(time.time() - state.started, 1) if alive and state else None,
    }


@contextlib.contextmanager
def running_server(
    port: int | None = None,
    timeout: float = START_TIMEOUT,
    n_ctx: int = N_CTX,
    threads: int | None = None,
) -> Iterator[ServerState]:
    """Start a server (on a free port by default) and always stop it on exit,
    also on an exception or Ctrl-C."""
    state = start(port or free_port(), timeout=timeout, n_ctx=n_ctx, threads=threads)
    try:
        yield state
    finally:
        stop(state.port)
