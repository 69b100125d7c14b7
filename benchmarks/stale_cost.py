"""What a stale run costs (docs/tasks.md, "stale"): scenarios, model calls
and tokens of the task's own prompts on a STALE file, counted as the scripted
provider counts them (4 characters a token), per scenario and in all, for
both conversation modes and both memory settings; and the history before and
after trimming.

    python benchmarks/stale_cost.py --path tests/fixtures/stale_mini.json
    python benchmarks/stale_cost.py --path T1_T2_400_FULL.json --context-tokens 96000
    python benchmarks/stale_cost.py --synthetic 400      # a corpus of the published file's shape

Agent input tokens are exact for any model in ``independent`` mode with the
history in the prompt (they do not depend on the answers); the answers here
are the scripted ``stale-aware`` agent's, so output tokens, the judge's input
and ``shared`` mode grow with a real model's longer answers (add about 3 x
the answer length per scenario). With ``memory_access=tool`` the haystack is
read only as far as the agent reads it: the rows give a low bound (one view of
the memory folder in every conversation: each probe's in ``independent`` mode,
the scenario's in ``shared``), the scripted ``stale-aware`` reader (exact for it)
and a high bound (the folder and every session file read once in every
conversation, no cap), each run through the task's own loop and the memory
tool's own answers (cut, as Inspect cuts any tool's output, at 16 KiB).

``--synthetic N`` writes N records of the shape STALE publishes for its file
(``T1_T2_400_FULL.json``: 400 records, about 306 MB, about 50 sessions each;
sister-studies notes) to a temporary file and counts that: 50 sessions of 10
turns, sized so that N = 400 records fill 306 MB (less a 3 % allowance for the
JSON around the text), the relevant sessions 10 and 40. What the real file's
sessions hold (their length spread, non-ASCII text) is not modelled: its
figures are an estimate to within that, not a count.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from spatialstale_evals.harness.params import CONVERSATIONS
from spatialstale_evals.runs.cost import stand_ins
from spatialstale_evals.stale import DEFAULT_CONTEXT_TOKENS, stale
from spatialstale_evals.stale_corpus.cost import stale_cost

#: The published file (sister-studies notes): its size, records and sessions per record.
PUBLISHED_BYTES, PUBLISHED_RECORDS, SESSIONS = 306_000_000, 400, 50
#: The share of the file that is the turns' text (the rest: keys, quotes, dates, probes).
TEXT_SHARE = 0.97
TURNS = 10
WORDS = "morning garden recipe travel budget weekend music project meeting library river market".split()


def synthetic_record(k: int, session_chars: int) -> dict[str, Any]:
    """A record of the published shape: 50 sessions of 10 turns of filler, the
    old state in session 10 and the new in session 40 (``relevant_session_index``)."""
    turn_chars = session_chars // TURNS
    filler = " ".join(WORDS[(k + i) % len(WORDS)] for i in range(turn_chars // 6 + 1))[:turn_chars]
    sessions = []
    for s in range(SESSIONS):
        turns = [{"role": "user" if t % 2 == 0 else "assistant", "content": filler} for t in range(TURNS)]
        if s in (10, 40):
            turns[0] = {"role": "user", "content": f"My commute is by {'bus' if s == 10 else 'bicycle'} now. {filler}"}
        sessions.append(turns)
    return {
        "uid": f"synthetic-{k:03d}",
        "M_old": "The user commutes by bus.",
        "M_new": "The user commutes by bicycle.",
        "explanation": "In session 40 the user says they commute by bicycle now.",
        "type": "T1" if k % 2 == 0 else "T2",
        "probing_queries": {
            "dim1_query": "How do I commute these days?",
            "dim2_query": "Since I take the bus, which bus pass should I buy?",
            "dim3_query": "It will rain tomorrow. How should I prepare my commute?",
        },
        "haystack_session": sessions,
        "timestamps": [f"2024/{1 + s // 28:02d}/{1 + s % 28:02d} (Mon) 10:00" for s in range(SESSIONS)],
        "relevant_session_index": [10, 40],
    }


def session_chars() -> int:
    """The text of one session of the published file, on average."""
    return int(PUBLISHED_BYTES * TEXT_SHARE / PUBLISHED_RECORDS / SESSIONS)


def write_synthetic(records: int, folder: Path) -> Path:
    path = folder / f"synthetic_{records}.json"
    path.write_text(json.dumps([synthetic_record(k, session_chars()) for k in range(records)]), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--path", help="a STALE JSON file")
    source.add_argument("--synthetic", type=int, metavar="N", help="N records of the published file's shape")
    parser.add_argument("--context-tokens", type=int, default=DEFAULT_CONTEXT_TOKENS)
    parser.add_argument(
        "--count", type=int, metavar="K", help="with --synthetic: count K records (they are alike) and scale (10)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        total = args.synthetic or 0
        if args.synthetic:
            size = len(json.dumps([synthetic_record(k, session_chars()) for k in range(2)])) / 2 * total
            counted = min(args.count or 10, total)
            print(f"synthetic corpus: {total} records, {size / 1e6:,.1f} MB; {counted} counted, totals scaled\n")
        path = args.path or str(write_synthetic(counted, Path(tmp)))
        report(path, args.context_tokens, total)
    print(f"\n{time.perf_counter() - start:.1f} s")


def report(path: str, context_tokens: int, scenarios: int = 0) -> None:
    """The table; ``scenarios``: the corpus's size when only some of its (alike) records are in ``path``."""
    task = stale(path=path, context_tokens=context_tokens)
    trims = [s.metadata["trim"] for s in task.dataset if s.metadata]
    full = sum(t["history_tokens_full"] for t in trims) / len(trims)
    kept = sum(t["history_tokens"] for t in trims) / len(trims)
    over = sum(t["over_budget"] for t in trims)
    print(f"{len(trims)} scenarios; history per scenario: {full:,.0f} tokens in the file, {kept:,.0f} shown")
    print(f"(budget {context_tokens:,}; {over} scenario(s) whose relevant sessions alone exceed it)\n")
    columns = ["memory", "conversation", "role", "calls / scenario", "input tokens / scenario"]
    print("| " + " | ".join([*columns, "output tokens / scenario", "input tokens, all"]) + " |")
    print("|---|---|---|---|---|---|---|")
    runs: list[tuple[str, dict[str, Any]]] = [("prompt", {"context_tokens": context_tokens})]
    runs += [(f"tool: {b or 'stale-aware'}", {"memory_access": "tool", "bound": b}) for b in ("low", None, "high")]
    for memory, extra in runs:
        for conversation in CONVERSATIONS:
            model, roles = stand_ins("stale")  # stale-aware and the judge
            n, agent, judge = stale_cost(model, roles["grader"], path=path, conversation=conversation, **extra)
            for role, cost in (("agent", agent), ("grader", judge)):
                if role == "grader" and memory.startswith("tool") and extra["bound"] is not None:
                    continue  # the judge's prompt is the same as for stale-aware's answers, up to their length
                print(
                    f"| {memory} | {conversation} | {role} | {cost.calls / n:.1f} | {cost.input_tokens / n:,.0f} | "
                    f"{cost.output_tokens / n:,.0f} | {cost.input_tokens * (scenarios or n) // n:,} |"
                )


if __name__ == "__main__":
    main()
