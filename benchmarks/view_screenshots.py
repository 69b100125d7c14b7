"""Screenshots of ``inspect view`` for every task: its sample list and one
sample's transcript, from a small scripted run, for the tasks page
(``docs/tasks.md``, "In inspect view").

    python benchmarks/view_screenshots.py [--out docs/images/view] [--samples 3] [--port 7599] [--only stale-tool]

It runs each registered family's example (``TaskFamily.example``: its
``view_model``, ``view_args`` and roles) on a few samples with a scripted
agent (no network, no key; an agent that gets some things wrong, so the scores
and explanations have something to say; a file argument as its path from the
current folder, as the viewer shows it), serves the logs with ``inspect view`` on 127.0.0.1, and
opens the viewer's hash routes in Debian's headless ``chromium``,

    http://127.0.0.1:PORT/#/logs/<log file>/samples/                               the sample list
    http://127.0.0.1:PORT/#/logs/<log file>/samples/sample/<id>/<epoch>/transcript  one sample

writing ``<task>-samples.png`` and ``<task>-transcript.png`` into ``--out``
(``--only`` takes just the runs named, and a setting of a task shown apart:
``--only stale-tool --out docs/images``, the stale task with its history in
the memory store),
reduced to a 64-colour palette to keep them small. The viewer is a single-page
app that parses the log after the page has loaded, so ``chromium --screenshot``
alone photographs its loading screen; the browser is driven instead over its
DevTools pipe (``--remote-debugging-pipe``: JSON messages on file descriptors
3 and 4, no extra package), and each picture is taken once the page shows the
sample's id and its text has stopped changing. Playwright's own browser
download does not work here; the ``chromium`` package does (``apt-get install
chromium``; ``--chromium PATH`` for another binary). The scripted agents are
deterministic, so the pictures change only when the tasks' logs or the viewer
do (and in the log file names, Inspect's timestamps).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from PIL import Image

from spatialstale_evals import task_functions
from spatialstale_evals.harness.family import families

ROOT = Path(__file__).resolve().parents[1]
STALE_CORPUS = ROOT / "tests" / "fixtures" / "stale_mini.json"
#: The runs' log folder, under the system's temporary folder (removed before and after).
LOGS_NAME = "spatialstale-view-logs"


@dataclass(frozen=True)
class Shot:
    """One task's scripted run: its arguments, the agent that answers, and its model roles."""

    args: dict[str, Any]
    model: str
    roles: dict[str, str] = field(default_factory=dict)
    #: The task, when the picture's name is not the task's (a setting of it shown apart).
    task: str | None = None


def shown(value: Any) -> Any:
    """A task argument as the run gets it: a file as its path from the current
    folder (the task logs it and the viewer shows it: not this checkout's)."""
    return os.path.relpath(value) if isinstance(value, Path) else value


def shots() -> dict[str, Callable[[], Shot]]:
    """Per family with an example (``TaskFamily.example``), in registration
    order: its screenshots' run (an agent whose run shows what the task scores)."""
    return {
        name: lambda e=family.example: Shot({k: shown(v) for k, v in e.view_args.items()}, e.view_model, dict(e.roles))
        for name, family in families().items()
        if family.example is not None
    }


#: Settings of a task shown apart, taken only when named (``--only``): the stale task with its
#: history in the memory store (docs/memory.md; ``--out docs/images``), where the reader views
#: the folder and the sessions, then answers.
SETTINGS: dict[str, Callable[[], Shot]] = {
    "stale-tool": lambda: Shot(
        {"path": os.path.relpath(STALE_CORPUS), "memory_access": "tool"},
        "spatialstale/stale-aware",
        {"grader": "spatialstale/judge"},
        task="stale",
    ),
}
#: Browser window (CSS pixels) of each picture.
WINDOW = {"samples": (1400, 560), "transcript": (1400, 1000)}


def run_tasks(log_dir: Path, samples: int, only: list[str] | None = None) -> dict[str, EvalLog]:
    """Each family's shot (``shots``; ``only``: those named, of ``SETTINGS`` too)
    on its task's first ``samples`` samples; its log by shot."""
    missing = [name for name, family in families().items() if family.example is None and name in task_functions()]
    if missing:
        raise SystemExit(f"no example for the suite's task(s) {missing}: give their entries one (TaskFamily.example)")
    every = {**shots(), **SETTINGS}
    logs = {}
    for name in only or list(shots()):
        shot = every[name]()
        task = families()[shot.task or name].task_function()
        (log,) = inspect_eval(
            task(**shot.args),
            model=shot.model,
            model_roles=shot.roles or None,
            limit=samples,
            log_dir=str(log_dir),
            display="none",
        )
        if log.status != "success":
            raise SystemExit(f"{name} ended {log.status}: {log.error}")
        logs[name] = log
    return logs


def free_port(preferred: int) -> int:
    """``preferred`` if nothing listens there, else a port the system picks."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", preferred))
        except OSError:
            s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(log_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """``inspect view`` on ``log_dir``, once it answers."""
    cmd = ["inspect", "view", "--log-dir", str(log_dir), "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"inspect view exited ({server.returncode})") from None
            time.sleep(0.5)
    server.terminate()
    raise SystemExit("inspect view did not answer within 60 s")


def routes(log: EvalLog, log_dir: Path) -> tuple[str, dict[str, str]]:
    """The id of ``log``'s first sample, and the viewer's hash routes of the log's
    sample list and of that sample's transcript."""
    file = quote(Path(log.location).relative_to(log_dir).as_posix(), safe="/")  # each part encoded, as the viewer does
    first = min(log.samples or [], key=lambda s: (str(s.id), s.epoch), default=None)
    if first is None:
        raise SystemExit(f"{log.location} has no samples")
    sample = f"samples/sample/{quote(str(first.id), safe='')}/{first.epoch}/transcript"
    return str(first.id), {"samples": f"#/logs/{file}/samples/", "transcript": f"#/logs/{file}/{sample}"}


class Browser:
    """Headless ``chromium`` driven over its DevTools pipe: one page, navigated and photographed."""

    def __init__(self, chromium: str, profile: Path) -> None:
        to_browser, self._commands = os.pipe()
        self._replies, from_browser = os.pipe()

        def wire() -> None:  # in the child: the pipe's ends on the descriptors chromium reads and writes
            read_end, write_end = os.dup(to_browser), os.dup(from_browser)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
        cmd += ["--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"]
        self.process = subprocess.Popen(
            cmd, preexec_fn=wire, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._id = 0
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """One DevTools command; its result (events that arrive before it are dropped)."""
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._replies, 1 << 20)
                if not chunk:
                    raise SystemExit(f"chromium closed its DevTools pipe ({method})")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise SystemExit(f"chromium: {method}: {reply['error']}")
                return dict(reply["result"])

    def page(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.send(method, params, self.session)

    def text(self) -> str:
        result = self.page("Runtime.evaluate", {"expression": "document.body.innerText", "returnByValue": True})
        return str(result["result"].get("value") or "")

    def shoot(self, url: str, window: tuple[int, int], marker: str, path: Path, timeout: float) -> None:
        """Open ``url`` at ``window`` (CSS pixels), wait until the page shows ``marker``, has
        no loading message and its text is the same twice a second apart, and save it as a
        64-colour PNG at ``path``."""
        width, height = window
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.page("Emulation.setDeviceMetricsOverride", metrics)
        self.page("Page.navigate", {"url": "about:blank"})  # a hash change alone would keep the last page's state
        self.page("Page.navigate", {"url": url})
        deadline, last = time.monotonic() + timeout, None
        while True:
            time.sleep(1.0)
            text = self.text()
            if marker in text and "Loading" not in text and text == last:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{url} did not finish loading in {timeout:.0f} s (shows: {text[:200]!r})")
            last = text
        data = self.page("Page.captureScreenshot", {"format": "png"})["data"]
        with Image.open(io.BytesIO(base64.b64decode(data))) as image:
            small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        small.save(path, optimize=True)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (SystemExit, OSError):
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self._commands)
        os.close(self._replies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "view")
    parser.add_argument("--samples", type=int, default=3, help="samples per task (3)")
    parser.add_argument("--port", type=int, default=7599)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a page may take to load (120)")
    parser.add_argument("--only", nargs="+", choices=[*shots(), *SETTINGS], help="just these (default: every task)")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    # a fixed folder: the viewer shows its path above every picture
    log_dir = Path(tempfile.gettempdir()).resolve() / LOGS_NAME
    shutil.rmtree(log_dir, ignore_errors=True)
    try:
        logs = run_tasks(log_dir, args.samples, args.only)
        ran = time.perf_counter() - began
        port = free_port(args.port)
        server = serve(log_dir, port)
        with tempfile.TemporaryDirectory() as profile:
            browser = Browser(args.chromium, Path(profile))
            try:
                for name, log in logs.items():
                    marker, pages = routes(log, log_dir)
                    for view, route in pages.items():
                        path = args.out / f"{name}-{view}.png"
                        url = f"http://127.0.0.1:{port}/{route}"
                        browser.shoot(url, WINDOW[view], marker, path, args.timeout)
                        print(f"{path} ({path.stat().st_size // 1024} KB)")
            finally:
                browser.close()
                server.terminate()
                server.wait(timeout=30)
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    total = sum(p.stat().st_size for p in args.out.glob("*.png")) // 1024
    took = time.perf_counter() - began
    print(f"{len(logs) * len(WINDOW)} screenshots, {total} KB in {args.out}: runs {ran:.0f} s, in all {took:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
