"""Wall time of the full paper matrix for one model, and where it goes.

    python benchmarks/matrix_time.py [--model spatialstale/observer] [--log-dir DIR] [--calls]
                                     [-- MATRIX OPTIONS ...]
    python benchmarks/matrix_time.py --profile 5 [--json FILE]     # where the CPU time goes

Runs ``spatialstale matrix --model M --log-dir DIR --display none`` (plus any
options after ``--``, e.g. ``-- --seeds 10 --epochs 1`` or ``-- --max-tasks
4``) as a subprocess, in a fresh log folder (a folder that already holds the
matrix would resume it and measure nothing), and reports:

- the wall time of the command, its CPU time (user + system of the child
  processes, ``resource.getrusage(RUSAGE_CHILDREN)``) and their ratio: near
  100 % of one core means the run is bound by one Python process's work;
- the machine's load average, sampled every 5 s while it runs (the machine
  is shared: a load above the core count inflates the wall time);
- the time line read from the logs: start-up (command start to the first
  task's start: imports, planning, ``eval_set``), the tasks' span, the end
  (last task's end to the command's exit), the mean number of tasks running,
  and per task family the summed task wall time and samples; with
  ``--calls``, the model calls of every task (read from the logs after the
  run, outside the timed part).

``--profile N`` instead runs the matrix on the first N seeds in this process
under ``cProfile`` (slower than a plain run: the figures are for comparing
areas) and prints its own time by code area (``perfbench/profiling.py``'s
areas: a module of this package, an ``inspect_ai`` subpackage, a third-party
distribution, a builtin), the garbage collector's CPU time apart (its passes
are otherwise counted in whatever function allocated when one began), and the
CPU time of the same run without the profiler.

The default model is the scripted ``observer``: it plans a shortest path on
what it sees (0.2 ms per text call, about 1 ms per image call with the
decoded-image cache), so the run measures the harness, not an agent.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_samples


class LoadSampler:
    """The 1-minute load average every ``period`` seconds, in a thread."""

    def __init__(self, period: float = 5.0) -> None:
        self.period, self.samples = period, [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_matrix(model: str, log_dir: Path, extra: list[str]) -> dict[str, Any]:
    """Run the matrix command; its wall and CPU seconds, load, exit code."""
    cmd = [sys.executable, "-m", "spatialstale_evals.cli", "matrix", "--model", model, "--log-dir", str(log_dir)]
    cmd += ["--display", "none", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began_at = time.time()
    start = time.perf_counter()
    with LoadSampler() as load:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"the matrix command failed ({proc.returncode})")
    return {
        "command": " ".join(cmd[2:]),
        "began_at": began_at,
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_share": cpu / wall,
        "load": {"min": min(load.samples), "mean": sum(load.samples) / len(load.samples), "max": max(load.samples)},
        "cores": os.cpu_count(),
        "max_rss_mb": after.ru_maxrss / 1024,
        "stdout_tail": proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else [],
    }


def _ts(value: str) -> float:
    return datetime.fromisoformat(value).timestamp()


def family_of(task: str) -> str:
    return task.split("/")[-1].split("_")[0]


def timeline(log_dir: Path, run: dict[str, Any], calls: bool) -> dict[str, Any]:
    """Per-task spans from the logs' headers, and what they add up to."""
    tasks = []
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info, header_only=True)
        args = log.eval.task_args
        name = " ".join(str(args.get(k)) for k in ("regime", "strategy", "modality") if args.get(k) is not None)
        row = {
            "task": f"{log.eval.task.split('/')[-1]} {name}",
            "family": log.eval.task.split("/")[-1],
            "start": _ts(log.stats.started_at),
            "end": _ts(log.stats.completed_at),
            "samples": log.results.total_samples if log.results else 0,
        }
        if calls:
            samples = read_eval_log_samples(info, all_samples_required=False)
            row["calls"] = sum(1 for s in samples for e in s.events if e.event == "model")
        tasks.append(row)
    if not tasks:
        return {"tasks": []}
    first, last = min(t["start"] for t in tasks), max(t["end"] for t in tasks)
    span = last - first
    busy = sum(t["end"] - t["start"] for t in tasks)
    families: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for t in tasks:
        fam = families[t["family"]]
        fam["tasks"] += 1
        fam["task_s"] += t["end"] - t["start"]
        fam["samples"] += t["samples"]
        fam["calls"] += t.get("calls", 0)
    return {
        "startup_s": first - run["began_at"],
        "tasks_span_s": span,
        "end_s": run["began_at"] + run["wall_s"] - last,
        "mean_tasks_running": busy / span if span else 0.0,
        "families": {k: dict(v) for k, v in families.items()},
        "tasks": sorted(
            ({**t, "start": t["start"] - first, "end": t["end"] - first} for t in tasks), key=lambda t: t["start"]
        ),
    }


def report(run: dict[str, Any], times: dict[str, Any]) -> str:
    load = run["load"]
    lines = [
        f"command: {run['command']}",
        f"wall {run['wall_s']:.1f} s ({run['wall_s'] / 60:.1f} min), CPU {run['cpu_s']:.1f} s "
        f"({100 * run['cpu_share']:.0f} % of one core), peak RSS {run['max_rss_mb']:.0f} MB",
        f"load average (1 min) during the run: {load['min']:.2f} - {load['max']:.2f}, mean {load['mean']:.2f} "
        f"on {run['cores']} cores",
    ]
    if times.get("tasks"):
        lines += [
            f"start-up {times['startup_s']:.1f} s, tasks {times['tasks_span_s']:.1f} s "
            f"(mean {times['mean_tasks_running']:.1f} running), end {times['end_s']:.1f} s",
            "",
        ]
        counted = any(fam["calls"] for fam in times["families"].values())  # --calls: else no column
        head = ["family", "tasks", "samples", *(["calls"] if counted else []), "summed task wall (s)"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for name, fam in sorted(times["families"].items()):
            calls = [f"{fam['calls']:.0f}"] if counted else []
            cells = [name, f"{fam['tasks']:.0f}", f"{fam['samples']:.0f}", *calls, f"{fam['task_s']:.1f}"]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def profile_matrix(model: str, seeds: int, log_dir: Path) -> dict[str, Any]:
    """The matrix on ``seeds`` seeds in this process: CPU time plain, then own
    time by area under cProfile, and the collector's CPU time in each."""
    import cProfile
    import gc

    from perfbench.profiling import profile_areas

    from spatialstale_evals.runs.matrix import MatrixSpec, run_matrix

    collector = {"s": 0.0, "passes": 0}
    began = [0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            began[0] = time.process_time()
        else:
            collector["s"] += time.process_time() - began[0]
            collector["passes"] += 1

    out: dict[str, Any] = {"seeds": seeds}
    gc.callbacks.append(on_gc)
    try:
        for label in ("plain", "profiled"):
            collector.update(s=0.0, passes=0)
            prof = cProfile.Profile() if label == "profiled" else None
            wall, cpu = time.perf_counter(), time.process_time()
            if prof:
                prof.enable()
            ok, _ = run_matrix(MatrixSpec(models=[model], seeds=seeds), log_dir / label, display="none")
            if prof:
                prof.disable()
            out[label] = {"ok": ok, "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
            out[label] |= {"gc_s": collector["s"], "gc_passes": collector["passes"]}
            if prof:
                areas, _ = profile_areas(prof)
                out["areas"] = dict(sorted(areas.items(), key=lambda kv: -kv[1])[:25])
    finally:
        gc.callbacks.remove(on_gc)
    return out


def profile_report(res: dict[str, Any]) -> str:
    plain, profiled = res["plain"], res["profiled"]
    total = sum(res["areas"].values())
    lines = [
        f"matrix on {res['seeds']} seeds, in process: wall {plain['wall_s']:.1f} s, CPU {plain['cpu_s']:.1f} s, "
        f"of which the garbage collector {plain['gc_s']:.1f} s ({plain['gc_passes']} passes)",
        f"under cProfile: CPU {profiled['cpu_s']:.1f} s; own time by area (top 25 of {total:.1f} s):",
        "",
        "| area | own s | share |",
        "|---|---|---|",
    ]
    lines += [f"| {a} | {t:.2f} | {100 * t / total:.0f} % |" for a, t in res["areas"].items()]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="spatialstale/observer")
    parser.add_argument("--log-dir", type=Path, default=None, help="a new folder (default: a temporary one)")
    parser.add_argument("--calls", action="store_true", help="count every task's model calls from its log")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--profile", type=int, default=None, metavar="N", help="profile N seeds in process instead")
    args, extra = parser.parse_known_args()
    extra = [e for e in extra if e != "--"]
    if args.profile is not None:
        with tempfile.TemporaryDirectory(prefix="spatialstale-matrix-") as tmp:
            res = profile_matrix(args.model, args.profile, Path(tmp))
        print(profile_report(res))
        if args.json:
            args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
        return
    with tempfile.TemporaryDirectory(prefix="spatialstale-matrix-") as tmp:
        log_dir = args.log_dir or Path(tmp) / "logs"
        if log_dir.exists() and any(log_dir.iterdir()):
            raise SystemExit(f"{log_dir} is not empty: the matrix would resume, not run")
        run = run_matrix(args.model, log_dir, extra)
        times = timeline(log_dir, run, args.calls)
    print(report(run, times))
    if args.json:
        args.json.write_text(json.dumps({"run": run, "timeline": times}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
