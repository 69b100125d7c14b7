"""What the quickstart's tasks cost the local model, in tokens and seconds: the
calibration of the quickstart's time estimates
(``spatialstale_evals/quickstart_calibration.json``).

    python benchmarks/quickstart_time.py [--limit 3] [--max-steps 10] [--write]

Starts the bundled SmolLM2 server, measures its speed (``local_model.speed``),
runs the quickstart's three tasks with ``--limit`` seeds / episodes, and
prints per task: its wall time beside the estimate the quickstart printed
(from the calibration file as it stands) and its error, and the mean tokens
per seed or episode read from the logs' model events: new prompt tokens
(``input_tokens``: llama.cpp counts the ones it did not find in its prompt
cache) and reply tokens. A navigate episode's tokens are split into a part per
episode (the audits, and the first step's prompt, which holds all 64 memory
notes) and a part per step (a later step's prompt, every step's reply).

From them it computes the calibration: the measured tokens, and per task the
factor, its measured seconds per sample (wall time / ``--limit``) over its
new tokens at the measured speed. ``--write`` replaces the calibration file
with them and what they were measured on (date, CPU, cores, load, server
speed, per-sample seconds); without it they are only printed. Run it on a
quiet machine of the kind the estimates are for (2 cores): wall times depend
on the load (printed with ``os.getloadavg``), token counts do not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import date
from typing import Any

from perfbench.runner import cpu_name

from spatialstale_evals import local_model, quickstart, quickstart_cost


def sample_tokens(sample: Any, navigate: bool) -> dict[str, float]:
    """One sample's tokens: per sample (``prompt``, ``output``) and, for an
    episode, per step (``step_prompt``, ``step_output``) and its ``steps``.
    In an episode the navigator's calls are the steps (the auditor has its
    role); in ``detect`` every call is an audit."""
    calls = [e for e in sample.events if e.event == "model"]
    audits = [e.output.usage for e in calls if e.role == "auditor" or not navigate]
    moves = [e.output.usage for e in calls if e.role != "auditor" and navigate]
    prompt = sum(u.input_tokens for u in audits)
    output = sum(u.output_tokens for u in audits)
    if not moves:
        return {"prompt": prompt, "output": output}
    later = [u.input_tokens for u in moves[1:]] or [0]
    step_prompt = statistics.mean(later)
    return {
        "prompt": prompt + moves[0].input_tokens - step_prompt,
        "output": output,
        "step_prompt": step_prompt,
        "step_output": statistics.mean(u.output_tokens for u in moves),
        "steps": len(moves),
    }


def calibration(
    measured: dict[str, dict[str, float]], seconds: dict[str, float], speed: local_model.Speed, max_steps: int
) -> tuple[dict[str, tuple[int, int]], dict[str, float]]:
    """The tokens the runs measured and each task's factor: its seconds per
    sample over those tokens at ``speed``."""
    navigate = [measured[k] for k in ("omcd", "no_filter")]
    tokens = {k: (round(v["prompt"]), round(v["output"])) for k, v in measured.items()}
    tokens["step"] = (
        round(statistics.mean(m["step_prompt"] for m in navigate)),
        round(statistics.mean(m["step_output"] for m in navigate)),
    )
    factors = {
        key: seconds[key] / quickstart_cost.token_seconds(key, speed, max_steps, key != "detect", tokens)
        for key in quickstart_cost.TASK_KEYS
    }
    return tokens, factors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=quickstart.DEFAULT_MAX_STEPS)
    parser.add_argument("--write", action="store_true", help=f"rewrite {quickstart_cost.CALIBRATION_FILE.name}")
    args = parser.parse_args()
    if args.max_steps is None:  # the quickstart's own budget for these episodes
        args.max_steps = quickstart_cost.step_budget(args.limit)
    measured: dict[str, dict[str, float]] = {}
    seconds: dict[str, float] = {}
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as logs, local_model.running_server() as server:
        speed = local_model.speed(server.port)
        loads.append(os.getloadavg()[0])
        print(f"load {loads[-1]:.1f}; server speed: prompt {speed.prompt:.0f}, replies {speed.generation:.1f} tokens/s")
        for quick in quickstart.quickstart_tasks(args.limit, args.max_steps):
            began = time.perf_counter()
            (log,) = quickstart.run_evals(
                local_model.INSPECT_MODEL, logs, args.limit, args.max_steps, tasks=[quick],
                model_base_url=server.base_url,
            )  # fmt: skip
            took = time.perf_counter() - began
            loads.append(os.getloadavg()[0])
            rows = [sample_tokens(s, log.eval.task.endswith("navigate")) for s in log.samples or []]
            measured[quick.tokens] = {key: statistics.mean(r[key] for r in rows) for key in rows[0]}
            seconds[quick.tokens] = took / args.limit
            guess = quick.estimate(speed, args.limit, args.max_steps)
            print(
                f"{quick.label}: {took:.0f} s, estimate {guess:.0f} s ({100 * (guess - took) / took:+.0f} %), "
                f"load {loads[-1]:.1f}; per sample "
                + ", ".join(f"{k} {v:.0f}" for k, v in measured[quick.tokens].items())
            )
    tokens, factors = calibration(measured, seconds, speed, args.max_steps)
    print(f"tokens = {tokens}")
    print("factors = {" + ", ".join(f"{k!r}: {v:.3f}" for k, v in factors.items()) + "}")
    if args.write:
        quickstart_cost.write_calibration(
            tokens,
            factors,
            {
                "by": f"python benchmarks/quickstart_time.py --limit {args.limit} --max-steps {args.max_steps} --write",
                "date": date.today().isoformat(),
                "cpu": f"{cpu_name()}, {os.cpu_count()} cores",
                "load": [round(x, 1) for x in loads],
                "speed": {"prompt": round(speed.prompt, 1), "generation": round(speed.generation, 1)},
                "limit": args.limit,
                "max_steps": args.max_steps,
                "seconds_per_sample": {k: round(v, 1) for k, v in seconds.items()},
            },
        )
        print(f"wrote {quickstart_cost.CALIBRATION_FILE}")


if __name__ == "__main__":
    main()
