"""The ``stale`` task (specification.md#stale) on a fixture of our own in STALE's schema
(``tests/fixtures/stale_mini.json``: invented users and facts, nothing from
the STALE dataset): the loader and its errors, trimming against a count done
here, the conversation modes read off the model calls, the judge against
hand labels, judge failures left unscored, a missing grader, the hub offline,
and re-judging a log with ``inspect score``."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from _warm import WarmPython
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log, resolve_sample_attachments
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, modelapi

from spatialstale_evals.stale import stale
from spatialstale_evals.stale_corpus.corpus import CorpusError, load_corpus, parse_record, trim
from spatialstale_evals.stale_corpus.judgement import parse_stale_judgement
from spatialstale_evals.stale_corpus.scoring import judge_messages
from spatialstale_evals.stale_corpus.scripted import judge_reply

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "stale_mini.json"
LABELS = json.loads((FIXTURES / "stale_mini_labels.json").read_text(encoding="utf-8"))
RAW = json.loads(MINI.read_text(encoding="utf-8"))
DIMS = ("dim1", "dim2", "dim3")
CELLS = [f"{d}_{t}" for t in ("T1", "T2") for d in DIMS]


def run(tmp_path: Path, model: str = "spatialstale/stale-aware", grader: Any = "spatialstale/judge", **args) -> EvalLog:
    roles = {"grader": grader} if grader is not None else None
    task = stale(path=str(args.pop("path", MINI)), **args)
    log = inspect_eval(task, model=model, model_roles=roles, log_dir=str(tmp_path), display="none")[0]
    log.samples = [resolve_sample_attachments(s) for s in log.samples or []]
    return log


def values(log: EvalLog) -> dict[str, dict[str, float]]:
    return {str(s.id): s.scores["stale_judge"].metadata["counts"] for s in log.samples}


def metric(log: EvalLog, name: str) -> float:
    return log.results.scores[0].metrics[name].value


def tokens(text: str) -> int:  # the documented counter, written here: 4 characters a token, rounded up
    return -(-len(text) // 4)


# -- loader ----------------------------------------------------------------------------


def test_both_history_shapes_and_both_type_keys_load() -> None:
    corpus = load_corpus(MINI)
    by_uid = {r.uid: r for r in corpus.records}
    assert list(by_uid) == [r["uid"] for r in RAW]
    flat = by_uid["mini-city-04"]  # one flat list of turns and ``conversation_type``
    assert len(flat.sessions) == 1 and len(flat.sessions[0]) == len(RAW[3]["haystack_session"])
    assert flat.type == "T2" and flat.relevant == (0,) and flat.timestamps == (RAW[3]["timestamps"],)
    nested = by_uid["mini-pet-01"]
    assert [len(s) for s in nested.sessions] == [len(s) for s in RAW[0]["haystack_session"]]
    assert nested.relevant == (1, 3) and nested.timestamps == tuple(RAW[0]["timestamps"])


def broken(change) -> dict:
    record = copy.deepcopy(RAW[0])
    change(record)
    return record


BAD_RECORDS = {
    "missing M_new": (lambda r: r.pop("M_new"), "missing field 'M_new'"),
    "history not a list": (lambda r: r.update(haystack_session="hello"), "haystack_session must be a list"),
    "empty history": (lambda r: r.update(haystack_session=[]), "haystack_session is empty"),
    "empty session": (lambda r: r["haystack_session"].__setitem__(2, []), "haystack_session[2] is an empty session"),
    "index out of range": (lambda r: r.update(relevant_session_index=[1, 9]), "[9] out of range"),
    "wrong type": (lambda r: r.update(type="T3"), "type / conversation_type / conflict_type must be one of T1, T2"),
    "types disagree": (lambda r: r.update(conflict_type="T2"), "the type keys disagree: type='T1', conflict_type='T2'"),
    "index a bool": (lambda r: r.update(relevant_session_index=True), "must be a session index or a list"),
    "bad turn": (lambda r: r["haystack_session"][0].__setitem__(0, {"role": "bot", "content": 1}), "[0][0] must be"),
    "no probe": (lambda r: r["probing_queries"].pop("dim2_query"), "probing_queries.dim2_query"),
    "timestamps short": (lambda r: r.update(timestamps=["2026"]), "one per session (5)"),
}


@pytest.mark.parametrize("name", list(BAD_RECORDS))
def test_each_malformed_record_is_named_by_index_and_uid_or_skipped_and_counted(name: str, tmp_path: Path) -> None:
    change, message = BAD_RECORDS[name]
    file = tmp_path / "bad.json"
    file.write_text(json.dumps([RAW[1], broken(change), RAW[2]]), encoding="utf-8")
    with pytest.raises(CorpusError) as error:
        load_corpus(file)
    assert "STALE record 1 (uid 'mini-pet-01')" in str(error.value) and message in str(error.value)
    assert "strict=false" in str(error.value)
    task = stale(path=str(file), strict=False)  # skipped, counted, the rest kept
    assert [s.id for s in task.dataset] == ["mini-job-02", "mini-diet-03"]
    assert task.metadata["records_skipped"] == 1 and message in task.metadata["skipped"][0]


def test_file_level_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not found: pass -T path="):
        load_corpus(tmp_path / "none.json")
    (tmp_path / "obj.json").write_text('{"uid": 1}', encoding="utf-8")
    with pytest.raises(CorpusError, match="must hold a JSON list"):
        load_corpus(tmp_path / "obj.json")
    (tmp_path / "dup.json").write_text(json.dumps([RAW[0], RAW[0]]), encoding="utf-8")
    with pytest.raises(CorpusError, match="record 1 .* used by an earlier record"):
        load_corpus(tmp_path / "dup.json")


@pytest.mark.parametrize(
    "args, message",
    [
        ({"types": "T3"}, "types must be one of T1, T2"),
        ({"dimensions": "dim4"}, "dimensions must be one of dim1, dim2, dim3"),
        ({"conversation": "threaded"}, "conversation must be one of independent, shared"),
        ({"context_tokens": 0}, "context_tokens must be a positive integer"),
        ({"strict": "yes"}, "strict must be true or false"),
        ({"source": "web"}, "source must be one of local, hub"),
        ({"source": "hub"}, "either -T path=<file> or -T source=hub"),
        ({"contxt_tokens": 5}, "unknown task parameter"),
    ],
)
def test_bad_parameters_fail_before_any_call(args: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        stale(path=str(MINI), **args)


def test_no_path_names_the_options() -> None:
    with pytest.raises(ValueError, match="pass -T path=<a STALE JSON file>, or -T source=hub"):
        stale()


def test_hub_offline_and_without_the_extra_say_to_pass_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache: nothing to fall back on
    with pytest.raises(CorpusError, match=r"could not download T1_T2_400_FULL\.json .* pass -T path=<file>"):
        stale(source="hub")
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # the extra not installed
    with pytest.raises(CorpusError, match=r'pip install -e "\.\[stale\]", or .* -T path='):
        stale(source="hub")


def test_types_filter_the_records_and_the_metrics() -> None:
    task = stale(path=str(MINI), types="T2", dimensions="dim2,dim1")
    assert [s.id for s in task.dataset] == [r["uid"] for r in RAW if r.get("type", r.get("conversation_type")) == "T2"]
    assert [m.__registry_info__.name.split("/")[-1] for m in task.metrics] == [
        "dim1_T2",
        "dim2_T2",
        "overall",
        "judge_failure_rate",
        "unanswered",
        "empty_answers",
        "truncated_answers",
        "answer_chars",
    ]


def test_samples_are_byte_identical_and_keyed_by_uid() -> None:
    first, second = ([s.model_dump_json() for s in stale(path=str(MINI)).dataset] for _ in range(2))
    assert first == second
    assert [json.loads(s)["id"] for s in first] == [r["uid"] for r in RAW]


# -- trimming --------------------------------------------------------------------------


def shown_sizes(raw: dict) -> list[int]:
    """Each session's tokens as the agent sees it (its date line on the first turn), counted here."""
    sizes = []
    for i, session in enumerate(raw["haystack_session"]):
        date = f"[Session date: {raw['timestamps'][i]}]\n"
        sizes.append(sum(tokens((date if j == 0 else "") + t["content"]) for j, t in enumerate(session)))
    return sizes


@pytest.mark.parametrize("budget", [10**6, 150, 120, 100, 60, 1])
def test_trimming_drops_oldest_sessions_keeps_relevant_and_fits(budget: int) -> None:
    raw = RAW[0]
    sizes, relevant = shown_sizes(raw), set(raw["relevant_session_index"])
    expected, total = list(range(len(sizes))), sum(sizes)
    for i in range(len(sizes)):  # oldest first, never a relevant one
        if total > budget and i not in relevant:
            expected.remove(i)
            total -= sizes[i]
    result = trim(parse_record(raw, 0), budget)
    assert list(result.kept) == expected and result.tokens == total and result.tokens_full == sum(sizes)
    assert relevant <= set(result.kept)
    assert result.over_budget == (total > budget)
    if budget >= sum(sizes[i] for i in relevant):
        assert result.tokens <= budget
    sample = next(iter(stale(path=str(MINI), context_tokens=budget).dataset))
    shown = [m.text for m in sample.input[1:]]  # after the system message
    assert shown == [
        (f"[Session date: {raw['timestamps'][i]}]\n" if j == 0 else "") + t["content"]
        for i in expected
        for j, t in enumerate(raw["haystack_session"][i])
    ]
    assert sample.metadata["trim"]["kept"] == expected


# -- conversations ---------------------------------------------------------------------


def agent_inputs(log: EvalLog) -> dict[str, list[list[str]]]:
    """Per sample, the texts of every message of each call the agent (no role) was sent."""
    return {
        str(s.id): [[m.text for m in e.input] for e in s.events if e.event == "model" and e.role is None]
        for s in log.samples
    }


@pytest.mark.parametrize("conversation", ["independent", "shared"])
def test_conversation_modes_as_the_model_calls_show(conversation: str, tmp_path: Path) -> None:
    log = run(tmp_path, conversation=conversation)
    assert log.status == "success", log.error
    for sample in log.samples:
        raw = next(r for r in RAW if r["uid"] == sample.id)
        history = [m.text for m in sample.input]
        calls = agent_inputs(log)[str(sample.id)]
        queries = [raw["probing_queries"][f"{d}_query"] for d in DIMS]
        assert len(calls) == 3
        answers = [a["answer"] for a in sample.store["StaleState:answers"].values()]
        for k, call in enumerate(calls):
            assert call[: len(history)] == history and call[-1] == queries[k]
            earlier = [] if conversation == "independent" else [x for i in range(k) for x in (queries[i], answers[i])]
            assert call[len(history) : -1] == earlier
        # the Messages tab: the history, then each probe and its answer
        assert [m.text for m in sample.messages] == history + [x for q, a in zip(queries, answers) for x in (q, a)]


# -- scripted agents and the judge ------------------------------------------------------


def test_stale_aware_passes_everything_and_stale_naive_nothing(tmp_path: Path) -> None:
    aware, naive = run(tmp_path / "a"), run(tmp_path / "n", model="spatialstale/stale-naive")
    for log, expected in ((aware, 1.0), (naive, 0.0)):
        assert log.status == "success", log.error
        for uid, value in values(log).items():
            raw_type = next(r.get("type", r.get("conversation_type")) for r in RAW if r["uid"] == uid)
            assert {k: v for k, v in value.items() if k in CELLS} == {f"{d}_{raw_type}": expected for d in DIMS}
            assert value["judge_failed"] == 0
        assert [metric(log, c) for c in CELLS] == [expected] * 6 and metric(log, "overall") == expected
        assert metric(log, "judge_failure_rate") == 0.0
    sample = aware.samples[0]
    assert len([e for e in sample.events if e.event == "model" and e.role == "grader"]) == 1  # one judge call


def test_judge_prompt_holds_the_truth_and_every_question_and_answer(tmp_path: Path) -> None:
    log = run(tmp_path)
    for sample in log.samples:
        raw = next(r for r in RAW if r["uid"] == sample.id)
        (call,) = [e for e in sample.events if e.event == "model" and e.role == "grader"]
        text = "\n".join(m.text for m in call.input)
        for field in ("M_old", "M_new", "explanation"):
            assert raw[field] in text
        for d, answer in sample.store["StaleState:answers"].items():
            assert raw["probing_queries"][f"{d}_query"] in text and answer["answer"] in text


def labelled_calls() -> list[tuple[str, dict[str, dict[str, str]]]]:
    """(uid, answers) of every judge call over the hand labels: the k-th labelled answer of each dimension
    that has one, together (pass answers first, then fail; dim1 also a hedge that passes and a fail by ignorance)."""
    records = {r.uid: r for r in load_corpus(MINI).records}
    calls = []
    for uid, dims in LABELS.items():
        for k in range(max(len(v) for v in dims.values())):
            calls.append((uid, {d: {"query": records[uid].queries[d], **v[k]} for d, v in dims.items() if k < len(v)}))
    return calls


def test_scripted_judge_against_the_hand_labels() -> None:
    """The lexical judge agrees with every label but the five hedges ("that may have changed since"), which pass
    the rubric's dim1 without naming the new state: a judge of words cannot see them, a model can."""
    records = {r.uid: r for r in load_corpus(MINI).records}
    agree, disagree = [], []
    for uid, answers in labelled_calls():
        r = records[uid]
        meta = {"m_old": r.m_old, "m_new": r.m_new, "explanation": r.explanation}
        judgement = parse_stale_judgement(judge_reply(judge_messages(meta, answers)), list(answers))
        for d, a in answers.items():
            (agree if judgement.passes[d] == (a["label"] == "pass") else disagree).append((uid, d, a["answer"]))
    assert (len(agree), len(disagree)) == (35, 5)
    hedges = {dims["dim1"][2]["answer"] for dims in LABELS.values()}
    assert {answer for _, d, answer in disagree if d == "dim1"} == hedges


NONE = (None, None, None)


@pytest.mark.parametrize(
    "reply, passes, problem",
    [
        ('{"dim1_eval": {"reasoning": "r", "pass": true}, "dim2_eval": {"pass": "FAIL"}, "dim3_eval": {"pass": 1}}',
         (True, False, True), None),
        ('Sure.\n```json\n{"dim1": "pass", "dim2": false, "dim3": {"verdict": "fail"}}\n```',
         (True, False, False), None),
        ('[{"dimension": "dim1", "pass": true}, {"dimension": "dim2", "pass": false}, '
         '{"dimension": "dim3", "pass": true}]', (True, False, True), None),
        ('{"dim1_eval": {"pass": true}, "dim3_eval": {"pass": "maybe"}}', (True, None, None),
         "no readable verdict for dim2, dim3"),
        ("", NONE, "empty reply"),
        ("I'm sorry, I can't grade this.", NONE, "refusal"),
        ("All three answers look fine to me.", NONE, "no JSON object in the reply"),
    ],
)  # fmt: skip
def test_judge_replies_are_read_leniently(reply: str, passes: tuple, problem: str | None) -> None:
    judgement = parse_stale_judgement(reply, DIMS)
    assert judgement.passes == dict(zip(DIMS, passes)) and judgement.problem == problem


FAULTS = {"mini-job-02": "error", "mini-diet-03": "empty", "mini-car-05": "prose"}


class FlakyJudge(ModelAPI):
    """A grader that answers as ``spatialstale/judge``, except on some records: it raises, replies empty, or prose."""

    BY_OLD_STATE = {r["M_old"]: FAULTS.get(r["uid"]) for r in RAW}

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        super().__init__(model_name, config=GenerateConfig())

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        text = input[-1].text
        fault = next((f for old, f in self.BY_OLD_STATE.items() if f"<old_state>{old}</old_state>" in text), None)
        if fault == "error":
            raise RuntimeError("judge backend down")
        replies = {"empty": "", "prose": "These answers seem reasonable."}
        reply = replies[fault] if fault in replies else judge_reply(input)
        return ModelOutput.from_content("flaky-judge", reply)


@modelapi(name="flaky")
def _flaky() -> type[FlakyJudge]:
    return FlakyJudge


def test_a_failed_judgement_is_unscored_and_counted_not_a_fail(tmp_path: Path) -> None:
    log = run(tmp_path, model="spatialstale/stale-naive", grader="flaky/judge")
    assert log.status == "success", log.error
    judged = values(log)
    for uid in FAULTS:
        assert judged[uid]["judge_failed"] == 1
        assert all(math.isnan(v) for k, v in judged[uid].items() if k in CELLS)
    explanations = {str(s.id): s.scores["stale_judge"].explanation for s in log.samples}
    assert "judge error: RuntimeError: judge backend down" in explanations["mini-job-02"]
    assert "empty reply" in explanations["mini-diet-03"] and "no JSON object" in explanations["mini-car-05"]
    assert metric(log, "judge_failure_rate") == pytest.approx(3 / 5)
    # accuracy over the judged scenarios only: pet (T1) and city (T2), both failed by the naive agent
    assert metric(log, "dim1_T1") == 0.0 and metric(log, "dim1_T2") == 0.0
    aware = run(tmp_path / "aware", grader="flaky/judge")
    assert [metric(aware, c) for c in CELLS] == [1.0] * 6  # judge failures did not count as fails


def test_missing_grader_stops_before_any_model_call(tmp_path: Path) -> None:
    log = run(tmp_path, grader=None)
    assert log.status == "error"
    assert "--model-role grader=<model>" in log.error.message
    calls = [e for s in (log.samples or []) for e in s.events if e.event == "model"]
    assert calls == []


def test_inspect_score_rejudges_a_log_with_another_grader(tmp_path: Path, warm_python: WarmPython) -> None:
    """``inspect score`` (Inspect's command line, in a fork of the session's warm
    interpreter) rejudges a log whose grader gave no verdict."""
    log = run(tmp_path, grader="spatialstale/observer")  # not a judge: its replies hold no verdict
    assert metric(log, "judge_failure_rate") == 1.0
    on_disk = read_eval_log(log.location)  # nothing judged: NaN, not 0.0, through the log file too
    assert all(math.isnan(metric(m, c)) for m in (log, on_disk) for c in [*CELLS, "overall"])
    out = tmp_path / "rejudged" / "rejudged.eval"
    cli = [sys.executable, "-c", "from inspect_ai._cli.main import main; main()"]
    command = [
        *cli, "score", log.location, "--scorer", "spatialstale_evals/stale_judge", "--model-role",
        "grader=spatialstale/judge", "--action", "overwrite", "--output-file", str(out), "--display", "none",
    ]  # fmt: skip
    proc = warm_python.run(command, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rejudged = read_eval_log(str(out))
    assert metric(rejudged, "judge_failure_rate") == 0.0 and metric(rejudged, "overall") == 1.0
    assert all(v["judge_failed"] == 0 for v in values(rejudged).values())
    from spatialstale_evals.analysis.report import build_report

    table = build_report(out.parent, tmp_path / "report").tables["stale"]
    ours = table[table["model"] == "spatialstale/stale-aware"]
    # the header still names the first grader; the scores say who judged
    sha = hashlib.sha256(MINI.read_bytes()).hexdigest()
    assert set(ours["judged_by"]) == {"spatialstale/judge"} and set(ours["config"]) == {
        f"corpus=sha256:{sha[:12]}, grader=spatialstale/observer"
    }


# -- the report -------------------------------------------------------------------------


def test_report_stale_table_counts_judged_answers_and_places_published_numbers(tmp_path: Path) -> None:
    from inspect_ai.log import write_eval_log

    from spatialstale_evals.analysis.report import build_report

    logs = tmp_path / "logs"
    run(logs, model="spatialstale/stale-naive", grader="flaky/judge")
    renamed = run(tmp_path / "other")  # stale-aware, as if it were a model STALE published a number for
    renamed.eval.model = "openai/gpt-4o-mini"
    write_eval_log(renamed, str(logs / "mini.eval"))
    report = build_report(logs, tmp_path / "out")
    table = report.tables["stale"]
    types = {r["uid"]: r.get("type", r.get("conversation_type")) for r in RAW}
    judged = {t: sum(1 for uid, ty in types.items() if ty == t and uid not in FAULTS) for t in ("T1", "T2")}
    naive = table[table["model"] == "spatialstale/stale-naive"].set_index(["type", "dimension"])
    for t in ("T1", "T2"):
        for d in DIMS:
            row = naive.loc[(t, d)]
            scenarios = sum(ty == t for ty in types.values())
            assert (row["scenarios"], row["judged"], row["passed"], row["unscored"]) == (
                scenarios,
                judged[t],
                0,
                scenarios - judged[t],
            )
    assert naive.loc[("all", "overall")]["unscored"] == len(FAULTS)
    gpt = table[table["model"] == "openai/gpt-4o-mini"].set_index(["type", "dimension"])
    assert gpt.loc[("all", "overall")]["accuracy"] == 1.0 and gpt.loc[("all", "overall")]["upstream"] == 0.087
    reference = table[table["config"].str.startswith("reference: STALE")]
    assert set(reference["model"]) == {"CUPMem", "best plain model"}  # GPT-4o-mini sits beside its run instead
    markdown = report.markdown.read_text(encoding="utf-8")
    assert "## STALE" in markdown and "STALE as published" in markdown


def test_report_puts_stale_and_probe_side_by_side_for_one_model(tmp_path: Path) -> None:
    from spatialstale_evals.analysis.report import build_report
    from spatialstale_evals.probe import probe

    run(tmp_path)
    log = inspect_eval(probe(regime="L1"), model="spatialstale/stale-aware", limit=2, log_dir=str(tmp_path))[0]
    assert log.status == "success"
    side = build_report(tmp_path, tmp_path / "out").tables["stale_probe"]
    assert list(side["dimension"]) == ["dim1 / explicit", "dim2 / premise", "dim3 / implicit"]
    assert list(side["stale_acc"]) == [1.0, 1.0, 1.0] and list(side["stale_judged"]) == [len(RAW)] * 3
    assert list(side["probe_stale_acc"]) == [0.0, 0.0, 0.0]  # prose, no JSON and no move: unparseable, not passed


def test_every_probe_names_a_stale_dimension() -> None:
    from spatialstale_evals.probing.probes import OF_STALE_DIMENSION
    from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS

    assert sorted(OF_STALE_DIMENSION) == list(STALE_DIMENSIONS)


@pytest.mark.parametrize("conversation", ["independent", "shared"])
def test_the_estimate_is_the_logged_usage_of_the_scripted_run(conversation: str, tmp_path: Path) -> None:
    from spatialstale_evals.runs.cost import stand_ins
    from spatialstale_evals.stale_corpus.cost import stale_cost

    log = run(tmp_path, conversation=conversation)
    model, roles = stand_ins("stale")  # the family's cost agents: stale-aware and the judge
    scenarios, agent, judge = stale_cost(model, roles["grader"], path=str(MINI), conversation=conversation)
    usage = log.stats.model_usage
    assert scenarios == len(RAW) and (agent.calls, judge.calls) == (3 * len(RAW), len(RAW))
    for cost, name in ((agent, "spatialstale/stale-aware"), (judge, "spatialstale/judge")):
        assert (cost.input_tokens, cost.output_tokens) == (usage[name].input_tokens, usage[name].output_tokens)


def test_a_relative_path_is_read_from_where_the_command_began(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``inspect eval spatialstale_evals/stale.py`` builds the task from the package's folder:
    ``-T path=tests/fixtures/...`` still means the user's folder ($PWD)."""
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(root))
    assert len(stale(path="tests/fixtures/stale_mini.json").dataset) == len(RAW)


def test_a_sample_stopped_by_a_limit_is_judged_on_what_it_answered(tmp_path: Path) -> None:
    """A token limit stops each sample after its first probe's answer: the judge grades that one,
    the others are unanswered (NaN, counted), and nothing is an error."""
    limit = 350  # the scripted calls' tokens: every first call is 195-348, every two calls 400 or more
    task = stale(path=str(MINI))
    log = inspect_eval(task, model="spatialstale/stale-aware", model_roles={"grader": "spatialstale/judge"},
                       log_dir=str(tmp_path), display="none", token_limit=limit)[0]  # fmt: skip
    assert log.status == "success" and not any(s.error for s in log.samples)
    for sample in log.samples:
        answered = list(sample.store["StaleState:answers"])
        assert answered == ["dim1"], (sample.id, answered)
        value = sample.scores["stale_judge"].metadata["counts"]
        own = {k: v for k, v in value.items() if k in CELLS}
        assert [k.split("_")[0] for k, v in own.items() if not math.isnan(v)] == ["dim1"]
        assert value["unanswered"] == 2 and value["judge_failed"] == 0
    assert metric(log, "unanswered") == 2.0 and metric(log, "dim1_T1") == 1.0 and math.isnan(metric(log, "dim2_T1"))


def test_the_solver_is_the_tasks_plan(tmp_path: Path) -> None:
    log = run(tmp_path, dimensions="dim1")
    assert [step.solver for step in log.plan.steps] == ["spatialstale_evals/stale_probes"]  # stale_probes()


def test_a_hub_download_is_read_and_its_commit_logged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import types

    snapshot = tmp_path / "datasets--STALEproj--STALE" / "snapshots" / "0123abcd" / "T1_T2_400_FULL.json"
    snapshot.parent.mkdir(parents=True)
    snapshot.write_bytes(MINI.read_bytes())
    calls = []

    def hf_hub_download(**kwargs: Any) -> str:
        calls.append(kwargs)
        return str(snapshot)

    monkeypatch.setitem(sys.modules, "huggingface_hub", types.SimpleNamespace(hf_hub_download=hf_hub_download))
    task = stale(source="hub", hub_revision="0123abcd")
    assert calls == [
        {
            "repo_id": "STALEproj/STALE",
            "filename": "T1_T2_400_FULL.json",
            "repo_type": "dataset",
            "revision": "0123abcd",
        }
    ]
    assert task.metadata["hub_commit"] == "0123abcd" and len(task.dataset) == len(RAW)
    import hashlib

    assert task.metadata["file_sha256"] == hashlib.sha256(MINI.read_bytes()).hexdigest()


def test_histories_over_budget_are_counted_and_warned(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        task = stale(path=str(MINI), context_tokens=1)  # no relevant session fits one token
    assert task.metadata["over_budget"] == len(RAW)
    assert all(s.metadata["trim"]["kept"] == s.metadata["relevant_sessions"] for s in task.dataset)
    assert f"{len(RAW)} of {len(RAW)} histories exceed context_tokens=1" in caplog.text


def test_report_keeps_runs_of_other_types_apart(tmp_path: Path) -> None:
    from spatialstale_evals.analysis.report import build_report

    run(tmp_path, types="T1")
    run(tmp_path)
    table = build_report(tmp_path, tmp_path / "out").tables["stale"]
    ours = table[~table["config"].str.startswith("reference")]
    t1 = sum(r.get("type", r.get("conversation_type")) == "T1" for r in RAW)
    by_config = {c: g.set_index(["type", "dimension"]) for c, g in ours.groupby("config")}
    assert len(by_config) == 2
    for config, rows in by_config.items():
        assert rows.loc[("T1", "dim1")]["scenarios"] == t1, config  # each sample once in its own run's row


# -- judgements the contract does not let count: partial, example-quoting; answers the judge cannot grade --


class ScriptedGrader(ModelAPI):
    """A grader whose reply is ``REPLY`` of its model name: a partial verdict, a verdict that
    quotes the rubric's example, or one that passes everything (a lenient judge)."""

    EXAMPLE = '{"dim1_eval": {"reasoning": "one or two sentences", "pass": true}, "dim2_eval": {"reasoning": "...", "pass": false}}'  # noqa: E501 - the rubric's last line, copied here
    REPLY = {
        "partial-pass": lambda input: '{"dim1_eval": {"pass": true}}',
        "partial-fail": lambda input: '{"dim1_eval": {"pass": false}}',
        "quoting": lambda input: judge_reply(input) + "\nAs the rubric's example shows: " + ScriptedGrader.EXAMPLE,
        "quoting-first": lambda input: f"The rubric's example is {ScriptedGrader.EXAMPLE}, mine: {judge_reply(input)}",
        "lenient": lambda input: json.dumps({f"{d}_eval": {"reasoning": "ok", "pass": True} for d in DIMS}),
    }

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        super().__init__(model_name, config=GenerateConfig())

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        return ModelOutput.from_content("grader", self.REPLY[self.model_name](input))


@modelapi(name="graded")
def _graded() -> type[ScriptedGrader]:
    return ScriptedGrader


class CutAgent(ModelAPI):
    """An agent that replies ``""`` (``blank``), or 39 characters stopped by ``max_tokens`` (``cut``)."""

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        super().__init__(model_name, config=GenerateConfig())

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        if self.model_name == "blank":
            return ModelOutput.from_content("agent", "")
        return ModelOutput.from_content("agent", "Based on what you told me earlier, you", stop_reason="max_tokens")


@modelapi(name="answers")
def _answers() -> type[CutAgent]:
    return CutAgent


def grader_calls(log: EvalLog) -> list[str]:
    calls = [e for s in log.samples for e in s.events if e.event == "model" and e.role == "grader"]
    return ["\n".join(m.text for m in e.input) for e in calls]


def test_the_rubric_example_in_the_test_is_the_prompts() -> None:
    from spatialstale_evals.stale_corpus import prompts

    assert prompts.STALE_JUDGE_SYSTEM.rstrip().endswith(ScriptedGrader.EXAMPLE)


@pytest.mark.parametrize("grader", ["partial-pass", "partial-fail"])
def test_a_partial_verdict_leaves_the_whole_scenario_unscored(grader: str, tmp_path: Path) -> None:
    """A reply with dim1's verdict alone: nothing is scored, pass or fail, and overall is NaN, not 1.0 or 0.0."""
    log = run(tmp_path, grader=f"graded/{grader}")
    assert log.status == "success", log.error
    for value in values(log).values():
        assert value["judge_failed"] == 1
        assert all(math.isnan(v) for k, v in value.items() if k in CELLS)
    assert metric(log, "judge_failure_rate") == 1.0
    assert all(math.isnan(metric(log, c)) for c in [*CELLS, "overall"])
    from spatialstale_evals.analysis.report import build_report

    table = build_report(tmp_path, tmp_path / "out").tables["stale"]
    overall = table[(table["dimension"] == "overall") & ~table["config"].str.startswith("reference")].iloc[0]
    assert math.isnan(overall["accuracy"]) and overall["missing_cells"] == 6 and overall["unscored"] == len(RAW)


@pytest.mark.parametrize("grader", ["quoting", "quoting-first"])
def test_a_judge_that_quotes_the_rubric_example_is_read_by_its_own_verdict(grader: str, tmp_path: Path) -> None:
    """The naive agent fails every dimension by the lexical verdict; the example says dim1 passes, dim2 fails."""
    log = run(tmp_path, model="spatialstale/stale-naive", grader=f"graded/{grader}")
    assert [metric(log, c) for c in CELLS] == [0.0] * 6 and metric(log, "overall") == 0.0
    assert metric(log, "judge_failure_rate") == 0.0


def test_the_parser_takes_the_top_level_verdict_not_the_quoted_example_nor_a_nested_one() -> None:
    verdict = '{"dim1_eval": {"reasoning": "asserts the old state", "pass": false}, "dim2_eval": {"pass": true}}'
    for reply in (verdict + "\nFor reference: " + ScriptedGrader.EXAMPLE, ScriptedGrader.EXAMPLE + "\n" + verdict):
        judgement = parse_stale_judgement(reply, ["dim1", "dim2"])
        assert judgement.passes == {"dim1": False, "dim2": True} and not judgement.failed
    only_example = parse_stale_judgement(ScriptedGrader.EXAMPLE, ["dim1", "dim2"])
    assert only_example.failed and only_example.passes == {"dim1": None, "dim2": None}
    nested = parse_stale_judgement('{"notes": {"dim1_eval": {"pass": true}}}', ["dim1"])
    assert nested.failed
    conflicting = parse_stale_judgement('{"dim1": "pass"} then {"dim1": "fail"}', ["dim1"])
    assert conflicting.failed and conflicting.problem == "conflicting verdicts in one reply"


def test_empty_answers_fail_unjudged_even_under_a_lenient_judge(tmp_path: Path) -> None:
    log = run(tmp_path, model="answers/blank", grader="graded/lenient")
    assert log.status == "success", log.error
    assert grader_calls(log) == []  # nothing to judge: no call
    assert [metric(log, c) for c in CELLS] == [0.0] * 6 and metric(log, "overall") == 0.0
    assert metric(log, "empty_answers") == 3 * len(RAW) and metric(log, "judge_failure_rate") == 0.0
    from spatialstale_evals.analysis.report import build_report

    table = build_report(tmp_path, tmp_path / "out").tables["stale"]
    overall = table[(table["dimension"] == "overall") & ~table["config"].str.startswith("reference")].iloc[0]
    assert overall["empty_answers"] == 3 * len(RAW) and overall["truncated_answers"] == 0


def test_cut_answers_are_judged_with_the_judge_told_and_counted(tmp_path: Path) -> None:
    log = run(tmp_path, model="answers/cut", grader="graded/lenient")
    assert log.status == "success", log.error
    calls = grader_calls(log)
    assert len(calls) == len(RAW)
    for call in calls:
        for d in DIMS:
            assert f"<{d}_note>This answer was cut off at a length limit" in call
    assert metric(log, "truncated_answers") == 3 * len(RAW) and metric(log, "empty_answers") == 0
    full = run(tmp_path / "full", grader="graded/lenient")  # answers that ended: no note
    assert not any("_note>" in call for call in grader_calls(full)) and metric(full, "truncated_answers") == 0


def test_overall_is_nan_unless_all_six_cells_were_judged(tmp_path: Path) -> None:
    log = run(tmp_path, types="T1")
    assert metric(log, "dim1_T1") == 1.0 and math.isnan(metric(log, "overall"))
    from spatialstale_evals.analysis.report import build_report

    table = build_report(tmp_path, tmp_path / "out").tables["stale"]
    overall = table[(table["dimension"] == "overall") & ~table["config"].str.startswith("reference")].iloc[0]
    assert math.isnan(overall["accuracy"]) and overall["missing_cells"] == 3


def test_two_corpora_with_different_contents_at_one_path_are_never_pooled(tmp_path: Path) -> None:
    """The same path, read twice with different contents: two rows, each with its own records;
    the same content read from a second path pools with the first."""
    from spatialstale_evals.analysis.report import build_report

    corpus, logs = tmp_path / "corpus.json", tmp_path / "logs"
    versions = [RAW, RAW[:2]]
    for i, records in enumerate(versions):
        corpus.write_text(json.dumps(records), encoding="utf-8")
        run(logs / str(i), path=corpus)
    copy_path = tmp_path / "elsewhere.json"
    copy_path.write_text(json.dumps(RAW[:2]), encoding="utf-8")
    run(logs / "copy", path=copy_path)
    table = build_report(logs, tmp_path / "out").tables["stale"]
    overall = table[(table["dimension"] == "overall") & ~table["config"].str.startswith("reference")]
    shas = [hashlib.sha256(json.dumps(r).encode("utf-8")).hexdigest() for r in versions]
    expected = {
        f"corpus=sha256:{sha[:12]}, grader=spatialstale/judge": len(records) for sha, records in zip(shas, versions)
    }
    assert dict(zip(overall["config"], overall["scenarios"])) == expected
