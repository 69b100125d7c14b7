"""Does the harness keep a slow provider busy? (docs/performance.md: "A slow
provider".) Calls per second of a ``navigate`` run and of a small
``spatialstale matrix`` against the scripted provider made to answer like a
remote API (``-M latency_ms=L``: every call waits L ms), beside the ideal
C / L of ``--max-connections C`` connections always busy.

    python benchmarks/latency.py [--latencies 100,500] [--connections 10,50] [--episodes-per-connection 4]
                                 [--samples-per-connection 1,2] [--only navigate|matrix] [--no-log-realtime]

Navigation steps wait for each other, so the parallelism is the episodes': a
run gets ``episodes-per-connection`` x C episodes (``omcd``, L2, the scripted
``observer``: 7 audit calls, then about 14 moves) and ``max_samples`` =
``samples-per-connection`` x C episodes in flight (with 1, a connection idles
while its episode builds its next prompt; with 2, another episode's call can
take it). Efficiency = achieved / ideal. The process's CPU time is recorded
beside the wall time: near 100 % of one core, the run is bound by the
harness's own work per call, not by the provider. The matrix case runs detect
and the five paper strategies on L1 (C seeds each) with ``max_tasks`` = the
number of tasks (``eval_set``'s own default, the greater of 10 and the number
of models, already lets six run at once: stated, not relied on). The matrix
runs without Inspect's realtime sample buffer (its default); navigate, as
``inspect eval`` runs it, with it, unless ``--no-log-realtime``.
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
from spatialstale_evals.world import dataset

REGIME = "L2"


def model_calls(logs: list) -> int:  # type: ignore[type-arg]
    """Model events over every sample (``eval_set`` returns headers: those are read whole)."""
    full = [log if log.samples else read_eval_log(log.location) for log in logs]
    return sum(1 for log in full for s in log.samples or [] for e in s.events if e.event == "model")


def navigate_rate(
    latency_ms: int, connections: int, per_connection: int, in_flight: int, realtime: bool = True
) -> tuple[int, float, float]:
    """(calls, wall seconds, CPU seconds) of one navigate run of per_connection x C episodes."""
    episodes = per_connection * connections
    seeds = len(dataset.load(None, REGIME))
    epochs = max(1, math.ceil(episodes / seeds))  # the seeds first, then more episodes of each
    with tempfile.TemporaryDirectory() as log_dir:
        task = navigate(regime=REGIME, strategy="omcd", epochs=epochs)
        start, cpu = time.perf_counter(), time.process_time()
        (log,) = inspect_eval(
            task,
            model="spatialstale/observer",
            model_args={"latency_ms": latency_ms},
            max_connections=connections,
            max_samples=in_flight * connections,
            limit=math.ceil(episodes / epochs),
            log_dir=log_dir,
            display="none",
            log_realtime=realtime,
        )
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        if log.status != "success":
            raise RuntimeError(log.error)
        return model_calls([log]), seconds, cpu


def matrix_rate(latency_ms: int, connections: int) -> tuple[int, int, float, float]:
    """(tasks, calls, wall seconds, CPU seconds) of a small matrix: detect and the paper's five strategies on L1."""
    spec = MatrixSpec(
        models=["spatialstale/observer"], regimes=["L1"], axes={"modalities": ["text"]}, seeds=connections, epochs=1
    )
    tasks = len(plan(spec, estimate=False))
    with tempfile.TemporaryDirectory() as log_dir:
        start, cpu = time.perf_counter(), time.process_time()
        ok, logs = run_matrix(
            spec,
            log_dir,
            model_args={"latency_ms": latency_ms},
            max_connections=connections,
            max_tasks=tasks,
            display="none",
        )
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        if not ok:
            raise RuntimeError("the matrix did not finish")
        return tasks, model_calls(logs), seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latencies", default="100,500")
    parser.add_argument("--connections", default="10,50")
    parser.add_argument("--episodes-per-connection", type=int, default=4)
    parser.add_argument("--samples-per-connection", default="1,2", help="max_samples / max_connections")
    parser.add_argument("--only", choices=["navigate", "matrix"], help="run one of the two cases")
    parser.add_argument("--no-log-realtime", action="store_true", help="navigate without the realtime sample buffer")
    args = parser.parse_args()
    print("| run | L (ms) | C | max_samples | calls | seconds | CPU | calls / s | ideal C / L | efficiency |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def row(label: str, latency: int, connections: int, samples: object, calls: int, wall: float, cpu: float) -> None:
        ideal = connections / (latency / 1000)
        print(
            f"| {label} | {latency} | {connections} | {samples} | {calls} | {wall:.1f} | {cpu / wall:.0%} "
            f"| {calls / wall:.1f} | {ideal:.0f} | {calls / wall / ideal:.0%} |"
        )

    realtime = not args.no_log_realtime
    for latency in (int(x) for x in args.latencies.split(",")):
        for connections in (int(x) for x in args.connections.split(",")):
            if args.only != "matrix":
                for k in (int(x) for x in args.samples_per_connection.split(",")):
                    calls, wall, cpu = navigate_rate(latency, connections, args.episodes_per_connection, k, realtime)
                    label = f"navigate {REGIME} omcd, {args.episodes_per_connection * connections} episodes"
                    label += "" if realtime else ", no realtime buffer"
                    row(label, latency, connections, k * connections, calls, wall, cpu)
            if args.only != "navigate":
                tasks, calls, wall, cpu = matrix_rate(latency, connections)
                label = f"matrix L1: {tasks} tasks, {connections} seeds, max_tasks {tasks}"
                row(label, latency, connections, "default", calls, wall, cpu)


if __name__ == "__main__":
    main()
