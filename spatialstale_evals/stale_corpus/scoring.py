"""The ``stale`` task's judge and metrics (docs/specification.md#stale).

One judge call per scenario, on the model role ``grader`` (required: there is
no silent default), grades every asked answer against M_old, M_new and the
explanation with our rubric (``prompts.STALE_JUDGE_*``), at temperature 0.
The reply is read leniently (``parsing.parse_stale_judgement``: our shape and
STALE's own ``{"dim1_eval": {"reasoning", "pass"}}`` alike).

A judge's failure is not the model's failure: an error, an empty, refused or
unreadable reply, or a reply without a readable verdict for every dimension
it was asked (``stale_judgement.py`` says which JSON counts as the verdict)
leaves the whole scenario unscored, every cell NaN (Inspect's unscored value,
which its reducers skip), and marks it ``judge_failed``: a verdict is never
taken from part of a reply. Accuracy is computed over judged answers only. A
probe the sample never answered (an Inspect limit stopped it first) is
unscored too and counted as ``unanswered``; with no answer at all the judge
is not called.

Answers a judge cannot fairly grade: an empty answer (nothing but
whitespace) cannot pass, so it fails its dimension without being sent to the
judge (counted, ``empty_answers``); an answer cut at a length limit (stop
reason ``max_tokens`` or ``model_length``) is sent with a note telling the
judge it was cut, and counted (``truncated_answers``).

The sample's counts (``Score.metadata["counts"]``) are keyed by dimension x
conflict type (``dim2_T1``), the sample's own type only, each 1.0 (pass), 0.0
(fail) or NaN (unscored); plus ``judge_failed`` (0/1), ``unanswered``,
``empty_answers``, ``truncated_answers`` and ``answer_chars``. The score value
shows each asked dimension's verdict by its name (``dim2``) and
``judge_failed``. A metric with nothing judged is
NaN, not 0.0 (the suite's other tasks log 0.0): a cell whose every judgement
failed must not read as failed. ``overall`` is the mean of the six type x
dimension cells, NaN when any of them has no judged answer (a run of one type
or of fewer dimensions has no overall). Each ratio below is one function over
those values, used by the task's metrics and by ``spatialstale report``.

Re-judging a log with another grader (Inspect records the scorer without its
package, so name it):

    inspect score LOG --scorer spatialstale_evals/stale_judge --model-role grader=openai/gpt-4o --action append
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
    model_roles,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import JSONSchema

from spatialstale_evals.harness.counts import ratio
from spatialstale_evals.harness.loggable import REPLACED_KEY, loggable_output
from spatialstale_evals.harness.metrics import ANSWER_METRICS, defined, named_metric
from spatialstale_evals.harness.parsing import CUT_STOP_REASONS
from spatialstale_evals.harness.schemas import flag, obj, response_config, text
from spatialstale_evals.harness.score_counts import COUNTS, metric_counts
from spatialstale_evals.stale_corpus import prompts
from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS, STALE_TYPES
from spatialstale_evals.stale_corpus.judgement import StaleJudgement, judge_key, parse_stale_judgement
from spatialstale_evals.stale_corpus.retrieval import RETRIEVAL_RATIOS, memory_counts, memory_lines
from spatialstale_evals.stale_corpus.state import StaleState

GRADER_ROLE = "grader"
#: Store keys: the dimensions the solver asks, and the answers as they come.

StaleRatio = Callable[[Sequence[Mapping[str, Any]]], float | None]


class MissingGrader(ValueError):
    """The ``grader`` model role was not given."""


def require_grader() -> None:
    """Stop, naming the option, unless a model is bound to the ``grader`` role."""
    if GRADER_ROLE not in model_roles():
        raise MissingGrader(
            "the stale task's judge runs on the model role 'grader', which was not given: add "
            "--model-role grader=<model> (e.g. grader=openai/gpt-4o-mini; offline: grader=spatialstale/judge)"
        )


def cell_key(dimension: str, conflict_type: str) -> str:
    """The score key of one dimension x conflict type: ``dim2_T1``."""
    return f"{dimension}_{conflict_type}"


def is_empty(answer: Mapping[str, Any]) -> bool:
    """An answer with nothing but whitespace: it cannot pass, no judge is asked."""
    return not str(answer.get("answer") or "").strip()


def is_cut(answer: Mapping[str, Any]) -> bool:
    """An answer a length limit stopped before it finished."""
    return answer.get("stop_reason") in CUT_STOP_REASONS


def judge_pair(dimension: str, answer: Mapping[str, Any]) -> str:
    """One question and its answer as the judge reads them, with the cut note when it was cut."""
    pair = prompts.STALE_JUDGE_PAIR.format(dimension=dimension, query=answer["query"], answer=answer["answer"])
    return pair + (prompts.STALE_JUDGE_CUT.format(dimension=dimension) if is_cut(answer) else "")


def judge_messages(meta: Mapping[str, Any], answers: Mapping[str, Mapping[str, Any]]) -> list[ChatMessage]:
    """The judge's rubric, then the truth and every answered question with its answer."""
    pairs = "\n\n".join(judge_pair(d, a) for d, a in answers.items())
    user = prompts.STALE_JUDGE_USER.format(
        m_old=meta["m_old"],
        m_new=meta["m_new"],
        explanation=meta["explanation"],
        pairs=pairs,
        dimensions=", ".join(answers),
    )
    return [ChatMessageSystem(content=prompts.STALE_JUDGE_SYSTEM), ChatMessageUser(content=user)]


def verdict_schema(dimensions: Sequence[str]) -> JSONSchema:
    """The judge's reply as STALE's judge writes it: ``{"dim1_eval": {"reasoning", "pass"}, ...}``."""
    return obj({judge_key(d): obj({"reasoning": text(), "pass": flag()}) for d in dimensions})


async def judge(
    model: Model, messages: list[ChatMessage], dimensions: Sequence[str], structured: bool = False
) -> tuple[StaleJudgement, str]:
    """The judgement of one call (with the verdict schema when ``structured``), and
    the judge's reply text; a call that fails is a failed judgement."""
    config = GenerateConfig(temperature=0).merge(response_config("judgement", verdict_schema(dimensions), structured))
    try:
        output = loggable_output(await model.generate(messages, config=config))
    except Exception as exc:  # noqa: BLE001 - whatever the grader raises, the scenario is unscored, not failed
        return StaleJudgement(dict.fromkeys(dimensions), problem=f"judge error: {type(exc).__name__}: {exc}"[:300]), ""
    if output.error:
        return StaleJudgement(dict.fromkeys(dimensions), problem=f"judge error: {output.error}"[:300]), ""
    refused = bool(output.choices) and output.choices[0].stop_reason == "content_filter"
    return parse_stale_judgement(output.completion, dimensions, refused=refused), output.completion


def score_value(
    judgement: StaleJudgement, conflict_type: str, asked: Sequence[str], answers: Mapping[str, Mapping[str, Any]]
) -> dict[str, float | int]:
    """The sample's cells and its counts, as the module docstring says: a failed
    judgement leaves every cell NaN; otherwise an empty answer is 0.0, a judged
    one its verdict, an unanswered one NaN."""
    value: dict[str, float | int] = {}
    for d in asked:
        verdict = False if d in answers and is_empty(answers[d]) else judgement.passes.get(d)
        value[cell_key(d, conflict_type)] = math.nan if judgement.failed or verdict is None else float(verdict)
    value["judge_failed"] = int(judgement.failed)
    value["unanswered"] = sum(d not in answers for d in asked)
    value["empty_answers"] = sum(is_empty(a) for a in answers.values())
    value["truncated_answers"] = sum(is_cut(a) and not is_empty(a) for a in answers.values())
    value["answer_chars"] = sum(a["answer_chars"] for a in answers.values()) / max(len(answers), 1)
    return value | memory_counts(answers)  # the memory-tool setting's evidence (retrieval.py); none otherwise


#: The longest judge reason an explanation line quotes (characters; the whole is in the metadata).
REASON_CHARS = 200


def dimension_lines(
    judgement: StaleJudgement, value: Mapping[str, Any], conflict_type: str, asked: Sequence[str], answers: Mapping
) -> str:
    """One line per asked dimension, as a list: its verdict and the judge's
    reason on one line (cut at ``REASON_CHARS``), or why it has none."""
    lines = []
    for d in asked:
        cell = value.get(cell_key(d, conflict_type))
        if d not in answers:
            lines.append(f"- {d}: no answer")
        elif is_empty(answers[d]):
            lines.append(f"- {d}: fail: the answer was empty (not judged)")
        elif cell is None or math.isnan(cell):
            lines.append(f"- {d}: no verdict")
        else:
            reason = " ".join(judgement.reasons.get(d, "").split())
            cut = reason[:REASON_CHARS] + ("..." if len(reason) > REASON_CHARS else "")
            lines.append(f"- {d}: {'pass' if cell == 1.0 else 'fail'}: {cut or 'no reason given'}")
    return "\n".join(lines)


def stale_headline(value: Mapping[str, Any], conflict_type: str, asked: Sequence[str]) -> dict[str, float | int]:
    """What the sample list shows of a scenario: each asked dimension's verdict
    by its name (``dim1``: 1.0 pass, 0.0 fail, NaN unscored), whatever the
    scenario's conflict type, and whether the judge failed."""
    return {d: value[cell_key(d, conflict_type)] for d in asked} | {"judge_failed": value["judge_failed"]}


# -- ratios, for the task metrics and the report alike --------------------------


def judged(values: Iterable[Mapping[str, Any]], key: str) -> list[float]:
    """The judged (not NaN) scores of one cell, 1.0 pass / 0.0 fail."""
    return [float(v[key]) for v in values if key in v and v[key] is not None and not math.isnan(float(v[key]))]


def accuracy_of(*keys: str) -> StaleRatio:
    """Passed / judged answers of the cells ``keys`` pooled (unscored ones left out)."""

    def compute(values: Sequence[Mapping[str, Any]]) -> float | None:
        scores = [s for key in keys for s in judged(values, key)]
        return ratio(sum(scores), len(scores))

    return compute


def dimension_accuracy_of(dimension: str) -> StaleRatio:
    """One dimension's accuracy over both conflict types pooled."""
    return accuracy_of(*(cell_key(dimension, t) for t in STALE_TYPES))


def cell_keys(values: Sequence[Mapping[str, Any]]) -> list[str]:
    """The dimension x type cells the values hold, in ``CELLS`` order."""
    found = {k for v in values for k in v}
    return [k for k in CELLS if k in found]


def missing_cells(values: Sequence[Mapping[str, Any]]) -> int:
    """How many of the six type x dimension cells have no judged answer."""
    return sum(not judged(values, k) for k in CELLS)


def overall_of(values: Sequence[Mapping[str, Any]]) -> float | None:
    """Upstream's "Overall": the mean of the six type x dimension cells'
    accuracies; None (NaN) when any cell has no judged answer, never a mean of fewer."""
    found = [accuracy_of(k)(values) for k in CELLS]
    return None if any(a is None for a in found) else sum(found) / len(found)  # type: ignore[arg-type]


def total_of(key: str) -> StaleRatio:
    """The sum of a per-sample count over the samples (``empty_answers``: how many answers were empty)."""
    return lambda values: float(sum(int(v.get(key, 0)) for v in values))


def mean_of(key: str) -> StaleRatio:
    """The mean of a per-sample count over the samples (``judge_failed``: the judge failure rate)."""
    return lambda values: ratio(sum(float(v.get(key, 0.0)) for v in values), len(values))


#: Every dimension x type cell, types outer (upstream's table order).
CELLS = tuple(cell_key(d, t) for t in STALE_TYPES for d in STALE_DIMENSIONS)
#: Every stale ratio by its metric name.
STALE_RATIOS: dict[str, StaleRatio] = {
    **{key: accuracy_of(key) for key in CELLS},
    "overall": overall_of,
    "judge_failure_rate": mean_of("judge_failed"),
    "unanswered": mean_of("unanswered"),
    "empty_answers": total_of("empty_answers"),
    "truncated_answers": total_of("truncated_answers"),
    "answer_chars": mean_of("answer_chars"),
}


def _metric(name: str, ratio_of: StaleRatio) -> Metric:
    """The task metric ``name``: ``ratio_of`` over the sample values (NaN when nothing counts)."""

    def compute(scores: list[SampleScore]) -> float:
        return defined(ratio_of(metric_counts(scores)))

    return named_metric(name, compute)


#: Registered when this module is imported, so ``inspect score`` finds them by the names the log records.
#: The answer counts are the harness's (one metric of each name for probe and stale).
STALE_METRICS: dict[str, Metric] = {
    name: ANSWER_METRICS.get(name) or _metric(name, ratio_of) for name, ratio_of in STALE_RATIOS.items()
}
#: The memory-tool setting's own (``retrieval.py``), beside them in that setting.
RETRIEVAL_METRICS: dict[str, Metric] = {name: _metric(name, ratio_of) for name, ratio_of in RETRIEVAL_RATIOS.items()}


def stale_metrics(dimensions: Sequence[str], types: Sequence[str], tool: bool = False) -> list[Metric]:
    """The metrics of a run that asks ``dimensions`` of records of ``types``: its cells, then the summaries
    (and with ``tool``, the memory-tool setting, its retrieval metrics)."""
    asked = [cell_key(d, t) for t in types for d in dimensions]
    own = [m for name, m in STALE_METRICS.items() if name in asked or name not in CELLS]
    return own + (list(RETRIEVAL_METRICS.values()) if tool else [])


# -- the scorer ---------------------------------------------------------------------


@scorer(metrics=[*STALE_METRICS.values(), *RETRIEVAL_METRICS.values()])  # the task shows its own (``stale_metrics``)
def stale_judge(structured_output: bool = False):
    """One ``grader`` call grades the scenario's answers; a failed judgement leaves them unscored.

    Args:
        structured_output: Pass the verdict schema as ``response_schema``.
    """

    async def score(state: TaskState, target: Target) -> Score:
        require_grader()
        stored = state.store_as(StaleState)
        answers: dict[str, dict[str, Any]] = stored.answers
        asked: list[str] = stored.asked if stored.asked is not None else list(answers)
        meta, judgement, reply = state.metadata, StaleJudgement({}), ""
        model = get_model(role=GRADER_ROLE, required=True)
        graded = {d: a for d, a in answers.items() if not is_empty(a)}  # an empty answer fails unjudged
        if graded:
            judgement, reply = await judge(model, judge_messages(meta, graded), list(graded), structured_output)
        value = score_value(judgement, meta["type"], asked, answers)
        passed = [] if judgement.failed else [d for d in asked if value.get(cell_key(d, meta["type"])) == 1.0]
        # the grader's name here, not only in the log header: ``inspect score`` leaves the header's
        said = {"model": str(model), "reply": reply, "problem": judgement.problem, "reasons": judgement.reasons}
        explanation = (
            (f"judge failed ({judgement.problem}); " if judgement.failed else "")
            + (f"unanswered: {value['unanswered']}; " if value["unanswered"] else "")
            + (f"empty (failed unjudged): {value['empty_answers']}; " if value["empty_answers"] else "")
            + (f"cut at a length limit: {value['truncated_answers']}; " if value["truncated_answers"] else "")
            + f"passed: {', '.join(passed) or 'none'} of {', '.join(asked)} ({meta['type']})"
        )
        lines = dimension_lines(judgement, value, meta["type"], asked, answers)
        explanation += f"\n\n{lines}" if lines else ""
        fetched = memory_lines(meta, answers)
        explanation += f"\n\n{fetched}" if fetched else ""
        return Score(
            value=stale_headline(value, meta["type"], asked),
            answer=" | ".join(a["answer"][:200] for a in answers.values()),
            explanation=explanation,
            metadata={
                "type": meta["type"],
                "answers": answers,
                "judge": said,
                "trim": meta.get("trim"),
                COUNTS: value,
                **({REPLACED_KEY: replaced} if (replaced := state.store.get(REPLACED_KEY, 0)) else {}),
            },
        )

    return score
