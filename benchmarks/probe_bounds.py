"""The probe task's scripted bounds (docs/tasks.md, "probe"): every
dimension's accuracy on stale targets, on controls and balanced, for the
``observer``, ``memory`` and ``random`` agents on the 50 canonical seeds of
L1-L3 (text), with model calls and tokens per instance and the wall time.

    python benchmarks/probe_bounds.py [--log-dir logs/probe-bounds]
"""

from __future__ import annotations

import argparse
import time

from inspect_ai import eval as inspect_eval

from spatialstale_evals.probe import probe

COLUMNS = [
    "state_resolution",
    "explicit_control",
    "explicit_balanced",
    "premise_resistance",
    "premise_control",
    "premise_balanced",
    "policy_adaptation",
    "implicit_control",
    "implicit_balanced",
    "implicit_skipped_rate",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log-dir", default="logs/probe-bounds")
    args = parser.parse_args()
    print("| agent | regime | " + " | ".join(COLUMNS) + " | calls / instance | tokens / instance | wall s |")
    print("|---" * (len(COLUMNS) + 5) + "|")
    for model in ("observer", "memory", "random"):
        for regime in ("L1", "L2", "L3"):
            start = time.perf_counter()
            task, name = probe(regime=regime), f"spatialstale/{model}"
            log = inspect_eval(task, model=name, display="none", log_dir=args.log_dir)[0]
            wall = time.perf_counter() - start
            metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
            n = len(log.samples)
            calls = sum(1 for s in log.samples for e in s.events if e.event == "model") / n
            tokens = sum(u.input_tokens + u.output_tokens for s in log.samples for u in s.model_usage.values()) / n
            cells = " | ".join(f"{metrics[k]:.3f}" for k in COLUMNS)
            print(f"| {model} | {regime} | {cells} | {calls:.1f} | {tokens:.0f} | {wall:.1f} |", flush=True)


if __name__ == "__main__":
    main()
