"""Property-based fuzzing of the reply parsers: no reply a model can write
crashes them, valid replies always parse to the same verdicts, and failure
counts are exact."""

from __future__ import annotations

import json
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from spatialstale_evals.harness.parsing import parse_audit_reply, parse_move

IDS = [f"mem_{i:03d}" for i in range(10)]
JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
JSON_ANY = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
NEAR_ITEM = st.fixed_dictionaries(
    {"memory_id": st.sampled_from([*IDS, "mem_999", "mem_x", "", 3, None]) | JSON_LEAF},
    optional={
        "is_stale": JSON_LEAF | st.sampled_from(["yes", "no", "true", "false", 1, 0]),
        "staleness": JSON_LEAF,
        "confidence": JSON_LEAF,
        "reasoning": JSON_ANY,
        "extra": JSON_ANY,
    },
)


def _check_counts(parsed, ids):
    assert parsed.failures == len(parsed.missing) + len(parsed.invalid)
    assert set(parsed.judgements) | set(parsed.missing) | set(parsed.invalid) == set(ids)
    assert not set(parsed.judgements) & (set(parsed.missing) | set(parsed.invalid))
    assert all(j.memory_id in ids for j in parsed.judgements.values())


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text):
    for output in ("binary", "continuous"):
        _check_counts(parse_audit_reply(text, IDS, output, threshold=0.7), IDS)


@settings(max_examples=300, deadline=None)
@given(JSON_ANY)
def test_arbitrary_json_never_raises(value):
    _check_counts(parse_audit_reply(json.dumps(value), IDS), IDS)


@settings(max_examples=300, deadline=None)
@given(st.lists(NEAR_ITEM, max_size=12), st.integers(min_value=0, max_value=400), st.booleans())
def test_near_miss_json_never_raises(items, cut, nest):
    payload = json.dumps([items] if nest else items, default=str)
    for text in (payload, payload[:cut], "```json\n" + payload + "\n```", "Here you go: " + payload[:cut]):
        _check_counts(parse_audit_reply(text, IDS), IDS)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(IDS), st.booleans(), min_size=0, max_size=10),
    st.sampled_from(["plain", "fence", "prose", "wrapped"]),
)
def test_valid_replies_parse_to_the_same_verdicts(verdicts, style):
    items = [{"memory_id": k, "is_stale": v, "confidence": 0.5, "reasoning": "r"} for k, v in verdicts.items()]
    body = json.dumps(items)
    text = {
        "plain": body,
        "fence": f"```json\n{body}\n```",
        "prose": f"I checked each entry.\n{body}\nDone.",
        "wrapped": json.dumps({"results": items}),
    }[style]
    parsed = parse_audit_reply(text, IDS)
    assert {k: j.is_stale for k, j in parsed.judgements.items()} == verdicts
    assert parsed.missing == [i for i in IDS if i not in verdicts]
    assert parsed.failures == len(IDS) - len(verdicts)
    assert parsed.unknown_ids == [] and parsed.duplicate_ids == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(IDS), min_size=1, max_size=15),
    st.lists(st.sampled_from(["mem_500", "mem_777", "nope"]), max_size=4),
)
def test_unknown_and_duplicate_counts_are_exact(ids_in_reply, unknown):
    items = [{"memory_id": i, "is_stale": True} for i in ids_in_reply + unknown]
    parsed = parse_audit_reply(json.dumps(items), IDS)
    once = {i for i in ids_in_reply if ids_in_reply.count(i) == 1}
    assert len(parsed.duplicate_ids) == len(ids_in_reply) - len(set(ids_in_reply))
    assert len(parsed.unknown_ids) == len(unknown)
    assert set(parsed.judgements) == once
    assert parsed.failures == len(IDS) - len(once)


CALL = st.builds(
    lambda function, arguments, parse_error: SimpleNamespace(
        function=function, arguments=arguments, parse_error=parse_error
    ),
    st.sampled_from(["move", "Move", "walk", ""]) | st.text(max_size=8),
    JSON_ANY | st.fixed_dictionaries({"direction": JSON_LEAF | st.sampled_from(["UP", "down", " LEFT ", "NORTH"])}),
    st.none() | st.text(max_size=10),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(CALL, max_size=4) | st.none())
def test_move_parser_never_raises_and_counts_extras(calls):
    choice = parse_move(calls)
    n = len(calls or [])
    assert choice.extra_calls == max(n - 1, 0)
    assert (choice.direction is None) != (choice.problem is None)
    if choice.direction is not None:
        first = calls[0]
        assert first.function == "move" and not first.parse_error
        assert first.arguments["direction"].strip().upper() == choice.direction
