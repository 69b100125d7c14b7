"""Determinism: the same scripted run twice sends byte-identical prompts (text
and images, hashed) and gets identical scores; and the current code sends the
same prompts and gets the same scores as a reference version of the code
(fingerprints in ``tests/fixtures/fingerprints.json``, written by
``tests/_fingerprint.py``), except what differs from it on purpose."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest
from _fingerprint import ADDED_COUNTS, CHANGED_KEYS, CHANGED_MESSAGES, FIXTURE, run_all
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, resolve_sample_attachments

from spatialstale_evals.detect import detect
from spatialstale_evals.navigate import navigate

#: Metrics of the reference that are gone: the duplicate of thaw_recall.
REMOVED_METRICS = {"flag_rate_stale_thaw"}
#: Metrics the reference lacks whose value at the fingerprinted settings is
#: known: undefined (NaN), as the runs have no distractor notes. Any other
#: metric the reference lacks may take any value: the reference's metrics are
#: what is pinned, so adding a metric asks for no edit here.
UNDEFINED_WITHOUT_NOTES = {"distractor_flag_rate"}
#: The entries of S (0,0) and G (7,7) on 8x8: SAFE, never stale, so not in the
#: valid-SAFE control (specification.md#memory: ids are r*W + c, zero-padded to 3 digits).
START_GOAL_IDS = {"mem_000", f"mem_{7 * 8 + 7:03d}"}


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


@pytest.fixture(scope="module")
def before_and_after(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    before = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return before, run_all(tmp_path_factory.mktemp("fingerprints"))


def test_every_configuration_was_fingerprinted(before_and_after: tuple[dict, dict]) -> None:
    before, after = before_and_after
    assert set(after) == set(before)
    assert len(before) == 80 and sum(len(run["samples"]) for run in before.values()) >= 160


def test_prompts_messages_and_records_are_unchanged(before_and_after: tuple[dict, dict]) -> None:
    before, after = before_and_after
    for name, run in before.items():
        family = name.split(" ")[0]  # the key's first word (``_fingerprint.key``)
        for sid, old in run["samples"].items():
            new = after[name]["samples"][sid]
            for field in ("calls", "messages", "metadata", "score_metadata", "answer", "explanation", "flagged"):
                if field == "messages" and family in CHANGED_MESSAGES:
                    # the audit conversation, i.e. the calls above (unchanged), in order
                    assert new["messages_are_calls"], f"{name} {sid}: messages are not the audit's calls"
                    continue
                assert new[field] == old[field], f"{name} {sid}: {field} changed"


def test_score_values_are_unchanged_but_for_the_valid_safe_control(before_and_after: tuple[dict, dict]) -> None:
    before, after = before_and_after
    checked = 0
    for name, run in before.items():
        for sid, old in run["samples"].items():
            new = after[name]["samples"][sid]
            assert {k: v for k, v in new["value"].items() if k not in CHANGED_KEYS + ADDED_COUNTS} == {
                k: v for k, v in old["value"].items() if k not in CHANGED_KEYS
            }, f"{name} {sid}"
            assert all(new["value"].get(k, 0) == 0 for k in ADDED_COUNTS), f"{name} {sid}: no notes, no note counts"
            if "valid_safe" not in old["value"]:
                continue
            # S and G left the control: two SAFE entries per window, and their flags.
            windows = old["value"]["windows"]
            flags_on_start_goal = sum(len(START_GOAL_IDS & set(flagged)) for flagged in old["flagged"])
            assert new["value"]["valid_safe"] == old["value"]["valid_safe"] - 2 * windows
            assert new["value"]["valid_safe_flagged"] == old["value"]["valid_safe_flagged"] - flags_on_start_goal
            checked += flags_on_start_goal
    assert checked > 0, "the random auditor flagged S or G somewhere, so the flag correction was exercised"


def test_task_metrics_are_unchanged_but_for_the_named_ones(before_and_after: tuple[dict, dict]) -> None:
    before, after = before_and_after
    for name, run in before.items():
        old, new = run["metrics"], after[name]["metrics"]
        assert set(old) - set(new) == (REMOVED_METRICS & set(old))
        # without notes the distractor flag rate is undefined: NaN (an undefined ratio is never logged as 0.0)
        assert all(math.isnan(new[m]) for m in UNDEFINED_WITHOUT_NOTES & set(new)), name
        if "flag_rate_stale_thaw" in old:
            assert old["flag_rate_stale_thaw"] == old["thaw_recall"], "the dropped metric was a duplicate"
        for metric, value in new.items():
            if metric not in old:  # not the reference's: nothing to pin it to
                continue
            if metric == "flag_rate_valid_safe":
                values = [s["value"] for s in after[name]["samples"].values()]
                den = sum(v["valid_safe"] for v in values)
                expected = sum(v["valid_safe_flagged"] for v in values) / den if den else math.nan
                if math.isnan(expected):
                    assert math.isnan(value), name
                    continue
                assert value == pytest.approx(expected, abs=1e-12), name
            elif math.isnan(value):  # undefined: logged as 0.0 by the reference code, NaN now
                assert old[metric] == 0.0, f"{name}: {metric}"
            else:
                assert math.isclose(value, old[metric], rel_tol=1e-12, abs_tol=1e-12), f"{name}: {metric}"
