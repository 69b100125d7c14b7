"""Edit proposals (specification.md#edit-proposals): ``output="edit"`` audits propose the corrected
claim of each flagged entry, scored exactly (``edit_accuracy``,
``edit_precision``), and ``filter_mode="correct"`` shows the correction in the
navigator's view instead of deleting the entry.

Expected values are computed here from the dataset and the specification's entry
format, not by the code under test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from spatialstale_evals.detect import detect
from spatialstale_evals.detection.counts import DetectionCounts
from spatialstale_evals.detection.metrics import edit_accuracy_of, edit_precision_of
from spatialstale_evals.harness.audit import AuditResult
from spatialstale_evals.harness.counts import confusion, edit_counts
from spatialstale_evals.harness.memory_view import build_view
from spatialstale_evals.harness.params import NotApplicable
from spatialstale_evals.harness.parsing import parse_audit_reply, read_claim
from spatialstale_evals.navigate import navigate
from spatialstale_evals.world import dataset


def run(task: Any, model: str = "spatialstale/observer", **kwargs: Any) -> EvalLog:
    kwargs.setdefault("log_realtime", False)  # read when finished: no live-viewing buffer
    log = inspect_eval(task, model=model, display="none", **kwargs)[0]
    assert log.status == "success", log.error
    return log


def metric(log: EvalLog, name: str) -> float:
    return log.results.scores[0].metrics[name].value


def stale_cells(g0: list[str] | tuple[str, ...], grid: list[str] | tuple[str, ...]) -> set[tuple[int, int]]:
    """specification.md#the-world: an entry is stale iff its cell's type now differs from g0's."""
    return {(r, c) for r, row in enumerate(g0) for c, kind in enumerate(row) if grid[r][c] != kind}


# -- scoring constructed verdicts ------------------------------------------------------------------


def test_constructed_verdicts_give_the_expected_edit_counts() -> None:
    inst = dataset.load(None, "L1")[0]
    window = inst.windows[0]
    by_cell = {e.cell: e for e in inst.memory}
    stale = sorted(stale_cells(inst.g0, inst.grid))
    assert len(stale) >= 4
    valid = next(e for e in inst.memory if e.cell not in stale and e.claim == "SAFE" and e.cell != (0, 0))
    right, wrong, missing, unflagged = (by_cell[c] for c in stale[:4])
    opposite = {"SAFE": "DANGER", "DANGER": "SAFE"}
    verdicts = [
        {"memory_id": right.id, "is_stale": True, "corrected": opposite[right.claim]},  # right
        {"memory_id": wrong.id, "is_stale": True, "corrected": wrong.claim},  # restates the stale claim
        {"memory_id": missing.id, "is_stale": True},  # no correction
        {"memory_id": unflagged.id, "is_stale": False, "corrected": opposite[unflagged.claim]},  # not read
        {"memory_id": valid.id, "is_stale": True, "corrected": "DANGER"},  # a correction of a valid entry
    ]
    ids = [e.id for e in inst.memory]
    parsed = parse_audit_reply(json.dumps(verdicts), ids, "edit")
    result = AuditResult(judgements=parsed.judgements)
    assert result.corrections == {right.id: opposite[right.claim], wrong.id: wrong.claim, valid.id: "DANGER"}
    counts = edit_counts(inst.memory, result.flagged, result.corrections, window.labels)
    assert counts == {"corrections": 3, "corrections_right": 1, "corrections_missing": 1}
    confusions = confusion(inst.memory, result.flagged, window.labels, inst.g0)
    c = DetectionCounts(**confusions, **counts)
    assert edit_accuracy_of(c) == 1 / len(stale)
    assert edit_precision_of(c) == 1 / 3


@pytest.mark.parametrize(
    ("value", "claim"),
    [
        ("DANGER", "DANGER"),
        ("safe", "SAFE"),
        ("hole", "DANGER"),
        ("H", "DANGER"),
        ("F", "SAFE"),
        ("DANGER at (3,4)", "DANGER"),
        ("[mem_044] SAFE at (5,4): Frozen ice - safe to walk", "SAFE"),
        ("replace DANGER at (3,4) with SAFE at (3,4)", "SAFE"),  # the paper's phrasing: the new claim last
        ("SAFE -> DANGER", "DANGER"),
        ("the cell is now a hole, not ice", "DANGER"),
        ("DANGER (previously SAFE)", "DANGER"),
        ("deadly", "DANGER"),
        ({"claim": "DANGER"}, "DANGER"),
        # never guessed: negated, both claims without a direction, none, not text
        ("not safe", None),
        ("it is not dangerous", None),
        ("unsafe", None),
        ("ice or hole", None),
        ({"safe": False}, None),
        (None, None),
        ("", None),
        ("n/a", None),
        (True, None),
    ],
)
def test_a_correction_is_read_leniently(value: Any, claim: str | None) -> None:
    assert read_claim(value) == claim


def test_a_correction_of_a_distractor_note_is_never_right() -> None:
    inst = dataset.load(None, "L1")[0].with_notes(2)
    note = next(e for e in inst.memory if e.is_note)
    labels = dict(inst.windows[0].labels) | {note.id: None}
    counts = edit_counts(inst.memory, {note.id}, {note.id: "SAFE"}, labels)
    assert counts == {"corrections": 1, "corrections_right": 0, "corrections_missing": 0}


def test_edit_verdicts_without_a_usable_correction_still_flag() -> None:
    reply = '[{"memory_id": "mem_001", "is_stale": true, "corrected": "no idea"}, {"memory_id": "mem_002"}]'
    parsed = parse_audit_reply(reply, ["mem_001", "mem_002"], "edit")
    assert parsed.judgements["mem_001"].is_stale and parsed.judgements["mem_001"].corrected is None
    assert parsed.invalid == ["mem_002"] and parsed.failures == 1


# -- detect ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("regime", ["L1", "L2", "L3"])
def test_a_perfect_editor_corrects_every_stale_entry(regime: str, tmp_path: Path) -> None:
    log = run(detect(regime=regime, output="edit"), limit=5, log_dir=str(tmp_path))
    assert metric(log, "edit_accuracy") == 1.0 and metric(log, "edit_precision") == 1.0
    assert metric(log, "f1") == 1.0
    for sample, inst in zip(log.samples, dataset.load(None, regime)[:5]):
        expected = sum(len(stale_cells(inst.g0, inst.grid_at(w.step))) for w in inst.windows)
        value = sample.scores["detection_scorer"].metadata["counts"]
        assert value["corrections_right"] == value["corrections"] == expected > 0
        assert value["corrections_missing"] == 0


def test_on_clean_memory_the_perfect_editor_proposes_nothing(tmp_path: Path) -> None:
    log = run(detect(regime="L0", output="edit"), limit=3, log_dir=str(tmp_path))
    assert all(s.scores["detection_scorer"].metadata["counts"]["corrections"] == 0 for s in log.samples)


def test_the_default_output_has_no_edit_metrics_nor_counts(tmp_path: Path) -> None:
    log = run(detect(regime="L1"), limit=1, log_dir=str(tmp_path))
    assert "edit_accuracy" not in log.results.scores[0].metrics
    assert "corrections" not in log.samples[0].scores["detection_scorer"].metadata["counts"]
    assert all("corrected" not in j for w in log.samples[0].store["DetectionState:windows"] for j in w["judgements"])


def test_a_random_editor_scores_below_the_perfect_one(tmp_path: Path) -> None:
    log = run(detect(regime="L2", output="edit"), model="spatialstale/random", limit=5, log_dir=str(tmp_path))
    assert metric(log, "edit_accuracy") < 1.0 and metric(log, "edit_precision") < 0.5


def test_a_threshold_with_an_output_that_has_none_is_an_error() -> None:
    with pytest.raises(NotApplicable, match="threshold=0.5 applies to output=continuous only"):
        detect(output="edit", threshold=0.5)
    with pytest.raises(NotApplicable, match="output is binary"):
        navigate(strategy="omcd", threshold=0.5)
    with pytest.raises(ValueError, match="output must be one of binary, continuous, edit"):
        detect(output="edits")
    with pytest.raises(ValueError, match="output must be one of binary, continuous, edit"):
        navigate(strategy="omcd", output="edits", filter_mode="correct")  # checked before it is used


def test_the_edit_schema_reaches_the_request(tmp_path: Path) -> None:
    # the module pytest imported (tests/ is on the path), so its provider is registered once
    from test_structured import Recording
    from test_structured import run as recorded

    recorded(detect(regime="L2", output="edit", structured_output=True), limit=1, log_dir=str(tmp_path))
    assert {name for _, name, _ in Recording.calls} == {"audit_edit"}
    item = Recording.calls[0][2].properties["verdicts"].items
    assert item.required == ["memory_id", "is_stale", "corrected", "confidence", "reasoning"]
    assert [s.model_dump(exclude_none=True) for s in item.properties["corrected"].anyOf] == [
        {"type": "string", "enum": ["SAFE", "DANGER"]},
        {"type": "null"},
    ]


def test_the_detect_estimate_stays_exact_for_edits(tmp_path: Path) -> None:
    from spatialstale_evals.runs.cost import estimate_cost

    log = run(detect(regime="L3", output="edit"), limit=2, log_dir=str(tmp_path))
    cost = estimate_cost("detect", dataset.load(None, "L3")[:2], regime="L3", output="edit")[1]
    usage = log.stats.model_usage["spatialstale/observer"]
    assert (cost.input_tokens, cost.output_tokens) == (usage.input_tokens, usage.output_tokens)


# -- navigation: filter_mode="correct" ------------------------------------------------------------------


def test_a_corrected_entry_reads_in_the_entry_format_with_its_label() -> None:
    inst = dataset.load(None, "L2")[0]
    stale = stale_cells(inst.g0, inst.grid)
    thawed = next(e for e in inst.memory if e.cell in stale and e.claim == "SAFE")
    other = next(e for e in inst.memory if e.cell in stale and e.id != thawed.id)
    decisions = {thawed.id: "contradicted", other.id: "contradicted"}
    view = build_view(inst.memory, decisions, "correct", {thawed.id: 0, other.id: 0}, {thawed.id: "DANGER"})
    by_id = {n.entry.id: n for n in view}
    r, c = thawed.cell
    assert by_id[thawed.id].text == (
        f"[{thawed.id}] DANGER at ({r},{c}): Hole - dangerous, do not step "
        "[corrected at step 0: written as SAFE, out of date]"
    )
    assert not by_id[thawed.id].shows_claim  # the stale claim is not presented as true
    assert other.id not in by_id  # contradicted without a proposed claim: deleted
    assert len(view) == len(inst.memory) - 1


def test_a_restated_claim_or_a_note_is_not_shown_as_corrected() -> None:
    inst = dataset.load(None, "L2")[0].with_notes(2)
    note = next(e for e in inst.memory if e.is_note)
    entry = next(e for e in inst.memory if not e.is_note)
    decisions = {note.id: "contradicted", entry.id: "contradicted"}
    view = build_view(inst.memory, decisions, "correct", {}, {note.id: "SAFE", entry.id: entry.claim})
    assert {n.entry.id for n in view} == {e.id for e in inst.memory} - {note.id, entry.id}


def test_a_correction_lasts_while_its_entry_stays_contradicted() -> None:
    from spatialstale_evals.navigation.episode import Episode
    from spatialstale_evals.world.env import DynamicFrozenLakeEnv

    inst = dataset.load(None, "L2")[0]
    episode = Episode(env=DynamicFrozenLakeEnv(inst), view=[])
    assert episode.decide({"mem_001": "contradicted"}, {}, {"mem_001": "DANGER"})
    assert episode.corrections == {"mem_001": "DANGER"}
    assert not episode.decide({"mem_001": "contradicted"}, {}, {"mem_001": "DANGER"})  # nothing changed
    assert episode.decide({"mem_001": "contradicted"}, {}, {})  # judged again without a claim: none kept
    assert episode.corrections == {}
    episode.decide({"mem_001": "contradicted"}, {}, {"mem_001": "DANGER"})
    assert episode.decide({"mem_001": "keep"}, {}, {"mem_001": "DANGER"})  # no longer contradicted
    assert episode.corrections == {}


def first_view(log: EvalLog) -> list[str]:
    user = next(m for m in log.samples[0].messages if m.role == "user")
    return [line for line in user.text.splitlines() if line.startswith("[mem_")]


@pytest.mark.parametrize(
    ("strategy", "output"), [("omcd", "edit"), ("self_verify", "edit"), ("oracle", "binary"), ("resolve", "binary")]
)
def test_correct_shows_every_stale_entry_with_its_true_claim(strategy: str, output: str, tmp_path: Path) -> None:
    args = {"strategy": strategy, "output": output, "filter_mode": "correct", "regime": "L2"}
    log = run(navigate(**args), model="spatialstale/memory", limit=1, epochs=1, log_dir=str(tmp_path),
              model_roles={"auditor": "spatialstale/observer"})  # fmt: skip
    inst = dataset.load(None, "L2")[0]
    stale = stale_cells(inst.g0, inst.grid)
    lines = first_view(log)
    assert len(lines) == len(inst.memory)  # nothing deleted
    for entry, line in zip(inst.memory, lines):
        r, c = entry.cell
        if entry.cell in stale:
            now = "DANGER" if inst.grid[r][c] == "H" else "SAFE"
            assert line.startswith(f"[{entry.id}] {now} at ({r},{c}):") and "corrected at step 0" in line
        else:
            assert line == entry.text


def test_correct_under_l3_and_partial_view_corrects_only_what_was_audited(tmp_path: Path) -> None:
    args = {"strategy": "omcd", "output": "edit", "filter_mode": "correct", "regime": "L3", "view_radius": 1}
    log = run(navigate(**args), model="spatialstale/mixed", limit=5, epochs=1, log_dir=str(tmp_path),
              model_roles={"auditor": "spatialstale/observer"})  # fmt: skip
    for sample, inst in zip(log.samples, dataset.load(None, "L3")[:5]):
        record = sample.scores["navigation_scorer"].metadata
        for audit in record["audits"]:
            assert audit["corrections_right"] == audit["corrections"] == audit["tp"] + audit["fn"]
            assert audit["judged"] <= len(inst.memory)
        last = [m for m in sample.messages if m.role == "user"][-1].text
        for line in last.splitlines():
            if "[corrected at step" in line:  # a corrected entry states what its cell was when judged
                eid = line[1 : line.index("]")]
                entry = next(e for e in inst.memory if e.id == eid)
                assert line.startswith(f"[{eid}] {'DANGER' if entry.claim == 'SAFE' else 'SAFE'} at ")


def test_the_first_step_estimate_is_exact_for_correct(tmp_path: Path) -> None:
    from spatialstale_evals.navigation.cost import step_prompt_tokens
    from spatialstale_evals.runs.cost import task_settings

    args = {"strategy": "omcd", "output": "edit", "filter_mode": "correct", "regime": "L2"}
    log = run(navigate(**args, max_steps=1), model="spatialstale/memory", limit=2, epochs=1, log_dir=str(tmp_path),
              model_roles={"auditor": "spatialstale/observer"})  # fmt: skip
    settings = task_settings("navigate", **args)
    for sample, inst in zip(log.samples, dataset.load(None, "L2")[:2]):
        (step,) = [e for e in sample.events if e.event == "model" and e.tools]
        assert step.output.usage.input_tokens == step_prompt_tokens(inst, settings)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"strategy": "omcd", "filter_mode": "correct"}, "omcd proposes none with output='binary'"),
        ({"strategy": "no_filter", "output": "edit"}, "no_filter asks no auditor"),
        ({"strategy": "oracle", "output": "edit"}, "oracle asks no auditor"),
        ({"strategy": "resolve", "output": "continuous", "threshold": 0.5}, "threshold=0.5: the format"),
        ({"strategy": "no_filter", "filter_mode": "correct"}, "needs a strategy that judges entries"),
    ],
)
def test_correct_and_edit_need_a_strategy_that_can_use_them(args: dict[str, Any], message: str) -> None:
    with pytest.raises(NotApplicable, match=message):
        navigate(**args)


def test_repair_beats_deletion_for_the_memory_agent(tmp_path: Path) -> None:
    """Deleting a frozen-over hole's entry leaves the memory agent without the
    SAFE claim it needs to cross; the correction gives it back."""
    outcomes = {}
    for mode in ("delete", "correct"):
        task = navigate(regime="L2", strategy="omcd", output="edit", filter_mode=mode)
        log = run(task, model="spatialstale/memory", limit=20, epochs=1, log_dir=str(tmp_path),
                  model_roles={"auditor": "spatialstale/observer"})  # fmt: skip
        outcomes[mode] = sum(s.scores["navigation_scorer"].value["success"] for s in log.samples)
        audits = [a for s in log.samples for a in s.scores["navigation_scorer"].metadata["audits"]]
        assert all(a["corrections_right"] == a["corrections"] == a["tp"] + a["fn"] for a in audits)
    assert outcomes["correct"] > outcomes["delete"]
