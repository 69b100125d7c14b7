"""What a stale run costs (docs/tasks.md, "stale"): scenarios, model calls
and tokens of the task's own prompts on a STALE file, counted as the scripted
provider counts them (4 characters a token), per scenario and in all, for
both conversation modes; and the history before and after trimming.

    python benchmarks/stale_cost.py --path tests/fixtures/stale_mini.json
    python benchmarks/stale_cost.py --path T1_T2_400_FULL.json --context-tokens 96000

Agent input tokens are exact for any model in ``independent`` mode (they do not
depend on the answers); the answers here are the scripted ``stale-aware``
agent's, so output tokens, the judge's input and ``shared`` mode grow with a
real model's longer answers (add about 3 x the answer length per scenario).
"""

from __future__ import annotations

import argparse
import time

from spatialstale_evals.probing.probes import CONVERSATIONS
from spatialstale_evals.runs.cost import estimate_stale
from spatialstale_evals.stale import DEFAULT_CONTEXT_TOKENS, stale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", required=True, help="a STALE JSON file")
    parser.add_argument("--context-tokens", type=int, default=DEFAULT_CONTEXT_TOKENS)
    args = parser.parse_args()
    start = time.perf_counter()
    task = stale(path=args.path, context_tokens=args.context_tokens)
    trims = [s.metadata["trim"] for s in task.dataset if s.metadata]
    full = sum(t["history_tokens_full"] for t in trims) / len(trims)
    kept = sum(t["history_tokens"] for t in trims) / len(trims)
    over = sum(t["over_budget"] for t in trims)
    print(f"{len(trims)} scenarios; history per scenario: {full:,.0f} tokens in the file, {kept:,.0f} shown")
    print(f"(budget {args.context_tokens:,}; {over} scenario(s) whose relevant sessions alone exceed it)\n")
    columns = ["conversation", "role", "calls / scenario", "input tokens / scenario", "output tokens / scenario"]
    print("| " + " | ".join([*columns, "input tokens, all"]) + " |")
    print("|---|---|---|---|---|---|")
    for conversation in CONVERSATIONS:
        n, agent, judge = estimate_stale(path=args.path, context_tokens=args.context_tokens, conversation=conversation)
        for role, cost in (("agent", agent), ("grader", judge)):
            print(
                f"| {conversation} | {role} | {cost.calls / n:.1f} | {cost.input_tokens / n:,.0f} | "
                f"{cost.output_tokens / n:,.0f} | {cost.input_tokens:,} |"
            )
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
