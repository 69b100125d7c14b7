"""Unit tests of the lenient, counted reply parsing (the audit JSON of specification.md#detect
and the ``move(direction)`` tool call of #navigate)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from inspect_ai.tool import ToolCall

from spatialstale_evals.harness.parsing import parse_audit_reply, parse_move

IDS = [f"mem_{i:03d}" for i in range(20, 30)]  # a B=10 batch on 8x8
STALE = {"mem_021", "mem_024", "mem_029"}


def verdicts(ids=IDS, stale=STALE, **extra):
    return [{"memory_id": i, "is_stale": i in stale, "confidence": 0.9, "reasoning": "r", **extra} for i in ids]


def flagged(parsed) -> set[str]:
    return {eid for eid, j in parsed.judgements.items() if j.is_stale}


def assert_clean(parsed, stale=STALE, ids=IDS):
    assert set(parsed.judgements) == set(ids)
    assert flagged(parsed) == stale
    assert parsed.failures == 0
    assert parsed.missing == [] and parsed.invalid == []
    assert parsed.unknown_ids == [] and parsed.duplicate_ids == []
    assert not parsed.unparseable and not parsed.refusal


# ------------------------------------------------------------ well-formed


def test_plain_json_list():
    parsed = parse_audit_reply(json.dumps(verdicts()), IDS)
    assert_clean(parsed)
    judgement = parsed.judgements["mem_021"]
    assert judgement.memory_id == "mem_021" and judgement.confidence == 0.9 and judgement.reasoning == "r"
    assert parsed.counts()["parse_failures"] == 0


@pytest.mark.parametrize("fence", ["```json\n{}\n```", "```\n{}\n```", "```JSON\n{}```"])
def test_code_fences(fence):
    assert_clean(parse_audit_reply(fence.replace("{}", json.dumps(verdicts(), indent=2)), IDS))


def test_prose_around_json():
    text = "Sure! Here is my audit of the entries:\n" + json.dumps(verdicts()) + "\nLet me know if you need more."
    assert_clean(parse_audit_reply(text, IDS))


def test_single_object_instead_of_list():
    parsed = parse_audit_reply(json.dumps({"memory_id": "mem_024", "is_stale": True}), IDS)
    assert flagged(parsed) == {"mem_024"}
    assert set(parsed.judgements) == {"mem_024"}
    assert sorted(parsed.missing) == sorted(set(IDS) - {"mem_024"})
    assert parsed.failures == 9
    assert parsed.counts()["parse_failures"] == 9


def test_single_object_for_a_batch_of_one():
    parsed = parse_audit_reply('{"memory_id": "mem_063", "is_stale": true, "confidence": 1}', ["mem_063"])
    assert flagged(parsed) == {"mem_063"} and parsed.failures == 0


@pytest.mark.parametrize("key", ["results", "judgements", "entries", "audit"])
def test_wrapper_object(key):
    assert_clean(parse_audit_reply(json.dumps({key: verdicts()}), IDS))


def test_objects_one_per_line_without_list():
    text = "\n".join(json.dumps(v) for v in verdicts())
    assert_clean(parse_audit_reply(text, IDS))


@pytest.mark.parametrize(
    "value,expected",
    [
        (True, True),
        (False, False),
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("yes", True),
        ("Yes", True),
        (1, True),
        ("false", False),
        ("no", False),
        (0, False),
    ],
)
def test_boolean_spellings(value, expected):
    parsed = parse_audit_reply(json.dumps([{"memory_id": "mem_020", "is_stale": value}]), ["mem_020"])
    assert parsed.failures == 0
    assert parsed.judgements["mem_020"].is_stale is expected


@pytest.mark.parametrize("value", [None, "maybe", 2, -1, 0.5, [], {}])
def test_unusable_boolean_is_invalid_and_not_flagged(value):
    items = verdicts()
    items[1]["is_stale"] = value  # mem_021 is stale in truth
    parsed = parse_audit_reply(json.dumps(items), IDS)
    assert "mem_021" not in flagged(parsed)
    assert parsed.invalid == ["mem_021"]
    assert parsed.failures == 1
    assert flagged(parsed) == STALE - {"mem_021"}


def test_missing_is_stale_field_is_invalid():
    items = verdicts()
    del items[4]["is_stale"]  # mem_024
    parsed = parse_audit_reply(json.dumps(items), IDS)
    assert parsed.failures == 1 and "mem_024" not in flagged(parsed)


# --------------------------------------------------------------- ids


def test_unpadded_ids_map_to_padded():
    items = verdicts()
    items[1]["memory_id"] = "mem_21"
    items[4]["memory_id"] = "mem_24"
    parsed = parse_audit_reply(json.dumps(items), IDS)
    assert_clean(parsed)


def test_small_id_without_padding():
    ids = [f"mem_{i:03d}" for i in range(10)]
    parsed = parse_audit_reply(json.dumps([{"memory_id": "mem_5", "is_stale": True}]), ids)
    assert flagged(parsed) == {"mem_005"}
    assert parsed.failures == 9


def test_unknown_ids_are_counted_and_their_entries_missing():
    items = verdicts()
    items[1]["memory_id"] = "mem_999"  # was mem_021
    items[2]["memory_id"] = "mem_050"  # a real id, but not in this batch (was mem_022)
    items[3]["memory_id"] = "banana"  # was mem_023
    parsed = parse_audit_reply(json.dumps(items), IDS)
    assert sorted(parsed.unknown_ids) == sorted(["mem_999", "mem_050", "banana"])
    assert sorted(parsed.missing) == ["mem_021", "mem_022", "mem_023"]
    assert parsed.failures == 3
    assert flagged(parsed) == STALE - {"mem_021"}
    # An unknown id never becomes a judgement of some other entry.
    assert "mem_050" not in parsed.judgements


def test_duplicate_ids_are_counted():
    items = verdicts() + [{"memory_id": "mem_024", "is_stale": True}]
    parsed = parse_audit_reply(json.dumps(items), IDS)
    assert parsed.duplicate_ids == ["mem_024"]
    assert parsed.counts()["duplicate_ids"] == 1


def test_duplicated_entry_is_a_parse_failure_scored_not_flagged():
    """Entries a reply omits, repeats or gives no readable verdict for are counted
    as parse failures and scored as not flagged (specification.md#detect)."""
    items = verdicts() + [{"memory_id": "mem_024", "is_stale": False}]  # contradicts its first verdict
    parsed = parse_audit_reply(json.dumps(items), IDS)
    assert "mem_024" not in flagged(parsed)
    assert parsed.failures == 1
    assert parsed.counts()["parse_failures"] == 1


def test_missing_entries_are_counted():
    items = [v for v in verdicts() if v["memory_id"] not in {"mem_024", "mem_027"}]
    parsed = parse_audit_reply(json.dumps(items), IDS)
    assert sorted(parsed.missing) == ["mem_024", "mem_027"]
    assert parsed.failures == 2
    assert flagged(parsed) == STALE - {"mem_024"}


# ------------------------------------------------------- broken replies


def test_truncated_list_salvages_complete_objects():
    full = json.dumps(verdicts())
    cut = full[: full.index('{"memory_id": "mem_025"') + len('{"memory_id": "mem_025", "is_st')]
    parsed = parse_audit_reply(cut, IDS)
    assert set(parsed.judgements) == {f"mem_{i:03d}" for i in range(20, 25)}
    assert flagged(parsed) == {"mem_021", "mem_024"}
    assert sorted(parsed.missing) == [f"mem_{i:03d}" for i in range(25, 30)]
    assert parsed.failures == 5
    assert not parsed.unparseable


def test_truncated_wrapper_salvages_complete_objects():
    full = json.dumps({"results": verdicts()})
    cut = full[: full.index('{"memory_id": "mem_023"')]
    parsed = parse_audit_reply(cut, IDS)
    assert set(parsed.judgements) == {"mem_020", "mem_021", "mem_022"}
    assert flagged(parsed) == {"mem_021"}
    assert parsed.failures == 7


@pytest.mark.parametrize(
    "text", [None, "", "   ", "null", "[]", "{}", "The grid looks unchanged.", "[{", "```json\n```"]
)
def test_unusable_reply_counts_every_entry(text):
    parsed = parse_audit_reply(text, IDS)
    assert parsed.judgements == {}
    assert sorted(parsed.missing) == sorted(IDS)
    assert parsed.failures == len(IDS)
    assert parsed.counts()["parse_failures"] == len(IDS)
    assert not parsed.refusal


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, I can't help with that.",
        "I am sorry, but I cannot assist with this request.",
        "I can't help with that.",
        "I’m sorry, but I can’t help with that.",  # typographic apostrophes, as models often write
    ],
)
def test_refusal_is_detected_and_counted(text):
    parsed = parse_audit_reply(text, IDS)
    assert parsed.refusal
    assert parsed.counts()["refusals"] == 1
    assert parsed.failures == len(IDS)
    assert flagged(parsed) == set()


def test_provider_refusal_flag():
    parsed = parse_audit_reply("", IDS, refused=True)
    assert parsed.refusal and parsed.failures == len(IDS)


def test_valid_json_is_not_a_refusal():
    items = verdicts()
    items[0]["reasoning"] = "I can't see any change at (2,4), so I'm sorry to say it's still valid"
    parsed = parse_audit_reply(json.dumps(items), IDS)
    assert not parsed.refusal
    assert_clean(parsed)


# ---------------------------------------------------------- continuous


@pytest.mark.parametrize(
    "staleness,threshold,expected",
    [
        (0.7, 0.7, True),
        (0.71, 0.7, True),
        (1.0, 0.7, True),
        (0.69, 0.7, False),
        (0.0, 0.7, False),
        (0.5, 0.5, True),
        (0.49, 0.5, False),
        ("0.8", 0.7, True),
        (1, 0.7, True),
        (0, 0.0, True),
    ],
)
def test_continuous_threshold(staleness, threshold, expected):
    text = json.dumps([{"memory_id": "mem_020", "staleness": staleness, "reasoning": "r"}])
    parsed = parse_audit_reply(text, ["mem_020"], output="continuous", threshold=threshold)
    assert parsed.failures == 0
    judgement = parsed.judgements["mem_020"]
    assert judgement.is_stale is expected
    assert judgement.staleness == pytest.approx(float(staleness))


@pytest.mark.parametrize("staleness", [1.5, -0.1, "high", None, True])
def test_continuous_out_of_range_or_unusable_is_invalid(staleness):
    text = json.dumps([{"memory_id": "mem_020", "staleness": staleness}])
    parsed = parse_audit_reply(text, ["mem_020"], output="continuous", threshold=0.7)
    assert parsed.invalid == ["mem_020"]
    assert parsed.failures == 1
    assert flagged(parsed) == set()


def test_continuous_ignores_binary_field():
    text = json.dumps([{"memory_id": "mem_020", "is_stale": True}])
    parsed = parse_audit_reply(text, ["mem_020"], output="continuous", threshold=0.7)
    assert flagged(parsed) == set() and parsed.failures == 1


def test_continuous_batch_mixed():
    scores = {"mem_020": 0.7, "mem_021": 0.6999, "mem_022": 0.95, "mem_023": 0.1}
    text = json.dumps([{"memory_id": k, "staleness": v} for k, v in scores.items()])
    parsed = parse_audit_reply(text, list(scores), output="continuous", threshold=0.7)
    assert flagged(parsed) == {"mem_020", "mem_022"}


# -------------------------------------------------------------- moves


def call(function="move", arguments=None, parse_error=None):
    return SimpleNamespace(function=function, arguments=arguments, parse_error=parse_error)


@pytest.mark.parametrize("calls", [None, []])
def test_move_no_calls(calls):
    choice = parse_move(calls)
    assert choice.direction is None
    assert choice.problem
    assert choice.extra_calls == 0


def test_move_valid():
    choice = parse_move([call(arguments={"direction": "RIGHT"})])
    assert (choice.direction, choice.problem, choice.extra_calls) == ("RIGHT", None, 0)


@pytest.mark.parametrize("raw,expected", [("up", "UP"), ("Down", "DOWN"), (" left ", "LEFT"), ("RIGHT", "RIGHT")])
def test_move_case_insensitive(raw, expected):
    assert parse_move([call(arguments={"direction": raw})]).direction == expected


def test_move_unknown_tool():
    choice = parse_move([call(function="jump", arguments={"direction": "UP"})])
    assert choice.direction is None
    assert "jump" in choice.problem


@pytest.mark.parametrize("arguments", [{}, None, {"dir": "UP"}, "UP"])
def test_move_missing_direction(arguments):
    choice = parse_move([call(arguments=arguments)])
    assert choice.direction is None and choice.problem


@pytest.mark.parametrize("value", ["NORTH", "north", "", "UPP", None, 1, ["UP"]])
def test_move_invalid_direction(value):
    choice = parse_move([call(arguments={"direction": value})])
    assert choice.direction is None
    assert choice.problem


def test_move_parse_error():
    choice = parse_move([call(arguments={}, parse_error="bad JSON")])
    assert choice.direction is None and choice.problem


def test_move_extra_calls_counted_first_used():
    calls = [call(arguments={"direction": "DOWN"}), call(arguments={"direction": "UP"}), call("other", {})]
    choice = parse_move(calls)
    assert choice.direction == "DOWN"
    assert choice.extra_calls == 2


def test_move_with_inspect_tool_calls():
    calls = [
        ToolCall(id="a", function="move", arguments={"direction": "left"}),
        ToolCall(id="b", function="move", arguments={"direction": "RIGHT"}),
    ]
    choice = parse_move(calls)
    assert choice.direction == "LEFT" and choice.extra_calls == 1 and choice.problem is None
    bad = parse_move([ToolCall(id="c", function="move", arguments={}, parse_error="Invalid JSON")])
    assert bad.direction is None and bad.problem
    north = parse_move([ToolCall(id="d", function="move", arguments={"direction": "NORTH"})])
    assert north.direction is None and "NORTH" in north.problem
