"""The scripted reference agents over the whole benchmark: detection F1 per
regime x modality and navigation outcomes per regime x strategy.

    python benchmarks/reference_table.py [--policies observer,memory,random] [--epochs 1]
        [--log-dir logs/reference] [--modality text]

``observer`` and ``memory`` are deterministic, so one epoch is their exact
value; ``random`` draws per (sample, epoch, prompt) from ``-M seed`` (0 here).
"""

from __future__ import annotations

import argparse
import time

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from spatialstale_evals.detect import detect
from spatialstale_evals.navigate import navigate
from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.world.regimes import REGIMES


def _metrics(log: EvalLog) -> dict[str, float]:
    return {k: m.value for k, m in log.results.scores[0].metrics.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--policies", default="observer,memory,random")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--modality", default="text", help="navigation modality")
    parser.add_argument("--log-dir", default="logs/reference")
    args = parser.parse_args()
    detect_rows, nav_rows = [], []
    for policy in args.policies.split(","):
        model = f"spatialstale/{policy}"
        start = time.perf_counter()
        tasks = [detect(regime=r, modality=m) for r in REGIMES.keys() for m in ("text", "image")]
        logs = inspect_eval(tasks, model=model, log_dir=args.log_dir, display="none", max_tasks=4)
        for log in logs:
            a, m = log.eval.task_args, _metrics(log)
            detect_rows.append(
                f"| {policy} | {a['regime']} | {a['modality']} | {m['precision']:.3f} | {m['recall']:.3f} "
                f"| {m['f1']:.3f} | {m['thaw_recall']:.3f} | {m['freeze_recall']:.3f} |"
            )
        detect_time = time.perf_counter() - start
        start = time.perf_counter()
        tasks = [
            navigate(regime=r, strategy=s, modality=args.modality, epochs=args.epochs)
            for r in REGIMES.keys()
            for s in STRATEGIES
        ]
        logs = inspect_eval(tasks, model=model, log_dir=args.log_dir, display="none", max_tasks=4)
        for log in logs:
            a, m = log.eval.task_args, _metrics(log)
            nav_rows.append(
                f"| {policy} | {a['regime']} | {a['strategy']} | {m['success_rate']:.1%} | {m['death_rate']:.1%} "
                f"| {m['timeout_rate']:.1%} | {m['death_on_stale_rate']:.1%} | {m['steps_success']:.1f} "
                f"| {m['steps_death']:.1f} |"
            )
        print(f"{model}: detect {detect_time:.0f} s, navigate {time.perf_counter() - start:.0f} s", flush=True)
    print("\n| agent | regime | modality | precision | recall | F1 | thaw recall | freeze recall |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(detect_rows))
    print(
        "\n| agent | regime | strategy | success | death | timeout | death on stale | steps (success) "
        "| steps (death) |\n|---|---|---|---|---|---|---|---|---|"
    )
    print("\n".join(nav_rows))


if __name__ == "__main__":
    main()
