"""The ``stale`` task's solver (docs/specification.md#stale): STALE's three probes asked after
the record's history, in one of the probe task's conversation modes.

- ``independent`` (default, as STALE upstream): each probe is asked of a
  fresh copy of the history, so no answer can inform another.
- ``shared`` (as the heams port): the three in one conversation, dim1 ->
  dim2 -> dim3, each answer kept; an earlier answer can inform a later one.

The sample's messages afterwards are the history, then each probe and its
answer in order, whatever the mode (so ``inspect view`` shows all three); in
``independent`` mode each answer saw only the history and its own probe, as
the model events of the transcript show.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from spatialstale_evals.harness.loggable import loggable_output, record_replacements
from spatialstale_evals.stale_corpus.scoring import require_grader
from spatialstale_evals.stale_corpus.state import StaleState


@dataclass(frozen=True)
class StaleSettings:
    """What a stale task fixes for its samples (its parameters, validated by the task)."""

    dimensions: tuple[str, ...]
    conversation: str
    #: Memory calls per probe in the memory-tool setting (``memory_access.py``); None in the prompt setting.
    max_memory_calls: int | None = None


def answer_record(query: str, output: Any) -> dict[str, Any]:
    """What the judge and the log keep of one probe's answer."""
    usage = output.usage
    return {
        "query": query,
        "answer": output.completion,
        "answer_chars": len(output.completion),
        "output_tokens": usage.output_tokens if usage else 0,
        "input_tokens": usage.input_tokens if usage else 0,
        "stop_reason": output.choices[0].stop_reason if output.choices else None,
    }


async def ask(
    model: Model,
    history: Sequence[ChatMessage],
    queries: Mapping[str, str],
    settings: StaleSettings,
    answers: dict[str, dict[str, Any]],
) -> list[ChatMessage]:
    """Every asked probe after ``history``, in the settings' conversation mode,
    each answer's record put in ``answers`` as it comes (so a sample an Inspect
    limit stops keeps what it answered); the messages as the sample shows them."""
    conversation, shown = list(history), list(history)
    for dimension in settings.dimensions:
        probe = ChatMessageUser(content=queries[dimension], metadata={"dimension": dimension})
        messages = [*(conversation if settings.conversation == "shared" else history), probe]
        output = loggable_output(await model.generate(messages))
        answers[dimension] = answer_record(queries[dimension], output)
        conversation = [*messages, output.message]
        shown += [probe, output.message]
    return shown


async def run_probes(
    state: TaskState,
    settings: StaleSettings,
    asking: Callable[[dict[str, dict[str, Any]]], Awaitable[list[ChatMessage]]],
) -> TaskState:
    """The probes of a sample, asked by ``asking`` (which fills the answers it is
    given and returns the messages to show), each answer kept for the judge, also
    when a limit stops the sample; a missing grader role stops it before any call."""
    require_grader()
    answers: dict[str, dict[str, Any]] = {}
    state.store_as(StaleState).asked = list(settings.dimensions)
    try:
        state.messages = await asking(answers)
    finally:  # also when a limit stops the sample: the judge grades what was answered
        state.store_as(StaleState).answers = answers
        record_replacements(state.metadata)
    state.output.completion = " | ".join(a["answer"] for a in answers.values())
    return state


@solver
def stale_probes(settings: StaleSettings) -> Solver:
    """Ask the record's probes after its history; keep each answer for the judge."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        history, queries = state.messages, state.metadata["queries"]
        return await run_probes(state, settings, lambda answers: ask(get_model(), history, queries, settings, answers))

    return solve
