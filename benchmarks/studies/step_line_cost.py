"""What one transcript line per navigation step costs (docs/performance.md,
"What the extra is").

    python benchmarks/studies/step_line_cost.py [--pairs 9] [--samples 50] [--calls 14]

The navigate loop logs one ``transcript().info`` string per step
(``navigation/episode.step_line``) after the step's model call. Its cost is too
small to resolve in ``benchmarks/perf.py``'s overhead ratio on a shared
machine (the pairs there spread by +-20 %), so this measures it alone: the
bare Inspect loop of ``perfbench/overhead.py`` (``--samples`` samples of
``--calls`` ``generate`` calls, prompts of navigate's text sizes, the
``perfbench/fixed`` provider), run with and without one step line of a
navigate step's length after each call, alternately, with garbage collected
before each run. It prints the median ratio of the paired wall times and
the extra milliseconds per call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

# The bare loop and its provider are perf.py's, in ``benchmarks/perfbench``.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageSystem, GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from perfbench import providers  # noqa: F401 - registers the perfbench/<name> models with Inspect
from perfbench.overhead import bare_user_message, numbered
from perfbench.runner import run_eval

from spatialstale_evals.navigation.loop import MOVE_TOOL, STEP_SOURCE

#: navigate's text prompt sizes (``perf.py``'s calibration: 481 and 4,080 characters).
SYSTEM_CHARS, USER_CHARS = 481, 4080
#: A step line as long as a typical one ("step 12: (3,4) DOWN -> (4,4), 38 steps left").
LINE = "step {i}: (3,4) DOWN -> (4,4), 38 steps left"


@solver
def loop(lines: bool) -> Solver:
    config = GenerateConfig(parallel_tool_calls=False)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model, offset = get_model(), state.metadata["offset"]
        system = ChatMessageSystem(content=numbered(offset, SYSTEM_CHARS))
        for i in range(state.metadata["calls"]):
            user = bare_user_message(offset + i, USER_CHARS, None)
            await model.generate([system, user], tools=[MOVE_TOOL], tool_choice="auto", config=config)
            if lines:
                transcript().info(LINE.format(i=i + 1), source=STEP_SOURCE)
        return state

    return solve


def task(samples: int, calls: int, lines: bool) -> Task:
    meta = [{"calls": calls, "offset": i * calls} for i in range(samples)]
    data = [Sample(id=f"s{i:03d}", input="bare", metadata=m) for i, m in enumerate(meta)]
    return Task(dataset=MemoryDataset(data, name="bare"), solver=loop(lines), name="step_lines" if lines else "bare")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--calls", type=int, default=14, help="calls per sample (the observer's mean L2 episode: 14)")
    args = parser.parse_args()
    ratios, extra_ms = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for p in range(args.pairs + 1):  # the first pair warms up and is not counted
            runs = {}
            for lines in (False, True) if p % 2 else (True, False):
                side = task(args.samples, args.calls, lines)
                runs[lines] = run_eval(side, "perfbench/fixed", Path(tmp) / f"{p}-{lines}")
            if p:
                ratios.append(runs[True].wall_s / runs[False].wall_s)
                extra_ms.append(1000 * (runs[True].wall_s - runs[False].wall_s) / (args.samples * args.calls))
    print(f"{args.pairs} pairs of {args.samples} samples x {args.calls} calls")
    print(f"wall time with / without a step line per call: median {statistics.median(ratios):.3f}")
    print(f"  (pairs {min(ratios):.3f} .. {max(ratios):.3f}); extra per call: {statistics.median(extra_ms):.3f} ms")


if __name__ == "__main__":
    main()
