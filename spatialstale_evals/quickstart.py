"""``spatialstale quickstart``: a small but complete evaluation of a real
model with no API key.

Starts the bundled SmolLM2-135M-Instruct server on 127.0.0.1 (stopped again
on success, failure, Ctrl-C or SIGTERM), then runs with ``inspect_ai.eval``:

- ``detect``: 3 seeds, text observation, regime L1;
- ``navigate``: 3 episodes each with ``omcd`` and ``no_filter``, regime L2,
  a short step budget (``--max-steps``, default 10) so it runs in about 4 minutes on 2 cores;

prints a results table per task and says how to open the logs.

    pip install -e ".[local]" && spatialstale quickstart
    spatialstale quickstart --model openai/gpt-4o     # the same with a hosted model
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialstale_evals import local_model

DEFAULT_LIMIT = 3
DEFAULT_MAX_STEPS = 10
DEFAULT_MAX_TOKENS = 512
DETECT_METRICS = ("f1", "precision", "recall", "thaw_recall", "parse_failure_rate")
NAVIGATE_METRICS = ("success_rate", "death_rate", "timeout_rate", "death_on_stale_rate", "fallback_rate")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        default=None,
        help="an Inspect model to use instead of the local server (e.g. openai/gpt-4o; needs its API key)",
    )
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="seeds / episodes per task (default 3)")
    parser.add_argument(
        "--max-steps", type=int, default=DEFAULT_MAX_STEPS, help="navigate step budget (default 10; the paper's is 50)"
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


def quickstart_tasks(limit: int = DEFAULT_LIMIT, max_steps: int = DEFAULT_MAX_STEPS) -> list[Any]:
    """detect (L1, text) and navigate (L2, omcd and no_filter), one episode per instance."""
    from spatialstale_evals.detect import detect
    from spatialstale_evals.navigate import navigate

    return [
        detect(regime="L1", modality="text"),
        navigate(regime="L2", strategy="omcd", max_steps=max_steps, epochs=1),
        navigate(regime="L2", strategy="no_filter", max_steps=max_steps, epochs=1),
    ]


def run_evals(
    model: str,
    log_dir: str | Path = "logs",
    limit: int = DEFAULT_LIMIT,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    tasks: list[Any] | None = None,
    **eval_args: Any,
) -> list[Any]:
    """Run the quickstart tasks on ``model`` (an Inspect model name); the EvalLogs.

    ``model`` is a name, not a ``Model``: Inspect applies ``temperature`` and
    ``max_tokens`` given here only to models it builds itself (a ``Model``
    instance keeps its own config, and the solvers call it directly). Pass
    ``model_base_url=`` for a local server. Samples run one at a time
    (``max_samples=1``): a local server answers one request at a time anyway,
    and consecutive calls of one sample share a prompt prefix that llama.cpp
    then does not recompute.
    """
    import inspect_ai

    return inspect_ai.eval(
        tasks if tasks is not None else quickstart_tasks(limit, max_steps),
        model=model,
        limit=limit,
        log_dir=str(log_dir),
        temperature=0,
        max_tokens=max_tokens,
        max_samples=1,
        max_tasks=1,
        fail_on_error=False,
        **eval_args,
    )


def navigation_counts(log: Any) -> dict[str, int]:
    """Outcomes and how each decision was taken, from a navigate log."""
    counts = dict.fromkeys(("success", "death", "timeout", "steps", "move_calls", "fallbacks", "extra_calls"), 0)
    for sample in log.samples or []:
        for score in (sample.scores or {}).values():
            rec = score.metadata or {}
            if "outcome" not in rec:
                continue
            counts[rec["outcome"]] = counts.get(rec["outcome"], 0) + 1
            counts["steps"] += rec["steps"]
            counts["fallbacks"] += len(rec["fallbacks"])
            counts["move_calls"] += rec["steps"] - len(rec["fallbacks"])
            counts["extra_calls"] += rec["extra_calls"]
    return counts


def detection_counts(log: Any) -> dict[str, int]:
    """Pooled confusion and parse counts from a detect log."""
    keys = ("tp", "fp", "fn", "tn", "entries", "parse_failures", "calls")
    counts = dict.fromkeys(keys, 0)
    for sample in log.samples or []:
        for score in (sample.scores or {}).values():
            value = score.value if isinstance(score.value, dict) else {}
            for key in keys:
                counts[key] += int(value.get(key, 0))
    return counts


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
            c = detection_counts(log)
            lines.append(
                f"  entries {c['entries']} (tp {c['tp']}, fp {c['fp']}, fn {c['fn']}, tn {c['tn']}), "
                f"{c['parse_failures']} without a usable verdict, {c['calls']} audit calls"
            )
        else:
            c = navigation_counts(log)
            lines.append(
                f"  episodes: {c['success']} success, {c['death']} death, {c['timeout']} timeout; "
                f"{c['steps']} steps = {c['move_calls']} move calls + {c['fallbacks']} fallbacks"
            )
        lines.append(f"  log: {log.location}")
    return "\n".join(lines)


def main(args: argparse.Namespace | None = None) -> int:
    if args is None:
        parser = argparse.ArgumentParser(prog="spatialstale quickstart", description=__doc__)
        add_arguments(parser)
        args = parser.parse_args()
    began = time.perf_counter()
    logs: list[Any] = []
    with _sigterm_as_interrupt():
        if args.model:
            logs = run_evals(args.model, args.log_dir, args.limit, args.max_steps, args.max_tokens)
        else:
            local_model.check_ready()
            print("starting the local model server (SmolLM2-135M-Instruct, llama-cpp-python)...", flush=True)
            t0 = time.perf_counter()
            with local_model.running_server(args.port) as server:
                print(
                    f"server up in {time.perf_counter() - t0:.1f} s at {server.base_url} (PID {server.pid})", flush=True
                )
                logs = run_evals(
                    local_model.INSPECT_MODEL,
                    args.log_dir,
                    args.limit,
                    args.max_steps,
                    args.max_tokens,
                    model_base_url=server.base_url,
                )
            print("server stopped", flush=True)
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
