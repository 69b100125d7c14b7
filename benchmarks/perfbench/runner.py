"""What every measurement shares: a timed in-process Inspect run, reading
model events out of a log, small statistics, the machine description, and a
timer for the stand-in agents' own work.

The runs happen in this process (not a subprocess) so that a measurement can
time exactly the ``eval`` call, read the log object it returns, and use the
``perfbench`` providers, which importing ``providers`` registers.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import inspect_ai
import numpy as np
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ContentImage, ContentText

import spatialstale_evals

#: Bytes per KB in every size this benchmark reports (decimal, as file sizes are).
KB = 1000


@dataclass(frozen=True)
class Run:
    """One finished run: its log, the wall time of the ``eval`` call, and the
    CPU time (all threads of this process) spent in it."""

    log: EvalLog
    wall_s: float
    cpu_s: float


def run_eval(task: Task, model: str, log_dir: Path, collect: bool = True, **kwargs: Any) -> Run:
    """One in-process Inspect run, timed around the ``eval`` call only.

    ``collect`` starts the run with a clean heap, so one run does not pay for
    the garbage of earlier ones; the profiler turns it off because it collects
    before it starts profiling. A run that does not succeed is an error: a
    failed run's timing would mean nothing."""
    log_dir.mkdir(parents=True, exist_ok=True)
    if collect:
        gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", **kwargs)
    wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
    if log.status != "success":
        raise RuntimeError(f"{task.name} on {model} ended {log.status}: {log.error}")
    return Run(log, wall_s, cpu_s)


# --------------------------------------------------------------------------- model events


def model_events(sample: Any) -> list[Any]:
    """A sample's model events (one per ``generate`` call), in order."""
    return [e for e in sample.events if e.event == "model"]


def log_model_events(log: EvalLog) -> list[Any]:
    """Every model event of every sample of ``log``."""
    return [e for s in log.samples or [] for e in model_events(s)]


def usage_of(event: Any) -> tuple[int, int]:
    """(prompt, completion) tokens of one model event; (0, 0) without usage."""
    u = event.output.usage
    return (u.input_tokens, u.output_tokens) if u else (0, 0)


def text_chars(message: ChatMessage) -> int:
    """Characters of a message's text (images not counted)."""
    if isinstance(message.content, str):
        return len(message.content)
    return sum(len(p.text) for p in message.content if isinstance(p, ContentText))


def image_count(message: ChatMessage) -> int:
    if isinstance(message.content, str):
        return 0
    return sum(isinstance(p, ContentImage) for p in message.content)


# --------------------------------------------------------------------------- statistics


def median(xs: Sequence[float]) -> float:
    """The median, NaN for no values (a section with no runs still reports)."""
    return statistics.median(xs) if xs else float("nan")


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> dict[str, float]:
    """Least-squares ``y = a * x + b`` and its R^2 (1 when y does not vary)."""
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    a, b = np.polyfit(x, y, 1)
    ss_res = float(((y - (a * x + b)) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return {"a": float(a), "b": float(b), "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}


# --------------------------------------------------------------------------- the agents' own time


class PolicyTimer:
    """Wall time spent inside the stand-in agents' policy functions (reading
    the grid, planning, writing the audit): the model's own work, which is
    not harness overhead and is reported apart from it.

    The functions are wrapped only inside ``timing(...)``, with
    ``unittest.mock.patch.object``, which puts the originals back when the
    block ends (also on an error). So importing the benchmark changes no
    production code, and runs outside the block (every other measurement)
    call the real functions directly. Patching was chosen over replaying the
    policy on recorded prompts afterwards because it times the calls the
    runs really made, in the same process state (caches, heap, load), at the
    moment they were made."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed

    @contextmanager
    def timing(self, targets: Sequence[tuple[object, str]]) -> Iterator[PolicyTimer]:
        """Within the block, each ``(module, attribute)`` in ``targets`` is the
        timed wrapper of itself; ``seconds`` accumulates across calls."""
        with ExitStack() as stack:
            for owner, name in targets:
                stack.enter_context(mock.patch.object(owner, name, self.wrap(getattr(owner, name))))
            yield self


# --------------------------------------------------------------------------- the machine


def cpu_name() -> str:
    """The CPU's model name (Linux), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """What the figures were measured on, and the load when the run began
    (a shared machine's load explains much of the timings' spread)."""
    return {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "inspect_ai": inspect_ai.__version__,
        "spatialstale_evals": getattr(spatialstale_evals, "__version__", "0.1.0"),
        "load_before": os.getloadavg(),
    }
