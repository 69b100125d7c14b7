"""What the quickstart's tasks cost the local model, in tokens and seconds:
the source of ``quickstart.QUICK_TOKENS`` (its time estimates) and of the
timings the docs give.

    python benchmarks/quickstart_time.py [--limit 3] [--max-steps 10]

Starts the bundled SmolLM2 server, measures its speed (``local_model.speed``),
runs the quickstart's three tasks with ``--limit`` seeds / episodes, and
prints per task: its wall time beside the estimate the quickstart would have
printed (from the current ``QUICK_TOKENS``), and the mean tokens per seed or
episode read from the logs' model events: new prompt tokens (``input_tokens``:
llama.cpp counts the ones it did not find in its prompt cache) and reply
tokens. A navigate episode's tokens are split into a part per episode (the
audits, and the first step's prompt, which holds all 64 memory notes) and a
part per step (a later step's prompt, every step's reply). The last line is
the ``QUICK_TOKENS`` these runs measured. Wall times depend on the machine's
load (printed with ``os.getloadavg``); token counts do not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any

from spatialstale_evals import local_model, quickstart


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=quickstart.DEFAULT_MAX_STEPS)
    args = parser.parse_args()
    measured: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as logs, local_model.running_server() as server:
        speed = local_model.speed(server.port)
        print(
            f"load {os.getloadavg()[0]:.1f}; server speed: "
            f"prompt {speed.prompt:.0f}, replies {speed.generation:.1f} tokens/s"
        )
        for quick in quickstart.quickstart_tasks(args.limit, args.max_steps):
            began = time.perf_counter()
            (log,) = quickstart.run_evals(
                local_model.INSPECT_MODEL, logs, args.limit, args.max_steps, tasks=[quick],
                model_base_url=server.base_url,
            )  # fmt: skip
            took = time.perf_counter() - began
            rows = [sample_tokens(s, log.eval.task.endswith("navigate")) for s in log.samples or []]
            means = {key: statistics.mean(r[key] for r in rows) for key in rows[0]}
            key = quick.label.split()[1] if quick.label.startswith("navigate") else "detect"
            measured[key] = means
            print(
                f"{quick.label}: {took:.0f} s (estimate {quick.estimate(speed, args.limit, args.max_steps):.0f} s, "
                f"load {os.getloadavg()[0]:.1f}); per sample " + ", ".join(f"{k} {v:.0f}" for k, v in means.items())
            )
    navigate = [measured[k] for k in ("omcd", "no_filter")]
    tokens = {k: (round(v["prompt"]), round(v["output"])) for k, v in measured.items()}
    tokens["step"] = (
        round(statistics.mean(m["step_prompt"] for m in navigate)),
        round(statistics.mean(m["step_output"] for m in navigate)),
    )
    print(f"QUICK_TOKENS = {tokens}")


if __name__ == "__main__":
    main()
