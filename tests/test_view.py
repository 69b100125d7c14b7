"""What a user sees in ``inspect view``: detect's messages
are the audit conversation, each navigation step is one transcript line, each
audit is a named span holding the auditor's model calls and followed by its
summary line, the trajectory is drawn as a text map in the score explanation,
no two adjacent text parts of a prompt run together, and a task has one name
however it was started.

Expected values come from the dataset JSONL and from computations in this
file (the map is drawn here from the trajectory; the step lines are read with
a pattern of this file), never from the harness's own formatting code.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, ContentImage, ContentText
from test_navigate import fired_events, flip, load_jsonl, mock, text_output, tool_output

from spatialstale_evals import task_functions
from spatialstale_evals.analysis.logs import suite_family
from spatialstale_evals.detect import detect
from spatialstale_evals.harness.observe import user_message
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe

NAVIGATOR, AUDITOR = "spatialstale/memory", "spatialstale/observer"
ENTRY_LINE = re.compile(r"^\[mem_\d{3}\] .*$", re.MULTILINE)
#: A step line as this test reads it: step, from, move, fallback, to, and what follows.
STEP_LINE = re.compile(
    r"^step (\d+): \((\d+),(\d+)\) (UP|DOWN|LEFT|RIGHT)(?: \(fallback: ([^)]*)\))? -> \((\d+),(\d+)\)(.*)$"
)
CHANGED_CELL = re.compile(r"\((\d+),(\d+)\) now ([FH])")
FIXTURES = Path(__file__).parent / "fixtures"


def resolved(log):
    return [resolve_sample_attachments(s, "full") for s in log.samples]


def run(tasks, log_dir, model=NAVIGATOR, **kwargs):
    logs = inspect_eval(tasks, model=model, log_dir=str(log_dir), display="none", log_realtime=False, **kwargs)
    assert all(log.status == "success" for log in logs), [log.error for log in logs]
    return logs


@pytest.fixture(scope="module")
def navigate_logs(tmp_path_factory):
    """omcd on L3 (events, re-audits) and no_filter on L2 (deaths), the memory
    agent navigating and, for omcd, the observer auditing (the ``auditor``
    role), so the two models' calls can be told apart by name."""
    tasks = [
        navigate(regime="L3", strategy="omcd", epochs=1),
        navigate(regime="L2", strategy="no_filter", epochs=1),
        navigate(regime="L2", strategy="self_verify", epochs=1),
    ]
    return run(tasks, tmp_path_factory.mktemp("navigate"), limit=4, model_roles={"auditor": AUDITOR})


@pytest.fixture(scope="module")
def detect_log(tmp_path_factory):
    (log,) = run([detect(regime="L3", batch_size=10)], tmp_path_factory.mktemp("detect"), model=AUDITOR, limit=2)
    return log


# -- detect: the Messages tab ------------------------------------------------------------


def test_detect_messages_are_the_audit_conversation(detect_log):
    """The system message once, then every call's prompt and reply in order:
    the prompts hold the dataset's entries, each exactly once per window, and
    the replies are the model's own."""
    jsonl = {row["id"]: row for row in load_jsonl("L3").values()}
    for sample in resolved(detect_log):
        entries = [m["text"] for m in jsonl[sample.id]["memory"]]
        windows = len(jsonl[sample.id]["events"])
        calls = [e for e in sample.events if e.event == "model"]
        messages = sample.messages
        assert isinstance(messages[0], ChatMessageSystem) and messages[0].text == calls[0].input[0].text
        pairs = list(zip(messages[1::2], messages[2::2]))
        assert len(messages) == 1 + 2 * len(calls) and len(calls) == windows * math.ceil(len(entries) / 10)
        for (user, reply), call in zip(pairs, calls):
            assert isinstance(user, ChatMessageUser) and isinstance(reply, ChatMessageAssistant)
            assert user.text == call.input[-1].text  # what the call was sent
            assert reply.text == call.output.completion and reply.text.startswith("[{")
        per_window = [ENTRY_LINE.findall(u.text) for u, _ in pairs]
        for w in range(windows):
            shown = [line for batch in per_window[w * 7 : (w + 1) * 7] for line in batch]
            assert shown == entries, f"{sample.id} window {w}"
        assert not any(sample.input == m.text for m in messages), "the placeholder input is gone"


def test_detect_audit_spans_hold_their_calls_and_a_summary_follows(detect_log):
    for sample in resolved(detect_log):
        spans = {e.id: e for e in sample.events if e.event == "span_begin" and e.type == "agent"}
        windows = sample.scores["detection_scorer"].metadata["windows"]
        assert [s.name for s in spans.values()] == [f"audit step {w['step']}" for w in windows]
        for span, window in zip(spans.values(), windows):
            calls = [e for e in sample.events if e.event == "model" and e.span_id == span.id]
            assert len(calls) == window["calls"] == 7
            summary = [e for e in sample.events if e.event == "info" and e.source == span.name][-1]
            assert summary.span_id != span.id, "the summary follows the span, in the solver's transcript"
            flagged = ", ".join(window["flagged"]) or "none"
            assert f"flagged {len(window['flagged'])}: {flagged};" in summary.data
            assert f"(tp {window['tp']}, fp {window['fp']}, fn {window['fn']}, tn {window['tn']})" in summary.data
        assert all(e.span_id in spans for e in sample.events if e.event == "model")


# -- navigate: one line per step -----------------------------------------------------------


def step_lines(sample):
    return [e.data for e in sample.events if e.event == "info" and e.source == "step"]


def check_steps(sample, record, inst):
    """Exactly one step line per step, after that step's navigator call, whose
    position, move, fallback, end and events match the episode record."""
    lines, budget = step_lines(sample), sample.metadata["max_steps"]
    assert len(lines) == record["steps"] == len(record["actions"])
    fallbacks = {f["step"]: f["problem"] for f in record["fallbacks"]}
    fired = {e["step"]: e for e in fired_events(inst, record["steps"], record["outcome"])}
    grid = list(inst["grid"])
    for i, line in enumerate(lines):
        match = STEP_LINE.match(line)
        assert match, line
        step, r0, c0, action, problem, r1, c1, rest = match.groups()
        assert int(step) == i + 1
        assert [int(r0), int(c0)] == record["trajectory"][i] and action == record["actions"][i]
        assert [int(r1), int(c1)] == record["trajectory"][i + 1]
        assert problem == fallbacks.get(i + 1)
        last = i + 1 == record["steps"]
        if last and record["outcome"] in ("success", "death", "timeout"):
            assert rest.endswith(f": {record['outcome']}") or f": {record['outcome']};" in rest, line
        else:
            assert f", {budget - i - 1} steps left" in rest, line
        if i + 1 in fired:
            grid = flip(grid, fired[i + 1]["cells"])
            changed = [((int(r), int(c)), k) for r, c, k in CHANGED_CELL.findall(rest)]
            assert changed == [((r, c), grid[r][c]) for r, c in fired[i + 1]["cells"]], line
        else:
            assert "the lake changed" not in rest
    # each line follows its step's navigator call, before the next one
    order = ["nav" if e.event == "model" else "step" for e in sample.events if is_navigator_call(e) or is_step_line(e)]
    assert order == ["nav", "step"] * record["steps"]


def is_navigator_call(event) -> bool:
    return event.event == "model" and any(t.name == "move" for t in event.tools)


def is_step_line(event) -> bool:
    return event.event == "info" and event.source == "step"


def test_each_step_has_one_line_matching_the_record(navigate_logs):
    checked = 0
    for log in navigate_logs:
        jsonl = load_jsonl(log.eval.metadata["regime"])
        for sample in resolved(log):
            record = sample.scores["navigation_scorer"].metadata
            check_steps(sample, record, jsonl[sample.id])
            checked += record["steps"]
    assert checked > 50


def test_fallback_steps_say_so(tmp_path):
    """A navigator whose every other reply has no tool call (the first: 6
    steps left): those steps are the greedy fallback, and their lines say why."""

    def generate(input, tools, tool_choice, config):
        left = int(re.search(r"Steps left: (\d+)", input[-1].text).group(1))
        return text_output("I think I will go down.") if left % 2 == 0 else tool_output("move", {"direction": "UP"})

    task = navigate(regime="L1", strategy="no_memory", epochs=1, max_steps=6)
    (log,) = run([task], tmp_path, model=mock(generate), limit=10)
    jsonl = load_jsonl("L1")
    for sample in resolved(log):
        record = sample.scores["navigation_scorer"].metadata
        assert record["fallbacks"], "the mock's replies without a call fell back"
        check_steps(sample, record, jsonl[sample.id])
        assert any("(fallback: no tool call)" in line for line in step_lines(sample))


# -- navigate: the audits as spans -----------------------------------------------------


def test_audit_spans_hold_the_auditors_calls_and_a_summary_follows(navigate_logs):
    """Every auditor call sits in an ``agent`` span named after its audit,
    which holds no navigator call; each audit in the record has its span
    (omcd, self_verify) and a summary line after it with the record's
    removed entries and confusion counts."""
    audits_seen = 0
    for log in navigate_logs:
        strategy = log.eval.metadata["strategy"]
        for sample in resolved(log):
            record = sample.scores["navigation_scorer"].metadata
            spans = {e.id: e for e in sample.events if e.event == "span_begin" and e.type == "agent"}
            calls = [e for e in sample.events if e.event == "model"]
            for call in calls:
                in_audit = call.span_id in spans
                assert in_audit == (call.model == AUDITOR), (call.model, call.span_id)
            if strategy == "no_filter":
                assert not spans and not record["audits"]
                continue
            label = "self_verify audit" if strategy == "self_verify" else "omcd audit"
            assert [s.name for s in spans.values()] == [f"{label} ({a['reason']})" for a in record["audits"]]
            for span, audit in zip(spans.values(), record["audits"]):
                assert sum(c.span_id == span.id for c in calls) == audit["calls"] > 0
                (summary,) = [
                    e for e in sample.events if e.event == "info" and e.source == span.name and "F1" in e.data
                ]
                assert summary.span_id not in spans
                removed = ", ".join(audit["removed"]) or "none"
                assert f"{audit['judged']} entries judged in {audit['calls']} call(s)" in summary.data
                assert f"removed {len(audit['removed'])}: {removed};" in summary.data
                assert f"F1 {audit['f1']:.3f} vs truth (tp {audit['tp']}, fp {audit['fp']}, fn {audit['fn']}" in (
                    summary.data
                )
                audits_seen += 1
    assert audits_seen >= 8


# -- navigate: the trajectory as a text map ------------------------------------------------


def draw(inst: dict, record: dict) -> str:
    """The map of the README's legend, drawn here: the lake at the end (``.``
    ice, ``H`` hole, lower case where it differs from the snapshot g0), each
    cell the agent left showing its last move there, ``@`` the end, ``X`` a death."""
    grid = list(inst["grid"])
    for event in fired_events(inst, record["steps"], record["outcome"]):
        grid = flip(grid, event["cells"])
    plain, changed = {"F": ".", "H": "H", "S": "S", "G": "G"}, {"F": "f", "H": "h"}
    cells = [
        [changed[k] if k != inst["g0"][r][c] else plain[k] for c, k in enumerate(row)] for r, row in enumerate(grid)
    ]
    for (r, c), action in zip(record["trajectory"], record["actions"]):
        cells[r][c] = {"UP": "^", "DOWN": "v", "LEFT": "<", "RIGHT": ">"}[action]
    r, c = record["trajectory"][-1]
    cells[r][c] = "X" if record["outcome"] == "death" else "@"
    return "\n".join(["  01234567", *(f"{i} " + "".join(row) for i, row in enumerate(cells))])


def test_the_map_is_the_trajectory_drawn(navigate_logs):
    outcomes = set()
    for log in navigate_logs:
        jsonl = load_jsonl(log.eval.metadata["regime"])
        for sample in log.samples:
            score = sample.scores["navigation_scorer"]
            expected = draw(jsonl[sample.id], score.metadata)
            assert score.metadata["map"] == expected
            assert f"\n\n```\n{expected}\n```\n\n" in score.explanation
            outcomes.add(score.metadata["outcome"])
    assert {"success", "death"} <= outcomes


# -- no two text parts run together ----------------------------------------------------


def test_user_message_joins_adjacent_text_parts_with_a_newline():
    image = ContentImage(image="data:image/png;base64,AAAA")
    parts = [ContentText(text="a"), ContentText(text="b"), image, ContentText(text="c"), ContentText(text="d")]
    content = user_message(parts).content
    assert [p.text if isinstance(p, ContentText) else "<image>" for p in content] == ["a\nb", "<image>", "c\nd"]
    assert user_message([ContentText(text="a"), ContentText(text="b")]).content == "a\nb"


def run_together(content) -> list[tuple[str, str]]:
    """Adjacent text parts with no whitespace where they meet (the end of one, the start of the next)."""
    return [
        (a.text[-30:], b.text[:30])
        for a, b in zip(content, content[1:])
        if isinstance(a, ContentText)
        and isinstance(b, ContentText)
        and not (a.text[-1:].isspace() or b.text[:1].isspace())
    ]


@pytest.fixture(scope="module")
def image_logs(tmp_path_factory):
    """Every task that sends content lists, in the layouts that put text next
    to text: memory before and after the observation, partial observability
    (its line before the caption; the audit's before the entries), a labelled
    filter mode, detect and the probes."""
    nav = dict(modality="image", epochs=1, max_steps=4)
    tasks = [
        navigate(regime="L2", strategy="omcd", **nav),
        navigate(regime="L2", strategy="no_filter", memory_position="after", **nav),
        navigate(regime="L3", strategy="omcd", view_radius=1, filter_mode="history", **nav),
        navigate(regime="L2", strategy="no_memory", view_radius=2, **nav),
        detect(regime="L2", modality="image"),
        probe(regime="L2", modality="image"),
        probe(regime="L2", modality="image", conversation="shared"),
    ]
    return run(tasks, tmp_path_factory.mktemp("image"), model=AUDITOR, limit=1)


def test_no_adjacent_text_parts_join_without_whitespace(image_logs):
    lists = 0
    for log in image_logs:
        for sample in resolved(log):
            for event in (e for e in sample.events if e.event == "model"):
                for message in event.input:
                    if isinstance(message.content, list):
                        lists += 1
                        assert not run_together(message.content), (log.eval.task, message.content)
            for message in sample.messages:
                if isinstance(message.content, list):
                    assert not run_together(message.content)
    assert lists > 40


def test_memory_and_caption_are_one_part_with_a_newline_between(image_logs):
    """The last note, a newline, the caption, in one part: as two parts,
    viewers and chat templates join them as "...walkCurrent"."""
    log = image_logs[0]
    sample = resolved(log)[0]
    first = next(e for e in sample.events if e.event == "model" and any(t.name == "move" for t in e.tools))
    text = first.input[-1].content[0].text
    assert re.search(r"safe to walk\nCurrent observation: the image shows the lake\.", text), text[-300:]


# -- one task name --------------------------------------------------------------------


def test_every_task_is_named_in_the_package_namespace():
    """The name Inspect logs (``eval.task``) is the registry's however the task
    was made; ``test_detect`` runs it from the file too."""
    for family, function in task_functions().items():
        args = {"path": str(FIXTURES / "stale_mini.json")} if family == "stale" else {}
        assert function(**args).name == f"spatialstale_evals/{family}"


def test_logs_of_either_name_are_read(detect_log):
    """Older logs may carry ``detect`` (a task run from its file) or
    ``spatialstale_evals/detect``: the report reads both."""
    header = detect_log.model_copy(deep=True)
    for name in ("detect", "spatialstale_evals/detect"):
        header.eval.task = name
        assert suite_family(header) == "detect"
    header.eval.task = "detect_something_else"
    assert suite_family(header) is None


def test_logged_names_are_one(detect_log, navigate_logs, image_logs):
    names = {log.eval.task for log in (detect_log, *navigate_logs, *image_logs)}
    assert names == {"spatialstale_evals/detect", "spatialstale_evals/navigate", "spatialstale_evals/probe"}
    assert json.dumps(sorted(names))  # plain strings
