"""Meta-evaluation of the stale task's rubric (docs/tasks.md, "stale"):
how often a grader, prompted exactly as the task prompts it, agrees with our
hand labels on the fixture's answers (``tests/fixtures/stale_mini_labels.json``:
for every record and dimension an answer written to pass and one written to
fail, and for dim1 also a hedge that passes and a fail by claimed ignorance).
One judge call per record and label set (its pass answers, its fail answers,
its hedge, its ignorance), with the task's own prompt.

    python benchmarks/stale_rubric_agreement.py --grader spatialstale/judge
    python benchmarks/stale_rubric_agreement.py --grader openai/gpt-4o-mini

Prints agreement per dimension (exact counts), Cohen's kappa over all answers,
and the judge failures (unscored: left out of the agreement).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from inspect_ai.model import get_model

from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS, load_corpus
from spatialstale_evals.stale_corpus.scoring import judge, judge_messages

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"


def kappa(pairs: list[tuple[bool, bool]]) -> float:
    """Cohen's kappa of (label, verdict) pairs (NaN with none)."""
    n = len(pairs)
    if not n:
        return float("nan")
    observed = sum(a == b for a, b in pairs) / n
    p_label, p_verdict = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    chance = p_label * p_verdict + (1 - p_label) * (1 - p_verdict)
    return (observed - chance) / (1 - chance) if chance < 1 else float("nan")


async def agreement(grader: str) -> None:
    records = {r.uid: r for r in load_corpus(FIXTURES / "stale_mini.json").records}
    labels = json.loads((FIXTURES / "stale_mini_labels.json").read_text(encoding="utf-8"))
    model = get_model(grader)
    pairs: dict[str, list[tuple[bool, bool]]] = {d: [] for d in STALE_DIMENSIONS}
    failures = 0
    for uid, dims in labels.items():
        r = records[uid]
        meta = {"m_old": r.m_old, "m_new": r.m_new, "explanation": r.explanation}
        for k in range(max(len(v) for v in dims.values())):
            labelled = {d: v[k] for d, v in dims.items() if k < len(v)}
            answers = {d: {"query": r.queries[d], "answer": a["answer"]} for d, a in labelled.items()}
            verdicts, _ = await judge(model, judge_messages(meta, answers), list(answers))
            for d, a in labelled.items():
                if verdicts.passes[d] is None:
                    failures += 1
                else:
                    pairs[d].append((a["label"] == "pass", bool(verdicts.passes[d])))
    print(f"grader {grader}: agreement with the hand labels")
    print("| dimension | agree | judged | of |\n|---|---|---|---|")
    for d, found in pairs.items():
        total = sum(len(dims[d]) for dims in labels.values())
        print(f"| {d} | {sum(a == b for a, b in found)} | {len(found)} | {total} |")
    everything = [p for found in pairs.values() for p in found]
    print(f"\nCohen's kappa over {len(everything)} judged answers: {kappa(everything):.3f}; unscored: {failures}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grader", required=True, help="the model to grade with, e.g. openai/gpt-4o-mini")
    asyncio.run(agreement(parser.parse_args().grader))


if __name__ == "__main__":
    main()
