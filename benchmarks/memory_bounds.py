"""What the memory bounds cost and save (docs/memory.md, "Bounds"; issue 37).

Inside a real Inspect sample (Inspect records a store event after every tool
call by comparing the whole sample store, so a call's cost grows with the
store), N ``create`` calls in replies of ``--batch`` calls each (default 100,
the bound on ``max_memory_calls``; ``--batch N``: all in one reply, as
``react`` runs a reply), run by Inspect's ``execute_tools`` as the harness
runs them: with Inspect's plain ``memory()`` tool (``--before``: the store
grows with N, and each call's cost with it) and with ``bounded_memory()``
(the quota, 1,000 files added by default, ``--quota-files`` to see the effect
at a small size: the calls past it are refused, so the store and each call's
cost stop growing). Then the time
to score a store (the lifelong family's notes parser, ``parse_notes``) against
its size, up to the quota's 4 MiB: linear.

    python benchmarks/memory_bounds.py [--calls 500,1000,2000,4000] [--before] [--bytes-per-file 200]
                                       [--batch 100] [--quota-files 1000]

Prints one line per run: N, the tool, seconds, seconds per call, the files
stored and the writes refused. A benchmark, not a test: timings vary by
machine; the docs quote a run of it.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, execute_tools
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolCall, memory

from spatialstale_evals.harness.memory_quota import (
    MAX_MEMORY_CALLS,
    QUOTA_BYTES,
    QUOTA_FILES,
    MemoryQuota,
    bounded_memory,
)
from spatialstale_evals.harness.memory_tool import stored_files
from spatialstale_evals.lifetime.notes import parse_notes

RESULTS: list[dict[str, Any]] = []


@solver
def creates(n: int, bounded: bool, size: int, batch: int, quota: MemoryQuota):
    """``n`` creates of ``size``-byte notes in batches of ``batch`` (one reply's calls), timed."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        tool = bounded_memory(quota=quota) if bounded else memory()
        text = ("SAFE at (1,2)\n" * (size // 14 + 1))[:size]
        view = ToolCall(id="v", function="memory", arguments={"command": "view", "path": "/memories"})
        await execute_tools([ChatMessageAssistant(content="", tool_calls=[view])], [tool])  # imports, warm-up
        refused = 0
        start = time.perf_counter()
        for first in range(0, n, batch):
            calls = [ToolCall(id=f"c{i}", function="memory", arguments={"command": "create",
                              "path": f"/memories/n{i}.md", "file_text": text})
                     for i in range(first, min(n, first + batch))]  # fmt: skip
            result = await execute_tools([ChatMessageAssistant(content="", tool_calls=calls)], [tool])
            refused += sum(m.error is not None for m in result.messages if isinstance(m, ChatMessageTool))
        seconds = time.perf_counter() - start
        RESULTS.append({"n": n, "tool": "bounded_memory" if bounded else "memory", "seconds": seconds,
                        "files": len(stored_files()), "refused": refused})  # fmt: skip
        return state

    return solve


def run_creates(n: int, bounded: bool, size: int, batch: int, quota: MemoryQuota) -> dict[str, Any]:
    task = Task(dataset=[Sample(input="x")], solver=creates(n, bounded, size, batch, quota))
    inspect_eval(task, model="mockllm/model", display="none", log_dir="/tmp/memory_bounds_logs")
    return RESULTS[-1]


def scoring_times(sizes_kib: list[int]) -> list[tuple[int, float]]:
    """Seconds to parse a store of ``kib`` KiB of notes (files of 4 KiB)."""
    line = "SAFE at (1,2)\n"
    out = []
    for kib in sizes_kib:
        files = {f"/memories/n{i}.md": line * (4096 // len(line)) for i in range(kib // 4)}
        start = time.perf_counter()
        parse_notes(files, 8, 8)
        out.append((kib, time.perf_counter() - start))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", default="500,1000,2000,4000")
    parser.add_argument("--before", action="store_true", help="also time Inspect's plain memory() tool")
    parser.add_argument("--bytes-per-file", type=int, default=200)
    parser.add_argument("--batch", type=int, default=MAX_MEMORY_CALLS, help="calls per reply (the cap's bound)")
    parser.add_argument("--quota-files", type=int, default=QUOTA_FILES)
    args = parser.parse_args()
    quota = MemoryQuota(files=args.quota_files)
    print(f"batches of {args.batch} calls; quota {quota.files:,} files, {quota.bytes:,} bytes")
    print(f"{'calls':>6} {'tool':<15} {'seconds':>8} {'ms/call':>8} {'files':>6} {'refused':>8}")
    for n in (int(x) for x in args.calls.split(",")):
        for bounded in [False, True] if args.before else [True]:
            r = run_creates(n, bounded, args.bytes_per_file, args.batch, quota)
            print(f"{n:>6} {r['tool']:<15} {r['seconds']:>8.2f} {1000 * r['seconds'] / n:>8.2f} "
                  f"{r['files']:>6} {r['refused']:>8}", flush=True)  # fmt: skip
    print("\nscoring (lifelong parse_notes) against the store's size")
    for kib, seconds in scoring_times([256, 1024, 2048, QUOTA_BYTES // 1024]):
        print(f"{kib:>6} KiB {seconds:>8.3f} s {seconds / kib * 1024:>8.3f} s/MiB", flush=True)


if __name__ == "__main__":
    main()
