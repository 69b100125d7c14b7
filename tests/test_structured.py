"""``structured_output`` (specification.md#structured-output): the JSON schema reaches exactly the calls
that expect JSON (audits, explicit and premise probes, the stale judge),
never the tool calls, only when asked; a reply in the schema's shape parses
as the bare one did; and tasks without a JSON answer say so."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import GenerateConfig, ModelOutput, modelapi
from inspect_ai.util import JSONSchema

from spatialstale_evals.detect import detect
from spatialstale_evals.harness.params import NotApplicable
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.scripted.api import ScriptedAPI
from spatialstale_evals.stale import stale

MINI = Path(__file__).parent / "fixtures" / "stale_mini.json"


class Recording(ScriptedAPI):
    """The scripted agents, recording per call whether it offered tools and the schema it was sent,
    and the rest of its config and its reply (``configs``, ``replies``, in call order)."""

    calls: ClassVar[list[tuple[bool, str | None, JSONSchema | None]]] = []
    configs: ClassVar[list[dict[str, Any]]] = []
    replies: ClassVar[list[str]] = []

    async def generate(self, input, tools, tool_choice, config: GenerateConfig) -> ModelOutput:  # noqa: ANN001
        schema = config.response_schema
        self.calls.append((bool(tools), schema.name if schema else None, schema.json_schema if schema else None))
        self.configs.append(config.model_dump(exclude_none=True, exclude={"response_schema"}))
        output = await super().generate(input, tools, tool_choice, config)
        self.replies.append(output.completion)
        return output


@modelapi(name="recording")
def _recording() -> type[Recording]:
    return Recording


def run(task: Any, model: str = "recording/observer", **kwargs: Any) -> EvalLog:
    Recording.calls.clear(), Recording.configs.clear(), Recording.replies.clear()
    log = inspect_eval(task, model=model, display="none", log_dir=kwargs.pop("log_dir"), **kwargs)[0]
    assert log.status == "success", log.error
    return log


def metric(log: EvalLog, name: str) -> float:
    return log.results.scores[0].metrics[name].value


def verdicts_schema(item: dict[str, str]) -> dict[str, Any]:
    """The audit schema as written here from its shape (specification.md#structured-output):
    an object holding the verdict list."""
    props = {k: {"type": t} for k, t in item.items()}
    inner = {"type": "object", "properties": props, "required": list(item), "additionalProperties": False}
    return {
        "type": "object",
        "properties": {"verdicts": {"type": "array", "items": inner}},
        "required": ["verdicts"],
        "additionalProperties": False,
    }


AUDIT = {
    "binary": {"memory_id": "string", "is_stale": "boolean", "confidence": "number", "reasoning": "string"},
    "continuous": {"memory_id": "string", "staleness": "number", "reasoning": "string"},
}


@pytest.mark.parametrize("output", ["binary", "continuous"])
def test_detect_sends_the_output_modes_schema_only_when_asked(output: str, tmp_path: Path) -> None:
    plain = run(detect(regime="L2", output=output), limit=2, log_dir=str(tmp_path))
    assert Recording.calls and all(name is None for _, name, _ in Recording.calls)
    log = run(detect(regime="L2", output=output, structured_output=True), limit=2, log_dir=str(tmp_path))
    assert Recording.calls and {name for _, name, _ in Recording.calls} == {f"audit_{output}"}
    for _, _, schema in Recording.calls:
        assert schema.model_dump(exclude_none=True) == verdicts_schema(AUDIT[output])
    assert all(reply.startswith('{"verdicts": [') for reply in Recording.replies)  # the schema's shape
    for name in ("f1", "precision", "recall", "parse_failure_rate"):  # the wrapped reply parses as the bare one
        assert metric(log, name) == metric(plain, name)
    assert metric(log, "f1") == 1.0 and metric(log, "parse_failure_rate") == 0.0


def test_navigate_constrains_the_audits_not_the_moves(tmp_path: Path) -> None:
    log = run(navigate(regime="L2", strategy="omcd", structured_output=True), limit=1, epochs=1, log_dir=str(tmp_path))
    audits = [name for tools, name, _ in Recording.calls if not tools]
    moves = [name for tools, name, _ in Recording.calls if tools]
    assert audits and set(audits) == {"audit_binary"} and moves and set(moves) == {None}
    assert log.samples[0].metadata["structured_output"] is True


@pytest.mark.parametrize("strategy", ["no_memory", "no_filter", "oracle", "resolve"])
def test_structured_output_without_an_auditor_is_not_applicable(strategy: str) -> None:
    with pytest.raises(NotApplicable, match=f"{strategy} asks no auditor"):
        navigate(strategy=strategy, structured_output=True)


def test_probe_constrains_explicit_and_premise_not_implicit(tmp_path: Path) -> None:
    run(probe(regime="L1"), limit=1, log_dir=str(tmp_path))
    assert {name for _, name, _ in Recording.calls} == {None}
    assert all(c == {"parallel_tool_calls": False} for c in Recording.configs)  # off: no schema in the config
    run(probe(regime="L1", structured_output=True), limit=1, log_dir=str(tmp_path))
    assert all(c == {"parallel_tool_calls": False} for c in Recording.configs)  # on: kept beside the schema
    names = {name for tools, name, _ in Recording.calls if not tools}
    assert names == {"probe_explicit", "probe_premise"}
    assert {name for tools, name, _ in Recording.calls if tools} == {None}
    explicit = next(schema for _, name, schema in Recording.calls if name == "probe_explicit")
    assert explicit.properties["state"].enum == ["SAFE", "DANGER"] and explicit.required == ["cell", "state", "reason"]
    with pytest.raises(NotApplicable, match="implicit probe's answer is a tool call"):
        probe(dimensions="implicit", structured_output=True)


def test_stale_constrains_the_judge_only(tmp_path: Path) -> None:
    run(stale(path=str(MINI)), model="spatialstale/stale-aware", model_roles={"grader": "recording/judge"},
        log_dir=str(tmp_path))  # fmt: skip
    assert {name for _, name, _ in Recording.calls} == {None} and all(
        c == {"temperature": 0} for c in Recording.configs
    )
    task = stale(path=str(MINI), dimensions="dim1,dim3", structured_output=True)
    log = run(task, model="spatialstale/stale-aware", model_roles={"grader": "recording/judge"}, log_dir=str(tmp_path))
    assert [name for _, name, _ in Recording.calls] == ["judgement"] * len(task.dataset)  # the grader's calls
    schema = Recording.calls[0][2]
    assert schema.required == ["dim1_eval", "dim3_eval"]
    assert schema.properties["dim1_eval"].required == ["reasoning", "pass"]
    assert all(c == {"temperature": 0} for c in Recording.configs)
    assert [metric(log, f"{d}_{t}") for t in ("T1", "T2") for d in ("dim1", "dim3")] == [1.0] * 4
    assert math.isnan(metric(log, "overall"))  # the mean of six cells: dim2 was not asked


@pytest.mark.parametrize("task", [detect, navigate, probe, stale])
def test_structured_output_must_be_a_bool(task: Any) -> None:
    args = {"path": str(MINI)} if task is stale else {}
    with pytest.raises(ValueError, match="structured_output must be true or false"):
        task(structured_output="yes", **args)


def test_every_schema_field_is_one_the_prompt_asks_for() -> None:
    """The schemas cannot drift from the prompts: each property is named in its request's text."""
    from spatialstale_evals.harness.audit import REQUESTS, SCHEMAS
    from spatialstale_evals.probing import prompts
    from spatialstale_evals.probing.probes import PROBES

    for output, schema in SCHEMAS.items():
        item = schema.properties["verdicts"].items
        assert all(f'"{name}"' in REQUESTS[output] for name in item.properties), output
    texts = {"explicit": prompts.PROBE_EXPLICIT, "premise": prompts.PROBE_PREMISE_REQUEST}
    for name, probe_ in PROBES.items():
        if probe_.schema is not None:
            assert all(f'"{field}"' in texts[name] for field in probe_.schema.properties), name


def test_the_detect_estimate_stays_exact_with_a_schema(tmp_path: Path) -> None:
    from spatialstale_evals.runs.cost import estimate_cost
    from spatialstale_evals.world import dataset

    log = run(
        detect(regime="L2", structured_output=True), model="spatialstale/observer", limit=2, log_dir=str(tmp_path)
    )
    cost = estimate_cost("detect", dataset.load(None, "L2")[:2], regime="L2", structured_output=True)[1]
    usage = log.stats.model_usage["spatialstale/observer"]
    assert (cost.input_tokens, cost.output_tokens) == (usage.input_tokens, usage.output_tokens)
