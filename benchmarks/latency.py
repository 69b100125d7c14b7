"""Does the harness keep a slow provider busy? (README, Performance: "A slow
provider".) Calls per second of a ``navigate`` run and of a small
``spatialstale matrix`` against the scripted provider made to answer like a
remote API (``-M latency_ms=L``: every call waits L ms), beside the ideal
C / L of ``--max-connections C`` connections always busy.

    python benchmarks/latency.py [--latencies 100,500] [--connections 10,50] [--episodes-per-connection 4]

Navigation steps wait for each other, so the parallelism is the episodes': a
run gets ``episodes-per-connection`` x C episodes (``omcd``, L2, the scripted
``observer``: 7 audit calls, then about 14 moves) and ``max_samples`` C, so
as many episodes as connections are in flight. Efficiency = achieved / ideal;
what it loses is the tail (the last episodes run with fewer in flight) and
the harness's own time between calls. The matrix case runs detect and the
five paper strategies on L1 (one seed each per connection) with
``max_tasks`` = the number of tasks, so that small tasks share the
connections instead of running one after another.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from spatialstale_evals.navigate import navigate
from spatialstale_evals.runs.matrix import MatrixSpec, plan, run_matrix

REGIME = "L2"


def model_calls(logs: list) -> int:  # type: ignore[type-arg]
    """Model events over every sample (``eval_set`` returns headers: those are read whole)."""
    full = [log if log.samples else read_eval_log(log.location) for log in logs]
    return sum(1 for log in full for s in log.samples or [] for e in s.events if e.event == "model")


def navigate_rate(latency_ms: int, connections: int, per_connection: int) -> tuple[int, float]:
    """(calls, seconds) of one navigate run of per_connection x C episodes."""
    epochs = max(1, math.ceil(per_connection * connections / 50))
    episodes = per_connection * connections
    with tempfile.TemporaryDirectory() as log_dir:
        task = navigate(regime=REGIME, strategy="omcd", epochs=epochs)
        start = time.perf_counter()
        (log,) = inspect_eval(
            task,
            model="spatialstale/observer",
            model_args={"latency_ms": latency_ms},
            max_connections=connections,
            max_samples=connections,
            limit=math.ceil(episodes / epochs),
            log_dir=log_dir,
            display="none",
        )
        seconds = time.perf_counter() - start
        if log.status != "success":
            raise RuntimeError(log.error)
        return model_calls([log]), seconds


def matrix_rate(latency_ms: int, connections: int) -> tuple[int, int, float]:
    """(tasks, calls, seconds) of a small matrix: detect and the paper's five strategies on L1."""
    spec = MatrixSpec(
        models=["spatialstale/observer"], regimes=["L1"], modalities=["text"], seeds=connections, epochs=1
    )
    tasks = len(plan(spec, estimate=False))
    with tempfile.TemporaryDirectory() as log_dir:
        start = time.perf_counter()
        ok, logs = run_matrix(
            spec,
            log_dir,
            model_args={"latency_ms": latency_ms},
            max_connections=connections,
            max_tasks=tasks,
            display="none",
        )
        seconds = time.perf_counter() - start
        if not ok:
            raise RuntimeError("the matrix did not finish")
        return tasks, model_calls(logs), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latencies", default="100,500")
    parser.add_argument("--connections", default="10,50")
    parser.add_argument("--episodes-per-connection", type=int, default=4)
    parser.add_argument("--only", choices=["navigate", "matrix"], help="run one of the two cases")
    args = parser.parse_args()
    print("| run | L (ms) | C | calls | seconds | calls / s | ideal C / L | efficiency |")
    print("|---|---|---|---|---|---|---|---|")
    for latency in (int(x) for x in args.latencies.split(",")):
        for connections in (int(x) for x in args.connections.split(",")):
            ideal = connections / (latency / 1000)
            if args.only != "matrix":
                calls, seconds = navigate_rate(latency, connections, args.episodes_per_connection)
                label = f"navigate {REGIME} omcd, {args.episodes_per_connection * connections} episodes"
                print(
                    f"| {label} | {latency} | {connections} | {calls} | {seconds:.1f} | {calls / seconds:.1f} "
                    f"| {ideal:.0f} | {calls / seconds / ideal:.0%} |"
                )
            if args.only == "navigate":
                continue
            tasks, calls, seconds = matrix_rate(latency, connections)
            print(
                f"| matrix L1: {tasks} tasks, {connections} seeds, max_tasks {tasks} | {latency} | {connections} "
                f"| {calls} | {seconds:.1f} | {calls / seconds:.1f} | {ideal:.0f} | {calls / seconds / ideal:.0%} |"
            )


if __name__ == "__main__":
    main()
