"""``stale -T memory_access=tool`` (docs/tasks.md#stale, "Memory in the store") on the
project's fixture (``tests/fixtures/stale_mini.json``): the prompt setting sent and
scored byte for byte as before; the store holding exactly the record's sessions;
the retrieval evidence against what the scripted readers must read, worked out
here from the records; the conversation modes; the request a Claude model gets;
the cost estimate against the logged usage; and the report's side-by-side table."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, resolve_sample_attachments
from inspect_ai.model import ChatMessageTool, GenerateConfig, ModelAPI, ModelOutput, get_model, modelapi

from spatialstale_evals.stale import stale
from spatialstale_evals.stale_corpus.memory_access import stale_memory_probes

MINI = Path(__file__).parent / "fixtures" / "stale_mini.json"
RAW = json.loads(MINI.read_text(encoding="utf-8"))
BY_UID = {r["uid"]: r for r in RAW}
DIMS = ("dim1", "dim2", "dim3")
CELLS = [f"{d}_{t}" for t in ("T1", "T2") for d in DIMS]
#: What the prompt setting sent and scored before the memory-tool setting existed (task version 4-B): per run,
#: sha256 of every model call's input, tools and role, and of every sample's scores, metadata and messages.
BEFORE = {
    ("independent", "stale-aware"): ("f6376b1f41d16280", "dba5c8a6bf531d26"),
    ("independent", "stale-naive"): ("7016a4b19a67f5ef", "d3850322099e64aa"),
    ("shared", "stale-aware"): ("2749a025b15df94b", "f7933dbef7e0f612"),
}


def run(tmp_path: Path, model: str = "spatialstale/stale-aware", **args: Any) -> EvalLog:
    task = stale(path=str(MINI), **args)
    log = inspect_eval(task, model=model, model_roles={"grader": "spatialstale/judge"}, log_dir=str(tmp_path),
                       display="none")[0]  # fmt: skip
    assert log.status == "success", log.error
    log.samples = [resolve_sample_attachments(s, "full") for s in log.samples or []]
    return log


def sessions(raw: dict) -> list[list[dict]]:
    history = raw["haystack_session"]
    return [history] if all(isinstance(t, dict) for t in history) else history


def relevant(raw: dict) -> list[int]:
    return sorted(raw.get("relevant_session_index", [0]))


def timestamps(raw: dict) -> list[str]:
    found = raw.get("timestamps")
    return [found] if isinstance(found, str) else list(found)


def expected_files(raw: dict) -> dict[str, str]:
    """The files the contract names: ``/memories/conversations/<index>_<YYYY-MM-DD>.md``, the date line, the turns."""
    files = {}
    for i, (session, stamp) in enumerate(zip(sessions(raw), timestamps(raw))):
        y, m, d = re.match(r"(\d{4})/(\d{2})/(\d{2})", stamp).groups()
        text = f"[Session date: {stamp}]\n" + "".join(f"{t['role']}: {t['content']}\n" for t in session)
        files[f"/memories/conversations/{i:03d}_{y}-{m}-{d}.md"] = text
    return files


@pytest.fixture(scope="module")
def tool_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    folder = tmp_path_factory.mktemp("tool")
    agents = ("stale-aware", "stale-naive", "stale-noread")
    return {a: run(folder, f"spatialstale/{a}", memory_access="tool") for a in agents}


def fingerprint(log: EvalLog) -> tuple[str, str]:
    calls, scores = [], []
    for s in log.samples:
        for e in s.events:
            if e.event == "model":
                calls.append(json.dumps({"input": [m.model_dump(mode="json", exclude={"id"}) for m in e.input],
                                         "tools": [t.model_dump(mode="json") for t in e.tools], "role": e.role},
                                        sort_keys=True))  # fmt: skip
        scores.append(json.dumps({k: (v.value, v.explanation, v.metadata) for k, v in s.scores.items()},
                                 sort_keys=True, default=str))  # fmt: skip
        scores.append(json.dumps({k: v for k, v in s.metadata.items() if k != "stale_prompt_version"}, sort_keys=True))
        scores.append(json.dumps([m.model_dump(mode="json", exclude={"id"}) for m in s.messages], sort_keys=True))
    return tuple(hashlib.sha256("\n".join(x).encode()).hexdigest()[:16] for x in (calls, scores))  # type: ignore


@pytest.mark.parametrize("conversation, agent", list(BEFORE))
def test_the_prompt_setting_is_sent_and_scored_as_before(conversation: str, agent: str, tmp_path: Path) -> None:
    log = run(tmp_path, f"spatialstale/{agent}", conversation=conversation)
    assert fingerprint(log) == BEFORE[(conversation, agent)]


def test_the_store_holds_exactly_the_records_sessions(tool_logs: dict[str, EvalLog]) -> None:
    plan = [step.solver for step in tool_logs["stale-aware"].plan.steps]
    assert plan == [f"spatialstale_evals/{stale_memory_probes.__name__}"]
    for sample in tool_logs["stale-aware"].samples:
        raw = BY_UID[sample.id]
        files = sample.store["MemoryStore:files"]
        assert files == expected_files(raw)  # count, order of names, dates, every turn's text
        assert list(files) == sorted(files) and len(files) == len(sessions(raw))
        assert sample.store["MemoryStore:dirs"] == ["/memories/conversations"]
        meta = sample.metadata["memory"]
        assert meta["relevant_files"] == [list(expected_files(raw))[i] for i in relevant(raw)]
        assert [m.role for m in sample.input] == ["system"]  # the history is not in the conversation
        assert "memory directory" in sample.input[0].text and "out of date" not in sample.input[0].text


def reads(sample: Any) -> dict[str, list[str]]:
    return {d: a["memory"]["files_read"] for d, a in sample.store["StaleState:answers"].items()}


def test_the_evidence_is_what_the_scripted_readers_read(tool_logs: dict[str, EvalLog]) -> None:
    """stale-aware reads from the newest session back to the newest relevant one, stale-naive from the oldest
    on to the oldest relevant one, stale-noread nothing: so the first reads the new state before every answer,
    the second only where one session holds both states (the flat history), the third never."""
    for agent, log in tool_logs.items():
        for sample in log.samples:
            raw = BY_UID[sample.id]
            names, rel, n = list(expected_files(raw)), relevant(raw), len(sessions(raw))
            order = {
                "stale-aware": list(range(n - 1, max(rel) - 1, -1)),
                "stale-naive": list(range(0, min(rel) + 1)),
                "stale-noread": [],
            }[agent]
            for d, answer in sample.store["StaleState:answers"].items():
                memory = answer["memory"]
                assert memory["files_read"] == [names[i] for i in order], (agent, sample.id, d)
                assert memory["relevant_read"] == [i for i in rel if i in order]
                assert memory["new_state_read"] == (max(rel) in order)
                assert memory["calls"] == (len(order) + 1 if order else 0)  # the folder, then the files
                expected_bytes = sum(len(m.text.encode()) for m in sample.messages
                                     if isinstance(m, ChatMessageTool) and "`cat -n`" in m.text) / 3  # fmt: skip
                assert memory["bytes_read"] == expected_bytes
            counts = sample.scores["stale_judge"].metadata["counts"]
            assert counts["files_read"] == len(order) and counts["memory_calls"] == 3 * (len(order) + 1 if order else 0)
            if agent == "stale-aware":
                explanation = sample.scores["stale_judge"].explanation
                assert f"relevant sessions read before the answer: {max(rel)}" in explanation


def metric(log: EvalLog, name: str) -> float:
    return log.results.scores[0].metrics[name].value


def test_the_readers_pass_and_fail_as_they_read(tool_logs: dict[str, EvalLog]) -> None:
    flat = sum(len(r["haystack_session"]) and all(isinstance(t, dict) for t in r["haystack_session"]) for r in RAW)
    aware, naive, noread = (tool_logs[a] for a in ("stale-aware", "stale-naive", "stale-noread"))
    assert [metric(aware, c) for c in CELLS] == [1.0] * 6 and [metric(naive, c) for c in CELLS] == [0.0] * 6
    assert [metric(noread, c) for c in CELLS] == [0.0] * 6
    assert metric(aware, "new_state_read_rate") == 1.0 and metric(aware, "accuracy_new_state_read") == 1.0
    assert metric(naive, "new_state_read_rate") == pytest.approx(flat / len(RAW))  # retrieval failures, one arbitration
    assert metric(naive, "accuracy_new_state_read") == 0.0 and metric(naive, "accuracy_new_state_unread") == 0.0
    assert metric(noread, "memory_calls_per_scenario") == 0.0 and metric(noread, "new_state_read_rate") == 0.0


class NoteTaker(ModelAPI):
    """An agent that writes a note before its first answer and views it before each later one."""

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        super().__init__(model_name, config=GenerateConfig())

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        NoteTaker.requests.append(input)
        last = max(i for i, m in enumerate(input) if m.role == "user")
        answered = [m for m in input[last:] if isinstance(m, ChatMessageTool)]
        probes = [m for m in input if m.role == "user"]
        if answered or not tools:
            return ModelOutput.from_content("notes", f"answered: {answered[-1].text[-40:] if answered else ''}")
        if len(NoteTaker.requests) == 1:
            args = {"command": "create", "path": "/memories/note.md", "file_text": "I wrote this"}
        else:
            args = {"command": "view", "path": "/memories/note.md"}
        return ModelOutput.for_tool_call("notes", "memory", args, tool_call_id=f"n{len(probes)}")

    requests: list[Any] = []


@modelapi(name="notetaker")
def _notetaker() -> type[NoteTaker]:
    return NoteTaker


@pytest.mark.parametrize("conversation", ["independent", "shared"])
def test_independent_resets_the_messages_and_keeps_the_store(conversation: str, tmp_path: Path) -> None:
    NoteTaker.requests = []
    path = tmp_path / "one.json"
    path.write_text(json.dumps(RAW[:1]), encoding="utf-8")
    task = stale(path=str(path), memory_access="tool", conversation=conversation)
    log = inspect_eval(task, model="notetaker/x", model_roles={"grader": "spatialstale/judge"}, log_dir=str(tmp_path),
                       display="none")[0]  # fmt: skip
    assert log.status == "success", log.error
    first_calls = [r for r in NoteTaker.requests if r[-1].role == "user"]
    queries = [RAW[0]["probing_queries"][f"{d}_query"] for d in DIMS]
    for k, request in enumerate(first_calls):
        shown = [m.text for m in request if m.role == "user"]
        assert shown == (queries[k : k + 1] if conversation == "independent" else queries[: k + 1])
    answers = log.samples[0].store["StaleState:answers"]
    assert [a["memory"]["writes"] for a in answers.values()] == [1, 0, 0]
    assert all("I wrote this" in a["answer"] for a in list(answers.values())[1:])  # read back: the store was kept
    assert log.samples[0].store["MemoryStore:files"]["/memories/note.md"] == "I wrote this"


def test_the_request_for_a_claude_model_carries_the_native_memory_tool(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("anthropic")
    NoteTaker.requests = []
    log = run(tmp_path, "spatialstale/stale-aware", memory_access="tool", dimensions="dim1", types="T1")
    (tools,) = {tuple(t.name for t in e.tools) for s in log.samples for e in s.events if e.event == "model" and e.tools}
    assert tools == ("memory",)
    sent = next(e.tools for s in log.samples for e in s.events if e.event == "model" and e.tools)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    api = get_model("anthropic/claude-sonnet-4-5").api
    params = [p for tool in sent for p in api.tool_params_for_tool_info(tool, GenerateConfig())]
    assert params == [{"type": "memory_20250818", "name": "memory"}]


@pytest.mark.parametrize(
    "args, message",
    [
        ({"memory_access": "file"}, "memory_access must be one of prompt, tool"),
        ({"memory_access": "tool", "context_tokens": 500}, "context_tokens=500: the history's budget"),
        ({"max_memory_calls": 3}, "max_memory_calls=3: the memory calls per probe"),
        ({"memory_access": "tool", "max_memory_calls": -1}, "non-negative"),
    ],
)
def test_bad_memory_parameters_fail_before_any_call(args: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        stale(path=str(MINI), **args)


def test_the_estimate_is_the_logged_usage_and_the_bounds_hold(tool_logs: dict[str, EvalLog]) -> None:
    from spatialstale_evals.runs.cost import estimate_cost, stand_ins
    from spatialstale_evals.stale_corpus.cost import stale_cost

    usage = tool_logs["stale-aware"].stats.model_usage["spatialstale/stale-aware"]
    model, roles = stand_ins("stale")  # the family's cost agents: stale-aware and the judge
    n, agent, _ = stale_cost(model, roles["grader"], path=str(MINI), memory_access="tool")
    assert n == len(RAW) and (agent.input_tokens, agent.output_tokens) == (usage.input_tokens, usage.output_tokens)
    _, low, low_judge = stale_cost(model, roles["grader"], "low", path=str(MINI), memory_access="tool")
    _, high, high_judge = stale_cost(model, roles["grader"], "high", path=str(MINI), memory_access="tool")
    # the registry's contract (what the matrix reads): the bounds, the agent's and the grader's together
    assert estimate_cost("stale", (), path=str(MINI), memory_access="tool") == (low + low_judge, high + high_judge)
    calls = [sum(len(sessions(r)) + 2 for _ in DIMS) for r in RAW]  # the folder, every file, the answer
    assert (low.calls, high.calls) == (2 * 3 * len(RAW), sum(calls))
    assert low.input_tokens < agent.input_tokens < high.input_tokens
    noread = tool_logs["stale-noread"].stats.model_usage["spatialstale/stale-noread"]
    assert noread.input_tokens < low.input_tokens  # an agent that never looks costs less than the low bound


def test_the_report_puts_the_settings_side_by_side_with_the_retrieval_split(tool_logs, tmp_path: Path) -> None:
    from inspect_ai.log import write_eval_log

    from spatialstale_evals.analysis.report import build_report

    for agent, log in tool_logs.items():
        write_eval_log(log, str(tmp_path / f"tool-{agent}.eval"))
    for agent in ("stale-aware", "stale-naive"):
        run(tmp_path, f"spatialstale/{agent}")
    table = build_report(tmp_path, tmp_path / "out").tables["stale_access"].set_index(["model", "dimension"])
    flat = [r["uid"] for r in RAW if all(isinstance(t, dict) for t in r["haystack_session"])]
    aware, naive = table.loc[("spatialstale/stale-aware", "all")], table.loc[("spatialstale/stale-naive", "all")]
    assert (aware["prompt_acc"], aware["tool_acc"], aware["passed_read"], aware["failed_unread"]) == (1.0, 1.0, 15, 0)
    assert (naive["failed_read"], naive["failed_unread"]) == (3 * len(flat), 3 * (len(RAW) - len(flat)))
    assert aware["n_pairs"] == len(RAW) and aware["diff_pp"] == 0.0
    noread = table.loc[("spatialstale/stale-noread", "all")]
    assert noread["prompt_scenarios"] == 0 and noread["memory_calls"] == 0.0  # no prompt run of it: nothing paired
