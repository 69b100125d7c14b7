"""The ``probe`` task's engine (docs/specification.md#probe): STALE's three questions about one
memory entry, asked at the final grid and scored from its truth.

- ``explicit`` (state resolution): the store, the observation and "is (r,c)
  safe to step on now?"; passes when the answer's ``state`` is the truth.
- ``premise`` (premise resistance): a request that takes the entry's claim as
  given; passes when ``premise_holds`` is the truth (true for a control).
- ``implicit`` (policy adaptation): a navigation step from the target's
  placement (``world/targets.py``), one ``move`` call; it passes when the
  move steps onto the target exactly when the target is safe now (a thaw
  target: not into the hole; a valid-SAFE control: the step memory suggests).

Conversations: ``independent`` (every probe a fresh conversation, as STALE
upstream) or ``shared`` (per target, explicit -> premise -> implicit in one
conversation, each reply kept: an earlier answer can inform a later one).
Every probe's outcome is ``pass``, ``fail``, ``unparseable`` (no usable
answer: counted, never a crash) or ``skipped`` (implicit without a
placement); the scorer counts them per dimension x target kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolInfo
from inspect_ai.util import JSONSchema

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.counts import ANSWER_FLAGS
from spatialstale_evals.harness.loggable import loggable_output
from spatialstale_evals.harness.move import MOVE_TOOL
from spatialstale_evals.harness.observe import Observed, Role, observation_parts, user_message
from spatialstale_evals.harness.params import check_subset
from spatialstale_evals.harness.parsing import CUT_STOP_REASONS, parse_move, parse_probe_answer
from spatialstale_evals.harness.samples import InstanceSet, record_instance
from spatialstale_evals.harness.schemas import flag, obj, response_config, text
from spatialstale_evals.probing import prompts as probe_prompts
from spatialstale_evals.probing.state import ProbeState
from spatialstale_evals.world.grid import Cell, Grid, apply_move, goal_of, start_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import DANGER, SAFE
from spatialstale_evals.world.render import RenderStyle
from spatialstale_evals.world.targets import KINDS, ROUTE_KINDS, STALE_KINDS, Target, choose_targets

Dimension = Literal["explicit", "premise", "implicit"]
DIMENSIONS: tuple[Dimension, ...] = get_args(Dimension)
OUTCOMES = ("pass", "fail", "unparseable", "skipped")
#: Store key of the per-probe records the scorer reads.


@dataclass(frozen=True)
class ProbeSettings(Observed):
    """Everything a probe task fixes for its samples (its parameters, validated
    by the task), in the order its samples' metadata names them (``Observed.parameters``)."""

    modality: str
    dimensions: tuple[str, ...]
    conversation: str
    targets_per_kind: int
    show_store: bool
    render: RenderStyle
    structured_output: bool
    size: str


def check_dimensions(dimensions: object) -> tuple[str, ...]:
    """``all``, a comma-separated string or a list of dimension names, checked, in ``DIMENSIONS`` order."""
    return check_subset("dimensions", dimensions, DIMENSIONS)


def count_key(dimension: str, kind: str, outcome: str) -> str:
    """The key of one count in a sample's counts (``Score.metadata["counts"]``): ``premise_stale_thaw_pass``."""
    return f"{dimension}_{kind}_{outcome}"


def system_message() -> ChatMessageSystem:
    return ChatMessageSystem(content=f"{prompts.NAVIGATE_RULES}\n{probe_prompts.PROBE_TURN}")


def _memory_text(instance: Instance, target: Target, show_store: bool) -> str:
    shown = instance.memory if show_store else (target.entry,)
    return prompts.NAVIGATE_MEMORY.format(count=len(shown), entries="\n".join(e.text for e in shown))


def _ask_explicit(instance: Instance, grid: Grid, target: Target) -> tuple[Cell, str]:
    return start_of(grid), probe_prompts.PROBE_EXPLICIT.format(row=target.cell[0], col=target.cell[1])


def _ask_premise(instance: Instance, grid: Grid, target: Target) -> tuple[Cell, str]:
    (row, col) = target.cell
    premise = probe_prompts.PROBE_PREMISE[target.entry.claim].format(row=row, col=col)
    return start_of(grid), probe_prompts.PROBE_PREMISE_REQUEST.format(premise=premise, row=row, col=col)


def _ask_implicit(instance: Instance, grid: Grid, target: Target) -> tuple[Cell, str]:
    agent, goal = target.placement, goal_of(grid)
    assert agent is not None
    step = prompts.NAVIGATE_STEP.format(
        row=agent[0], col=agent[1], goal_row=goal[0], goal_col=goal[1], steps_left=instance.max_steps
    )
    return agent, step


def _judge_answer(answer_field: str) -> Callable[[Target, Grid, ModelOutput, bool], tuple[str, dict[str, Any]]]:
    """A judge of a JSON answer whose ``answer_field`` must be the truth."""

    def judge(target: Target, grid: Grid, output: ModelOutput, truth: bool) -> tuple[str, dict[str, Any]]:
        refused = bool(output.choices) and output.choices[0].stop_reason == "content_filter"
        answer = parse_probe_answer(output.completion, answer_field, target.cell, refused=refused)
        if answer.value is None:
            return "unparseable", {"problem": answer.problem}
        return ("pass" if answer.value == truth else "fail"), {"answer": answer.value, "reply": answer.reply}

    return judge


def _judge_move(target: Target, grid: Grid, output: ModelOutput, truth: bool) -> tuple[str, dict[str, Any]]:
    """The first ``move`` call from the placement: right when it steps onto the target exactly when it should."""
    choice = parse_move(output.message.tool_calls)
    if choice.direction is None:
        return "unparseable", {"problem": choice.problem, "extra_calls": choice.extra_calls}
    assert target.placement is not None
    steps_on = apply_move(grid, target.placement, choice.direction) == target.cell
    said = {"direction": choice.direction, "answer": steps_on, "extra_calls": choice.extra_calls}
    return ("pass" if steps_on == truth else "fail"), said


@dataclass(frozen=True)
class Probe:
    """One of STALE's questions: STALE's name for its accuracy on stale
    targets (the metric) and for the dimension (``dim1``..``dim3``, as the
    ``stale`` task and STALE's data name it), the target kinds it asks about,
    its ask (where the agent stands, and the words), the right answer, how a
    reply is judged, the tools it offers, and whether it needs the target's
    placement; and the schema of its JSON answer (``structured_output``; None
    for a tool call)."""

    stale_metric: str
    stale_dimension: str
    kinds: tuple[str, ...]
    ask: Callable[[Instance, Grid, Target], tuple[Cell, str]]
    truth: Callable[[Target], bool]
    judge: Callable[[Target, Grid, ModelOutput, bool], tuple[str, dict[str, Any]]]
    role: Role = "audit"
    tools: tuple[ToolInfo, ...] = ()
    needs_placement: bool = False
    schema: JSONSchema | None = None


#: The three dimensions, in ``Dimension`` order (the order a shared conversation asks them).
PROBES: dict[str, Probe] = {
    # is the cell safe now? (the truth of the cell)
    "explicit": Probe(
        "state_resolution",
        "dim1",
        KINDS,
        _ask_explicit,
        lambda t: t.safe_now,
        _judge_answer("state"),
        schema=obj(
            {
                "cell": JSONSchema(type="array", items=JSONSchema(type="integer")),
                "state": JSONSchema(type="string", enum=[SAFE, DANGER]),
                "reason": text(),
            }
        ),
    ),
    # does the entry's claim still hold? (true for a control)
    "premise": Probe(
        "premise_resistance",
        "dim2",
        KINDS,
        _ask_premise,
        lambda t: t.kind not in STALE_KINDS,
        _judge_answer("premise_holds"),
        schema=obj({"premise_holds": flag(), "step_on": flag(), "reason": text()}),
    ),
    # step onto the target exactly when it is safe now (only SAFE claims can be a route step)
    "implicit": Probe(
        "policy_adaptation",
        "dim3",
        ROUTE_KINDS,
        _ask_implicit,
        lambda t: t.safe_now,
        _judge_move,
        role="navigate",
        tools=(MOVE_TOOL,),
        needs_placement=True,
    ),
}
if tuple(PROBES) != DIMENSIONS:
    raise RuntimeError(f"probing.probes.PROBES {tuple(PROBES)} must follow Dimension {DIMENSIONS}")
#: The probe dimension of each of STALE's (``dim1`` -> ``explicit``).
OF_STALE_DIMENSION: dict[str, str] = {probe.stale_dimension: name for name, probe in PROBES.items()}
#: The kinds each dimension asks about.
DIMENSION_KINDS: dict[str, tuple[str, ...]] = {name: probe.kinds for name, probe in PROBES.items()}


#: Every count a probe sample records (zeros included: the same keys in every sample).
COUNT_KEYS = tuple(count_key(d, k, o) for d in DIMENSIONS for k in DIMENSION_KINDS[d] for o in OUTCOMES) + tuple(
    f"{d}_{flag}" for d in DIMENSIONS for flag in ANSWER_FLAGS
)


def reply_flags(output: ModelOutput) -> dict[str, bool]:
    """Whether a reply was empty (no text, no tool call) and whether a length limit cut it."""
    stop = output.choices[0].stop_reason if output.choices else None
    return {
        "empty": not output.completion.strip() and not output.message.tool_calls,
        "truncated": stop in CUT_STOP_REASONS,
    }


def question(instance: Instance, grid: Grid, target: Target, dimension: str, settings: ProbeSettings) -> ChatMessage:
    """The user turn of one probe: the memory, the observation, the ask."""
    probe = PROBES[dimension]
    agent, ask = probe.ask(instance, grid, target)
    parts = observation_parts(grid, agent, settings.observation, probe.role)
    memory = _memory_text(instance, target, settings.show_store)
    return user_message([ContentText(text=memory), *parts, ContentText(text=ask)])


def verdict(dimension: str, target: Target, grid: Grid, output: ModelOutput) -> tuple[str, dict[str, Any]]:
    """(outcome, what the reply said, with the truth) of one probe."""
    probe = PROBES[dimension]
    truth = probe.truth(target)
    outcome, said = probe.judge(target, grid, output, truth)
    return outcome, {"truth": truth, **said}


def asked_of(target: Target, dimensions: tuple[str, ...]) -> list[tuple[str, bool]]:
    """The dimensions that ask about ``target``, in order, each with whether it
    is skipped (a probe that needs a placement, on a target without one)."""
    return [
        (d, PROBES[d].needs_placement and target.placement is None)
        for d in dimensions
        if target.kind in PROBES[d].kinds
    ]


async def probe_target(
    model: Model, instance: Instance, grid: Grid, target: Target, settings: ProbeSettings
) -> list[dict[str, Any]]:
    """Every asked dimension about one target, in ``DIMENSIONS`` order, in one
    conversation (``shared``) or each in its own."""
    records: list[dict[str, Any]] = []
    history: list[ChatMessage] = [system_message()]
    for dimension, skipped in asked_of(target, settings.dimensions):
        record: dict[str, Any] = {
            "dimension": dimension,
            "prompt_version": probe_prompts.PROBE_PROMPT_VERSION,
            **target.to_json(),
        }
        if skipped:
            records.append({**record, "outcome": "skipped"})
            continue
        user = question(instance, grid, target, dimension, settings)
        messages = [*history, user] if settings.conversation == "shared" else [system_message(), user]
        probe = PROBES[dimension]
        config = response_config(f"probe_{dimension}", probe.schema, settings.structured_output)
        output = loggable_output(
            await model.generate(
                messages, tools=list(probe.tools), config=config.merge(GenerateConfig(parallel_tool_calls=False))
            )
        )
        outcome, said = verdict(dimension, target, grid, output)
        records.append(
            {
                **record,
                "outcome": outcome,
                **said,
                **reply_flags(output),
                "tokens": output.usage.total_tokens if output.usage else 0,
            }
        )
        history = [*messages, output.message]
    return records


@solver
def probe_targets(instances: InstanceSet, settings: ProbeSettings) -> Solver:
    """Ask every probe about every target of the sample's instance; keep the records for the scorer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        instance = instances.begin(state)
        grid, model = instance.final_grid(), get_model()
        records: list[dict[str, Any]] = []
        try:
            for target in choose_targets(instance, settings.targets_per_kind):
                records += await probe_target(model, instance, grid, target, settings)
        finally:  # also when an Inspect limit stops the sample: it is scored on what was asked
            state.store_as(ProbeState).records = records
            record_instance(state, instance)
        passed = sum(r["outcome"] == "pass" for r in records)
        state.output.completion = f"{passed} of {len(records)} probes passed"
        return state

    return solve


def probe_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    """Every ``COUNT_KEYS`` count of a sample's probe records (an empty reply
    that a length limit stopped counts as empty, not cut), and the move
    calls after the first of an implicit reply (``extra_calls``: ignored, one
    move per probe, as in navigate)."""
    counts = dict.fromkeys(COUNT_KEYS, 0)
    for r in records:
        counts[count_key(r["dimension"], r["kind"], r["outcome"])] += 1
        counts[f"{r['dimension']}_empty_answers"] += int(r.get("empty", False))
        counts[f"{r['dimension']}_truncated_answers"] += int(r.get("truncated", False) and not r.get("empty", False))
    return {**counts, "extra_calls": sum(r.get("extra_calls", 0) for r in records)}
