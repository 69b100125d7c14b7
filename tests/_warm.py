"""Fresh interpreters without the cold start: one warm interpreter that forks.

Many tests run something in a fresh interpreter: what building a task imports,
what the registry entry point registers, a command as a user types it. Each
cold ``python`` spends five seconds of CPU importing Inspect and its provider
SDKs before the line under test runs. ``WarmPython`` (the session fixture
``warm_python`` of ``conftest.py``) starts one interpreter per session that
imports Inspect (and the libraries our modules import) but **nothing of this
package and no matplotlib**, checks that, and then forks one child per
command. A child starts where a cold interpreter would be once those imports
are done: its own process, working folder, environment, ``sys.argv``,
``sys.path`` and standard streams as ``subprocess.run`` would give it, and
the command run as Python runs it (``-c``, ``-m`` or a console script such as
``inspect``), exit code and all. So a test about *our* modules (which of them
load, what they register, what a command does) sees what a cold interpreter
sees; a test about the interpreter itself (its hash seed, Inspect's own
start-up) still needs ``subprocess`` (``run`` refuses an environment that
changes ``PYTHONHASHSEED``).

The children are waited by the warm interpreter, and it by the session, so
their CPU is counted as a subprocess's is.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

#: Imported by the warm interpreter before it forks: Inspect, its command line, the
#: modules it imports lazily in every run (its notebook check imports IPython, each
#: eval its control server), and the libraries the package imports. Never a module
#: of the package or matplotlib (``NOT_PRELOADED``). A name this Inspect lacks is
#: passed over: preloading only saves time. (Not the provider SDKs a sample imports,
#: ``anthropic`` and ``openai``: six seconds each warm interpreter, of use to one
#: child in the suite.)
PRELOAD = (
    "inspect_ai",
    "inspect_ai._cli.main",
    "inspect_ai.log",
    "inspect_ai.model",
    "inspect_ai.scorer",
    "inspect_ai.solver",
    "inspect_ai.hooks",
    "inspect_ai._control.server",
    "IPython",
    "fastapi",
    "uvicorn",
    "numpy",
    "gymnasium",
    "PIL.Image",
    "PIL.ImageDraw",
    "filelock",
    "pandas",
)

#: Modules the warm interpreter must not have loaded when it forks (the package's
#: own, and the plotting library no test may find preloaded).
NOT_PRELOADED = ("spatialstale_evals", "matplotlib")

SERVER = r"""
import gc, importlib, json, os, sys

preload, forbidden = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for name in preload:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError:
        pass
loaded = sorted(m for m in sys.modules if m.split(".")[0] in forbidden)
if loaded:
    raise SystemExit(f"the warm interpreter loaded {loaded[:5]}: a fork would not be a fresh interpreter")
own_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
base_path = [p for p in sys.path[1:] if p not in own_path]
requests, replies = os.fdopen(os.dup(0), "r"), os.fdopen(os.dup(1), "w")
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0)
os.dup2(null, 1)
gc.collect()
gc.freeze()  # what is alive now stays out of the children's collections: no copy of its pages, no walk at exit
replies.write(json.dumps({"ready": sorted(sys.modules)}) + "\n")
replies.flush()
while True:
    line = requests.readline()
    if not line:
        raise SystemExit(0)
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        break
    replies.write(json.dumps({"pid": pid}) + "\n")
    replies.flush()
    _, status = os.waitpid(pid, 0)
    done = {"returncode": os.waitstatus_to_exitcode(status)}
    replies.write(json.dumps(done) + "\n")
    replies.flush()

# The child: become the fresh interpreter the request describes, then run its command.
requests.close()
replies.close()
written = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
for fd, name, mode in ((0, "stdin", os.O_RDONLY), (1, "stdout", written), (2, "stderr", written)):
    os.dup2(os.open(request[name], mode, 0o644), fd)
os.close(null)
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])
pythonpath = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
kind, target, argv = request["kind"], request["target"], request["argv"]
sys.argv[:] = argv
sys.path[:] = [{"c": "", "m": os.getcwd(), "script": os.path.dirname(target)}[kind], *pythonpath, *base_path]
if kind == "c":
    import types

    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    exec(compile(request["target"], "<string>", "exec"), main.__dict__)
else:
    import runpy

    if kind == "m":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(target, run_name="__main__")
"""


class WarmPython:
    """One warm interpreter (module docstring); ``run`` is ``subprocess.run`` for a fresh Python command."""

    def __init__(self) -> None:
        self._server: subprocess.Popen[bytes] | None = None
        self._pending = b""  # what the server wrote past the last whole reply line
        self._folder = tempfile.TemporaryDirectory(prefix="warm-python-")
        self._count = 0
        self._errors = Path(self._folder.name) / "server.err"
        self.preloaded: frozenset[str] = frozenset()

    def __enter__(self) -> WarmPython:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """End the warm interpreter and wait for it (so its CPU and its children's is counted)."""
        if self._server is not None:
            assert self._server.stdin is not None
            self._server.stdin.close()
            self._server.wait(timeout=60)
            self._server = None
        self._folder.cleanup()

    def start(self) -> subprocess.Popen[str]:
        """Start the warm interpreter (``run`` does at its first command); ``preloaded`` is then what it loaded."""
        if self._server is None:
            with self._errors.open("w") as err:
                self._server = subprocess.Popen(
                    [sys.executable, "-c", SERVER, json.dumps(PRELOAD), json.dumps(NOT_PRELOADED)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                )
            ready = self._reply(None)
            if "ready" not in ready:
                raise RuntimeError("the warm interpreter did not start")
            self.preloaded = frozenset(ready["ready"])
        return self._server

    def _reply(self, timeout: float | None) -> dict:
        """The server's next reply line; ``TimeoutError`` if none is whole within ``timeout`` seconds. The pipe
        is read unbuffered, so a reply already read with the one before it is never waited for again."""
        assert self._server is not None and self._server.stdout is not None
        fd = self._server.stdout.fileno()
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if left is not None and not select.select([fd], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(fd, 65536)
            if not chunk:
                code = self._server.wait()
                raise RuntimeError(f"the warm interpreter ended (exit {code}): {self._errors.read_text()[-3000:]}")
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def run(
        self,
        args: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        timeout: float | None = None,
        check: bool = False,
        capture_output: bool = True,
        text: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """``subprocess.run(args, capture_output=True, text=True, ...)`` for ``args`` one of
        ``[sys.executable, "-c", code, ...]``, ``[sys.executable, "-m", module, ...]`` or
        ``[console_script, ...]`` (a Python script, as ``inspect`` is)."""
        if not (capture_output and text):
            raise ValueError("WarmPython.run captures its output as text")
        kind, target, argv = _command(list(args))
        env = dict(os.environ if env is None else env)
        if env.get("PYTHONHASHSEED") != os.environ.get("PYTHONHASHSEED"):
            raise ValueError("a fork keeps its parent's hash seed: run this one with subprocess")
        server = self.start()
        self._count += 1
        files = {name: Path(self._folder.name) / f"{self._count}.{name}" for name in ("stdin", "stdout", "stderr")}
        files["stdin"].write_text(input or "")
        request = {
            "kind": kind,
            "target": target,
            "argv": argv,
            "cwd": str(Path(cwd or os.getcwd()).resolve()),
            "env": env,
            **{name: str(path) for name, path in files.items()},
        }
        assert server.stdin is not None
        server.stdin.write((json.dumps(request) + "\n").encode())
        server.stdin.flush()
        pid = self._reply(None)["pid"]
        try:
            reply = self._reply(timeout)
            returncode = reply["returncode"]
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):  # it may have ended just now: the server reaps it
                os.kill(pid, 9)
            self._reply(None)
            raise subprocess.TimeoutExpired(list(args), timeout or 0) from None
        stdout, stderr = (files[n].read_text(encoding="utf-8", errors="replace") for n in ("stdout", "stderr"))
        for path in files.values():
            path.unlink()
        done = subprocess.CompletedProcess(list(args), returncode, stdout, stderr)
        if check:
            done.check_returncode()
        return done


def _command(args: list[str]) -> tuple[str, str, list[str]]:
    """(kind, what to run, ``sys.argv``) of a command line, as the interpreter reads it."""
    if args[0] == sys.executable and len(args) >= 3 and args[1] in ("-c", "-m"):
        if args[1] == "-c":
            return "c", args[2], ["-c", *args[3:]]
        return "m", args[2], [args[2], *args[3:]]  # runpy puts the module's file in argv[0]
    script = Path(args[0])
    first = script.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0] if script.is_file() else ""
    if first.startswith("#!") and "python" in first:
        return "script", str(script), list(args)
    raise ValueError(f"not a Python command WarmPython can fork: {args[:3]}")
