"""``spatialstale quickstart``: a small but complete evaluation of a real
model with no API key.

Starts the bundled SmolLM2-135M-Instruct server on 127.0.0.1 (stopped again
on success, failure, Ctrl-C or SIGTERM), then runs, one task at a time with
``inspect_ai.eval``:

- ``detect``: 1 seed, text observation, regime L1;
- ``navigate``: 1 episode each with ``omcd`` (audits its memory) and
  ``no_filter`` (does not), regime L2, a step budget the instances' paths allow
  (``--max-steps``, default: the longest shortest path times 1.5, ``step_budget``);

printing what it does as it goes (each task with a time estimate, each sample
when it is done: plain lines, also when the output is not a terminal), then a
results table per task and how to open the logs. ``--limit 3`` runs 3 seeds
and episodes per task (about three times as long).

    pip install -e ".[local]" && spatialstale quickstart
    spatialstale quickstart --model openai/gpt-4o     # the same with a hosted model
    spatialstale quickstart --model openai/<name> --model-base-url http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spatialstale_evals import local_model
from spatialstale_evals.detection.counts import DetectionCounts
from spatialstale_evals.harness.score_counts import counts_of
from spatialstale_evals.hosted import HostedError, check_reachable, plain_message
from spatialstale_evals.navigation.counts import NavigationCounts
from spatialstale_evals.quickstart_cost import QUICK_FACTORS, QUICK_TOKENS, QuickTask, quickstart_tasks, step_budget

__all__ = ["QUICK_FACTORS", "QUICK_TOKENS", "QuickTask", "hosted_eval_args", "main", "quickstart_tasks", "run_evals"]

DEFAULT_LIMIT = 1
DEFAULT_MAX_STEPS: int | None = None  # step_budget(limit): from the instances
DEFAULT_MAX_TOKENS = 512
DETECT_METRICS = ("f1", "precision", "recall", "thaw_recall", "parse_failure_rate")
#: The line under a task whose model gave nothing usable for most of its entries or steps: its zeros are its own.
NO_OUTPUT = "the model produced no usable output"
NAVIGATE_METRICS = ("success_rate", "death_rate", "timeout_rate", "death_on_stale_rate", "fallback_rate")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        default=None,
        help="an Inspect model to use instead of the local server (e.g. openai/gpt-4o; needs its API key)",
    )
    parser.add_argument(
        "--model-base-url",
        default=None,
        metavar="URL",
        help="the OpenAI-compatible server --model talks to (e.g. http://127.0.0.1:8000/v1); an openai/... model "
        "is then sent chat completions (-M responses_api=false), which such servers offer",
    )
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help=f"seeds / episodes per task (default {DEFAULT_LIMIT})"
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        default=DEFAULT_MAX_STEPS,
        help="navigate step budget (default: the longest shortest path of the episodes' lakes times 1.5, "
        "21 steps on 8x8; the paper's is 50)",
    )
    parser.add_argument(
        "--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="reply length cap per call (default 512)"
    )
    parser.add_argument("--log-dir", default="logs", help="where Inspect writes the logs (default logs/)")
    parser.add_argument("--port", type=int, default=None, help="local server port (default: a free one)")


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt so ``finally`` blocks (server stop) run."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def hosted_eval_args(model: str, base_url: str | None) -> dict[str, Any]:
    """What ``inspect_ai.eval`` needs to run ``model`` at ``base_url``: the URL
    and, for Inspect's ``openai`` provider, ``responses_api=False``. That
    provider sends every name but an older ``gpt-`` one (below ``gpt-5``) to the
    Responses API (``/v1/responses``), a name it does not know (a llama.cpp or
    vLLM model's) included, and most OpenAI-compatible servers answer it with
    404; the flag makes it use chat completions (docs/models.md)."""
    if base_url is None:
        return {}
    args: dict[str, Any] = {"model_base_url": base_url}
    if model.split("/", 1)[0] == "openai":
        args["model_args"] = {"responses_api": False}
    return args


def say(line: str) -> None:
    """One progress line, flushed: readable through a pipe or in a CI log."""
    print(line, flush=True)


# -- progress -------------------------------------------------------------------


@dataclass
class _Run:
    """What the progress hook needs to know about the task running now."""

    prefix: str
    samples: int
    done: int = 0


_current: _Run | None = None
_hook_registered = False


def _register_progress_hook() -> None:
    """Register, once, the hook that prints a line per finished sample while
    :data:`_current` is set. Not on import: Inspect announces the hooks
    registered when it first builds a model (a banner), and would do so in
    every process that imports this module; ``run_evals`` builds its model
    first and then registers this one, which Inspect still calls."""
    global _hook_registered
    if _hook_registered:
        return
    from inspect_ai.hooks import Hooks, SampleEnd, hooks

    @hooks(name="quickstart_progress", description="a line per finished sample")
    class QuickstartProgress(Hooks):
        def enabled(self) -> bool:
            return _current is not None

        async def on_sample_end(self, data: SampleEnd) -> None:
            run = _current
            if run is None:
                return
            run.done += 1
            sample = data.sample
            took = f"{sample.total_time:.0f} s" if sample.total_time is not None else "?"
            say(f"{run.prefix}   sample {run.done}/{run.samples} done in {took}: {sample_summary(sample)}")

    _hook_registered = True


@contextlib.contextmanager
def _progress(prefix: str, samples: int) -> Iterator[None]:
    global _current
    _current = _Run(prefix, samples)
    try:
        yield
    finally:
        _current = None


def sample_summary(sample: Any) -> str:
    """What one finished sample did, in a few words."""
    if sample.error is not None:
        return f"error: {str(sample.error.message).splitlines()[0][:200]}"
    nav = navigation_counts([sample])
    if nav.steps:
        outcome = next((k for k in ("success", "death", "timeout") if getattr(nav, k)), "no outcome")
        moves = nav.steps - nav.fallbacks
        return f"{outcome} after {nav.steps:.0f} steps ({moves:.0f} move calls, {nav.fallbacks:.0f} fallbacks)"
    det = detection_counts([sample])
    judged = det.entries - det.parse_failures
    return f"{det.calls:.0f} audit calls, {judged:.0f} of {det.entries:.0f} notes got a usable verdict"


# -- running --------------------------------------------------------------------


def run_evals(
    model: str,
    log_dir: str | Path = "logs",
    limit: int = DEFAULT_LIMIT,
    max_steps: int | None = DEFAULT_MAX_STEPS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    tasks: list[QuickTask] | None = None,
    speed: local_model.Speed | None = None,
    **eval_args: Any,
) -> list[Any]:
    """Run the quickstart tasks on ``model`` (an Inspect model name), one at a
    time, printing progress; the EvalLogs. With the local server's ``speed``
    each task gets a time estimate (its tokens at that speed, scaled by how
    the tasks before it compared with theirs).

    ``model`` is a name, not a ``Model``: Inspect applies ``temperature`` and
    ``max_tokens`` given here only to models it builds itself (a ``Model``
    instance keeps its own config, and the solvers call it directly). Pass
    ``model_base_url=`` for a local server. Samples run one at a time
    (``max_samples=1``): a local server answers one request at a time anyway,
    and consecutive calls of one sample share a prompt prefix that llama.cpp
    then does not recompute. Inspect's own display is off (``display="none"``):
    the progress lines here replace it, in a terminal or not.
    """
    import inspect_ai
    from inspect_ai.model import get_model

    # The model first: a missing API key fails here, before any task (and see _register_progress_hook).
    get_model(  # inspect-evals-lint: ignore[IEBP001] -- a key check
        model, base_url=eval_args.get("model_base_url"), **eval_args.get("model_args", {})
    )
    _register_progress_hook()
    max_steps = step_budget(limit) if max_steps is None else max_steps
    tasks = tasks if tasks is not None else quickstart_tasks(limit, max_steps)
    logs: list[Any] = []
    spent = estimated = 0.0
    for k, quick in enumerate(tasks, 1):
        prefix = f"[{k}/{len(tasks)}]"
        line = f"{prefix} {quick.label}: {quick.what}"
        if speed is not None:
            guess = quick.estimate(speed, limit, max_steps)
            line += f"; estimate {_duration(guess * (spent / estimated if estimated else 1.0))}"
        say(line)
        began = time.perf_counter()
        with _progress(prefix, limit):
            (log,) = inspect_ai.eval(
                quick.build(),
                model=model,
                limit=limit,
                log_dir=str(log_dir),
                temperature=0,
                max_tokens=max_tokens,
                max_samples=1,
                fail_on_error=False,
                display="none",
                **eval_args,
            )
        took = time.perf_counter() - began
        if speed is not None:
            spent, estimated = spent + took, estimated + quick.estimate(speed, limit, max_steps)
        say(f"{prefix}   {quick.label}: {log.status} in {_duration(took)}")
        logs.append(log)
    return logs


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


# -- the results ------------------------------------------------------------------


def score_values(samples: list[Any]) -> list[dict[str, Any]]:
    """Every count record (``Score.metadata["counts"]``) of ``samples``."""
    return [c for s in samples for score in (s.scores or {}).values() if (c := counts_of(score)) is not None]


def navigation_counts(samples: list[Any]) -> NavigationCounts:
    """Outcomes, steps and fallbacks, summed over navigate samples."""
    return NavigationCounts.total(score_values(samples))


def detection_counts(samples: list[Any]) -> DetectionCounts:
    """Pooled confusion, parse failures and calls, summed over detect samples."""
    return DetectionCounts.total(score_values(samples))


def _metric_values(log: Any) -> dict[str, float]:
    values: dict[str, float] = {}
    for score in log.results.scores if log.results else []:
        for name, metric in score.metrics.items():
            values[name] = metric.value
    return values


def results_table(logs: list[Any]) -> str:
    """One block per task: status, samples, main metrics and decision counts."""
    lines = []
    for log in logs:
        spec = log.eval
        args = spec.task_args or {}
        label = spec.task.split("/")[-1]
        if "strategy" in args:
            label += f" {args['strategy']}"
        label += f" {args.get('regime', '')} {args.get('modality', 'text')}".rstrip()
        samples = len(log.samples or [])
        scored = sum(1 for s in log.samples or [] if s.scores)
        header = f"{label}: {log.status}, {scored}/{samples} samples scored, model {spec.model}"
        if log.stats and log.stats.started_at and log.stats.completed_at:
            from datetime import datetime

            took = datetime.fromisoformat(log.stats.completed_at) - datetime.fromisoformat(log.stats.started_at)
            header += f", {took.total_seconds():.0f} s"
        lines.append(header)
        if log.error:
            lines.append(f"  error: {log.error.message}")
        metrics = _metric_values(log)
        wanted = DETECT_METRICS if spec.task.endswith("detect") else NAVIGATE_METRICS
        shown = [f"{name} {metrics[name]:.3f}" for name in wanted if name in metrics]
        if shown:
            lines.append("  " + ", ".join(shown))
        if spec.task.endswith("detect"):
            d = detection_counts(log.samples or [])
            lines.append(
                f"  entries {d.entries:.0f} (tp {d.tp:.0f}, fp {d.fp:.0f}, fn {d.fn:.0f}, tn {d.tn:.0f}), "
                f"{d.parse_failures:.0f} without a usable verdict, {d.calls:.0f} audit calls"
            )
            if d.parse_failures > d.entries / 2:
                lines.append(
                    f"  {NO_OUTPUT} for {d.parse_failures:.0f} of {d.entries:.0f} notes (no verdict the parser "
                    "could read): these scores are the model's, not the run's"
                )
        else:
            c = navigation_counts(log.samples or [])
            lines.append(
                f"  episodes: {c.success:.0f} success, {c.death:.0f} death, {c.timeout:.0f} timeout; "
                f"{c.steps:.0f} steps = {c.steps - c.fallbacks:.0f} move calls + {c.fallbacks:.0f} fallbacks"
            )
            if c.fallbacks > c.steps / 2:
                lines.append(
                    f"  {NO_OUTPUT} for {c.fallbacks:.0f} of {c.steps:.0f} steps (no valid move call: the "
                    "harness's fallback moved)"
                )
        lines.append(f"  log: {log.location}")
    return "\n".join(lines)


def run_hosted(model: str, base_url: str | None, run: tuple[Any, ...]) -> list[Any]:
    """:func:`run_evals` on a model Inspect serves: its server checked first
    (``base_url``), a missing key or provider package said in one plain line."""
    from spatialstale_evals.hosted import PrerequisiteError

    if base_url is not None:
        check_reachable(base_url)
    try:
        return run_evals(model, *run, **hosted_eval_args(model, base_url))
    except PrerequisiteError as exc:
        raise HostedError(plain_message(exc)) from None


def main(args: argparse.Namespace | None = None) -> int:
    if args is None:
        parser = argparse.ArgumentParser(prog="spatialstale quickstart", description=__doc__)
        add_arguments(parser)
        args = parser.parse_args()
    began = time.perf_counter()
    logs: list[Any] = []
    if getattr(args, "model_base_url", None) and not args.model:
        print("--model-base-url needs --model (the model the server offers, e.g. openai/<name>)", file=sys.stderr)
        return 2
    run = (args.log_dir, args.limit, args.max_steps, args.max_tokens)
    with _sigterm_as_interrupt():
        if args.model:
            try:
                logs = run_hosted(args.model, getattr(args, "model_base_url", None), run)
            except HostedError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
        else:
            local_model.check_ready()
            weights = local_model.ensure_gguf(say)
            say(f"starting the local model server (SmolLM2-135M-Instruct, llama.cpp via xllamacpp; {weights.name})")
            t0 = time.perf_counter()
            with local_model.running_server(args.port) as server:
                say(f"server up in {time.perf_counter() - t0:.1f} s at {server.base_url} (PID {server.pid})")
                speed = local_model.speed(server.port)
                say(f"its speed now: prompt {speed.prompt:.0f} tokens/s, replies {speed.generation:.0f} tokens/s")
                logs = run_evals(local_model.INSPECT_MODEL, *run, speed=speed, model_base_url=server.base_url)
            say("server stopped")
    print()
    if logs:
        print(results_table(logs))
    else:
        print(f"no results: the evaluation was interrupted (partial logs, if any, are in {args.log_dir})")
    print(f"\nwall time {time.perf_counter() - began:.0f} s")
    print(f"open the logs: inspect view --log-dir {args.log_dir}")
    return 0 if logs and all(log.status == "success" for log in logs) else 1


if __name__ == "__main__":
    sys.exit(main())
