"""Property-based fuzzing of the reply parsers: no reply a model can write
crashes them, valid replies always parse to the same verdicts, and failure
counts are exact."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
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


# -- hostile replies: deep nesting, lone surrogates, huge replies, parse time ------------

from spatialstale_evals.harness.bounded_json import MAX_DEPTH, MAX_REPLY_CHARS, json_values  # noqa: E402
from spatialstale_evals.harness.loggable import loggable, loggable_output  # noqa: E402
from spatialstale_evals.harness.parsing import parse_probe_answer  # noqa: E402
from spatialstale_evals.stale_corpus.judgement import parse_stale_judgement  # noqa: E402

JSONISH = st.lists(
    st.sampled_from(['{', '}', '[', ']', '"', '\\', ':', ',', '1', 'a', ' ', '"k"', 'true', 'null',
                     '{"memory_id": "mem_001", "is_stale": true}', '"{"', '"}"']),
    max_size=60,
).map("".join)


def greedy(text: str) -> list:
    """The search without bounds, written here: decode at every ``{``, skip a decoded value."""
    decoder, found, pos = json.JSONDecoder(), [], 0
    while (start := text.find("{", pos)) >= 0:
        try:
            value, pos = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        found.append(value)
    return found


@settings(max_examples=500, deadline=None)
@given(JSONISH)
def test_the_bounded_search_finds_what_greedy_decoding_does_within_the_bounds(text):
    assert json_values(text).values == greedy(text)


def nested(depth: int) -> str:
    return '{"memory_id": "mem_001", "is_stale": true, "x": ' + "[" * depth + "]" * depth + "}"


#: Replies no parser may raise on; each holds no object within the bounds.
HOSTILE = {
    "lists_100000_deep": '{"memory_id":"mem_001","is_stale":' + "[" * 100_000,
    "braces_100000": "{" * 100_000,
    "keys_100000_deep": '{"a":' * 100_000,
    "closed_but_too_deep": nested(MAX_DEPTH),
    "over_the_size_limit": '{"memory_id": "mem_001", "is_stale": true} ' + "x" * MAX_REPLY_CHARS,
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_reply_is_an_unparseable_reply_in_every_parser(kind):
    text = HOSTILE[kind]
    audit = parse_audit_reply(text, IDS)
    assert audit.unparseable and audit.judgements == {} and audit.failures == len(IDS)
    assert parse_probe_answer(text, "state", (1, 1)).problem == "no JSON object with 'state'"
    judged = parse_stale_judgement(text, ["dim1"])
    assert judged.passes == {"dim1": None} and judged.problem == "no JSON object in the reply"


def test_a_value_as_deep_as_the_limit_still_parses():
    parsed = parse_audit_reply(nested(MAX_DEPTH - 2), IDS)  # the object, "x"'s list, and the lists inside
    assert parsed.judgements["mem_001"].is_stale is True


def test_objects_after_a_too_deep_run_are_still_found():
    text = "[" * 1000 + " " + json.dumps([{"memory_id": "mem_002", "is_stale": False}])
    assert parse_audit_reply(text, IDS).judgements["mem_002"].is_stale is False


def test_a_deep_direction_is_an_invalid_move_not_a_crash():
    value: list = []
    for _ in range(50_000):
        value = [value]
    choice = parse_move([SimpleNamespace(function="move", arguments={"direction": value}, parse_error=None)])
    assert choice.direction is None and "nested over" in choice.problem


SURROGATES = st.sampled_from(["\udcff", "\ud800", "\udfff", "\ud83d\ude00"])
WITH_SURROGATES = st.lists(st.characters() | SURROGATES, max_size=40).map("".join)


def lone_surrogates(text: str) -> int:
    """Surrogates not in a high-low pair, counted here character by character."""
    count, i = 0, 0
    while i < len(text):
        code = ord(text[i])
        if 0xD800 <= code <= 0xDBFF and i + 1 < len(text) and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            i += 2
            continue
        count += 0xD800 <= code <= 0xDFFF
        i += 1
    return count


@settings(max_examples=300, deadline=None)
@given(WITH_SURROGATES)
def test_loggable_text_encodes_and_counts_each_lone_surrogate(text):
    clean, replaced = loggable(text)
    clean.encode("utf-8")  # what the log writer does
    assert replaced == lone_surrogates(text)
    if replaced == 0 and all(not 0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert clean == text
    for parse in (lambda t: parse_audit_reply(t, IDS), lambda t: parse_probe_answer(t, "state", (0, 1))):
        parse(text)  # and the parsers read it as it came


def test_a_model_output_with_surrogates_in_text_and_tool_calls_is_made_loggable():
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput
    from inspect_ai.tool import ToolCall

    message = ChatMessageAssistant(
        content="bad \udcff text",
        tool_calls=[ToolCall(id="1", function="move", arguments={"direction": "UP\ud800", "\udcffkey": ["\udfff"]})],
    )
    output = ModelOutput(model="m", choices=[ChatCompletionChoice(message=message, stop_reason="stop")])
    clean = loggable_output(output)
    clean.model_dump_json()
    assert clean.completion == "bad \ufffd text"
    assert clean.message.tool_calls[0].arguments == {"direction": "UP\ufffd", "\ufffdkey": ["\ufffd"]}
    same = ModelOutput.from_content(model="m", content="fine")
    assert loggable_output(same) is same


def best_of_n(text: str, n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        parse_audit_reply(text, IDS)
        times.append(time.perf_counter() - start)
    return min(times)



#: Adversarial replies of a given length: each defeats a naive search differently.
ADVERSARIAL = {
    "braces": lambda n: "{" * n,  # quadratic error positions before
    "keys": lambda n: ('{"a":' * n)[:n],  # every start nests too deep
    "quoted_braces": lambda n: ('"{' * n)[:n],  # starts inside strings: rescans
}


def within(text: str, bound: float) -> bool:
    """Whether the best of 3 timed parses of ``text`` takes at most ``bound``
    seconds: the best of 3 is within it as soon as one is, so the timing stops there."""
    return any(best_of_n(text, 1) <= bound for _ in range(3))


@pytest.mark.parametrize("kind", list(ADVERSARIAL))
def test_parse_time_grows_linearly(kind):
    """A reply 20 times longer takes at most 40 times as long (linear, with room for noise)."""
    small, large = ADVERSARIAL[kind](50_000), ADVERSARIAL[kind](1_000_000)
    assert within(large, 40 * best_of_n(small, 3))
