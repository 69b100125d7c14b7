"""Digit runs of 10^3 to 10^5 characters wherever a parser of the suite reads a
number (issue 37, item 1). Python's ``int()`` refuses over 4,300 digits
(``ValueError: Exceeds the limit``), so before the bound an id
``mem_<4400 digits>`` crashed the audit parser, and a confidence of 400 digits
overflowed ``float()``. Each case must parse without raising, in time linear
in the reply, and read the item holding the run as unreadable (counted by
the family as any other unreadable item), never as a number.
The lifelong notes parser (``lifetime/notes.py``) is included: its bound came
with issue 34's parser."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from spatialstale_evals.harness.bounded_json import json_values
from spatialstale_evals.harness.memory_tool import MemoryUse, record_answer
from spatialstale_evals.harness.numbers import MAX_DIGITS, TOO_LONG, bounded_int, json_int
from spatialstale_evals.harness.parsing import parse_audit_reply, parse_move, parse_probe_answer, read_claim
from spatialstale_evals.harness.prompts import NAVIGATE_STEP, template_pattern
from spatialstale_evals.stale_corpus.judgement import parse_stale_judgement

SIZES = [10**3, 4_301, 10**4, 10**5]
IDS = ["mem_001", "mem_002"]


def run(n: int) -> str:
    return "7" * n


def timed(parse, *args):
    start = time.perf_counter()
    result = parse(*args)
    assert time.perf_counter() - start < 5.0  # linear: a 10^5-digit reply parses in well under a second
    return result


@pytest.mark.parametrize("n", SIZES)
def test_an_audit_id_with_a_long_number_is_an_unknown_id(n: int) -> None:
    for raw in (f'"mem_{run(n)}"', run(n), f'"note {run(n)}"'):
        reply = f'[{{"memory_id": {raw}, "is_stale": true}}, {{"memory_id": "mem_002", "is_stale": false}}]'
        parsed = timed(parse_audit_reply, reply, IDS)
        assert parsed.unknown_ids and parsed.missing == ["mem_001"], raw[:20]
        assert parsed.judgements["mem_002"].is_stale is False  # the rest of the reply still read


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("output", ["binary", "continuous", "edit"])
def test_an_audit_verdict_or_score_with_a_long_number_is_invalid(n: int, output: str) -> None:
    field = "staleness" if output == "continuous" else "is_stale"
    for value in (run(n), f"1{'0' * n}", f'"0.{run(n)}"', f"0.{run(n)}", f"1e{run(n)}"):
        reply = json.dumps([{"memory_id": "mem_001", field: True}]).replace("true", value)
        parsed = timed(parse_audit_reply, reply, IDS[:1], output, 0.5)
        judged = parsed.judgements.get("mem_001")
        # a unit-interval number written with many digits may still be one (0.777...): else invalid
        assert parsed.invalid == ["mem_001"] or (judged and judged.staleness is not None and judged.staleness <= 1)


@pytest.mark.parametrize("n", SIZES)
def test_a_long_confidence_or_claim_cell_leaves_the_verdict_and_reads_no_number(n: int) -> None:
    cell = f"(1,{run(n)})"
    reply = f'{{"memory_id": "mem_001", "is_stale": true, "confidence": {run(n)}, "corrected": "DANGER at {cell}"}}'
    parsed = timed(parse_audit_reply, reply, IDS[:1], "edit")
    judged = parsed.judgements["mem_001"]
    assert judged.is_stale and judged.confidence is None and judged.corrected == "DANGER"
    assert timed(read_claim, f"SAFE at ({run(n)},2) -> DANGER") == "DANGER"


@pytest.mark.parametrize("n", SIZES)
def test_a_probe_answer_with_a_long_cell_or_answer_is_unreadable(n: int) -> None:
    for cell in (f'"(1,{run(n)})"', f"[1, {run(n)}]", f'{{"row": {run(n)}, "col": 1}}', f'["1", "{run(n)}"]'):
        answer = timed(parse_probe_answer, f'{{"cell": {cell}, "state": "SAFE"}}', "state", (1, 1))
        assert answer.value is None and answer.problem, cell[:20]
        json.dumps(answer.reply)  # what the probe record keeps still serialises
    answer = timed(parse_probe_answer, f'{{"premise_holds": {run(n)}}}', "premise_holds", (1, 1))
    assert answer.value is None and answer.problem


@pytest.mark.parametrize("n", SIZES)
def test_a_judge_verdict_with_a_long_number_is_no_verdict(n: int) -> None:
    judged = timed(parse_stale_judgement, f'{{"dim1_eval": {{"pass": {run(n)}}}, "dim2": 1}}', ["dim1", "dim2"])
    assert judged.failed and judged.passes["dim1"] is None and judged.passes["dim2"] is True


@pytest.mark.parametrize("n", SIZES)
def test_a_move_with_a_long_number_is_an_invalid_move(n: int) -> None:
    for value in (run(n), 10**n, [10**n], {"x": -(10**n)}):
        call = SimpleNamespace(function="move", arguments={"direction": value}, parse_error=None)
        choice = timed(parse_move, [call])
        assert choice.direction is None and choice.problem
        assert len(choice.problem) < 200


@pytest.mark.parametrize("n", SIZES)
def test_a_memory_view_range_with_a_long_number_is_a_read_of_all_lines(n: int) -> None:
    use = MemoryUse()
    call = SimpleNamespace(arguments={"command": "view", "path": "/memories/a.md", "view_range": [1, 10**n]},
                           parse_error=None)  # fmt: skip
    answer = SimpleNamespace(error=None, text="1\tSAFE at (0,1)")
    record_answer(use, call, answer, {"/memories/a.md": "SAFE at (0,1)"})  # type: ignore[arg-type]
    assert use.reads[0].lines is None
    json.dumps(use.to_json())


@pytest.mark.parametrize("n", SIZES)
def test_a_step_line_with_a_long_number_does_not_match(n: int) -> None:
    """The scripted agents read the step line back with ``template_pattern``."""
    line = NAVIGATE_STEP.split("\n", 1)[0].format(row=1, col=run(n), goal_row=2, goal_col=2, steps_left=3)
    assert timed(template_pattern(NAVIGATE_STEP.split("\n", 1)[0]).search, line) is None


@pytest.mark.parametrize("n", SIZES)
def test_the_bounded_reader_decodes_a_long_integer_to_a_marker(n: int) -> None:
    (value,) = timed(json_values, f'{{"a": {run(n)}, "b": -{run(n)}, "c": 12}}').values
    assert value == {"a": TOO_LONG, "b": TOO_LONG, "c": 12}
    assert bounded_int(run(n)) is None and json_int(run(MAX_DIGITS)) == int(run(MAX_DIGITS))


@pytest.mark.parametrize("n", SIZES)
def test_the_lifelong_notes_parser_reads_a_long_cell_as_nothing(n: int) -> None:
    from spatialstale_evals.lifetime.notes import line_claims

    for line in (f"SAFE at (1,{run(n)})", f"({run(n)},2) is a hole", f"DANGER at ({run(n)}, {run(n)})"):
        claims, _ = timed(line_claims, line, 8, 8)
        assert claims == []
