"""Determinism: the same scripted run twice sends byte-identical prompts (text
and images, hashed) and gets identical scores."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, resolve_sample_attachments

from spatialstale_evals.detect import detect
from spatialstale_evals.navigate import navigate


def prompt_hashes(log: EvalLog) -> dict[tuple[str, int], list[str]]:
    """Per (sample, epoch), the sha256 of every model call's input and tools, in call order."""
    out: dict[tuple[str, int], list[str]] = {}
    for sample in log.samples or []:
        resolved = resolve_sample_attachments(sample, "full")
        out[(str(sample.id), sample.epoch)] = [
            hashlib.sha256(
                json.dumps(
                    {
                        "input": [m.model_dump(mode="json", exclude={"id"}) for m in event.input],
                        "tools": [t.model_dump(mode="json") for t in event.tools],
                    },
                    sort_keys=True,
                ).encode()
            ).hexdigest()
            for event in resolved.events
            if event.event == "model"
        ]
    return out


def scores(log: EvalLog) -> dict[tuple[str, int], object]:
    return {(str(s.id), s.epoch): {k: v.value for k, v in (s.scores or {}).items()} for s in log.samples or []}


def run_twice(tmp_path: Path, model: str, **kwargs) -> list[tuple[EvalLog, EvalLog]]:
    def once(tag: str) -> list[EvalLog]:
        tasks = [
            navigate(regime="L3", strategy="omcd", epochs=2),
            navigate(regime="L2", strategy="no_filter", modality="image", epochs=1),
            detect(regime="L2", modality="image"),
        ]
        return inspect_eval(tasks, model=model, log_dir=str(tmp_path / tag), display="none", limit=4, **kwargs)

    return list(zip(once("first"), once("second")))


def test_scripted_runs_repeat_prompts_and_scores_exactly(tmp_path: Path) -> None:
    for first, second in run_twice(tmp_path, "spatialstale/random", model_args={"seed": 3}):
        assert first.status == second.status == "success"
        hashes = prompt_hashes(first)
        assert sum(len(h) for h in hashes.values()) > 4, "the runs made model calls"
        assert hashes == prompt_hashes(second)
        assert scores(first) == scores(second)
        if first.eval.task_args.get("epochs") == 2:
            # The random agent's epochs differ, so the comparison above is not trivially equal.
            by_id = {}
            for (sid, epoch), h in hashes.items():
                by_id.setdefault(sid, {})[epoch] = h
            assert any(e[1] != e[2] for e in by_id.values())
