"""Logs: ``.eval`` bytes per episode in text and image mode, and the time
``read_eval_log`` takes on full 50-seed image-mode logs.

Two agents: ``observer`` (about 14 steps an episode) and ``perfbench/wander``
(a random walk over safe cells that never enters a hole or the goal, so every
episode lasts the full 50 steps and shows up to 50 distinct images: the worst
case for image logs). L2, ``no_filter``, one epoch.
"""

from __future__ import annotations

import time
import zipfile
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log

from spatialstale_evals.navigate import navigate

from . import providers
from .runner import mean, median, run_eval

FULL_SEEDS = 50


def log_stats(log: EvalLog) -> dict[str, Any]:
    """File and sample-entry sizes of a navigate log, per episode and per
    step, with how many images each episode stored and could have shown."""
    path = Path(log.location)
    with zipfile.ZipFile(path) as z:
        sample_bytes = [i.compress_size for i in z.infolist() if i.filename.startswith("samples/")]
    samples = log.samples or []
    steps = [s.scores["navigation_scorer"].value["steps"] for s in samples]
    distinct_shown = [
        len({tuple(c) for c in s.scores["navigation_scorer"].metadata["trajectory"][:n]})
        for s, n in zip(samples, steps)
    ]
    stored_images = [sum(1 for v in (s.attachments or {}).values() if v.startswith("data:image")) for s in samples]
    size = path.stat().st_size
    return {
        "episodes": len(steps),
        "steps": mean(steps),
        "file_bytes": size,
        "bytes_per_episode": size / len(steps),
        "sample_entry_bytes": mean(sample_bytes),
        "bytes_per_step": sum(sample_bytes) / sum(steps),
        "image_attachments": mean(stored_images),
        "distinct_observations": mean(distinct_shown),
        "_path": str(path),
    }


def time_read(path: str, repeats: int = 3) -> float:
    """Median wall time of ``read_eval_log`` on ``path``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        read_eval_log(path)
        times.append(time.perf_counter() - start)
    return median(times)


def measure_logs(quick: bool, tmp: Path) -> dict[str, Any]:
    """Both agents in both modalities (wander on 10 seeds with ``--quick``);
    read times only for the 50-seed image logs."""
    runs = []
    for agent, seeds in (("spatialstale/observer", FULL_SEEDS), ("perfbench/wander", 10 if quick else FULL_SEEDS)):
        for modality in ("text", "image"):
            task = navigate(regime="L2", strategy="no_filter", modality=modality, epochs=1)
            providers.reset_wander()
            run = run_eval(task, agent, tmp / f"logs-{agent.replace('/', '-')}-{modality}", limit=seeds)
            stats = log_stats(run.log)
            stats.update(agent=agent, modality=modality, run_s=run.wall_s)
            if seeds == FULL_SEEDS and modality == "image":
                stats["read_eval_log_s"] = time_read(stats["_path"])
            runs.append(stats)
    return {"runs": runs}
