"""Tokens and model calls per detection instance at B = 1, 10, 20 (and 64),
measured with a scripted auditor, beside the paper's GPT-4o figures.

    python benchmarks/detect_tokens.py [--model spatialstale/observer] [--regime L1]

Scripted agents count tokens as documented in spatialstale_evals/scripted/api.py
(ceil(chars / 4), images 255); for a real model pass its --model and the
provider's own usage is reported instead.
"""

from __future__ import annotations

import argparse
import tempfile

from inspect_ai import eval as inspect_eval

from spatialstale_evals import paper
from spatialstale_evals.detect import detect


def paper_cost(batch_size: int) -> tuple[str, str]:
    """The paper's (calls, tokens) per instance at ``batch_size``, as printed; '-' where it reports none."""
    if batch_size not in paper.DETECTION_COST:
        return "-", "-"
    calls, tokens = paper.DETECTION_COST[batch_size]
    return str(calls), f"{tokens / 1000:.1f}k"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="spatialstale/observer")
    parser.add_argument("--regime", default="L1")
    parser.add_argument("--modality", default="text")
    parser.add_argument("--batch-sizes", default="1,10,20,64")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as log_dir:
        for b in (int(x) for x in args.batch_sizes.split(",")):
            task = detect(regime=args.regime, modality=args.modality, batch_size=b)
            (log,) = inspect_eval(task, model=args.model, log_dir=log_dir, display="none")
            samples = log.samples or []
            usage = [sum(u.total_tokens for u in s.model_usage.values()) for s in samples]
            inputs = [sum(u.input_tokens for u in s.model_usage.values()) for s in samples]
            calls = [s.scores["detection_scorer"].value["calls"] for s in samples]
            f1 = log.results.scores[0].metrics["f1"].value if log.results else float("nan")
            paper_calls, paper_tokens = paper_cost(b)
            rows.append(
                f"| {b} | {sum(calls) / len(calls):.1f} | {sum(inputs) / len(inputs) / 1000:.1f}k "
                f"| {sum(usage) / len(usage) / 1000:.1f}k | {f1:.3f} | {paper_calls} | {paper_tokens} |"
            )
    print(f"Detection cost per instance ({args.model}, {args.regime}, {args.modality}, 50 instances)\n")
    print(
        "| B | calls / instance | input tokens / instance | total tokens / instance | F1 "
        "| paper calls (GPT-4o) | paper tokens (GPT-4o) |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
