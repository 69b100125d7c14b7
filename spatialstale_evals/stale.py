"""SpatialSTALE ``stale``: the STALE corpus (Chao et al., 2026) through the same
harness: each record's history as earlier conversation (or, with
``memory_access=tool``, primed into the memory store and fetched with the
memory tool), its three probes, one judge call per scenario on the ``grader``
role (docs/specification.md#stale).

    inspect eval spatialstale_evals/stale.py -T path=STALE.json --model openai/gpt-4o \\
        --model-role grader=openai/gpt-4o-mini
    inspect eval spatialstale_evals/stale.py -T path=tests/fixtures/stale_mini.json \\
        --model spatialstale/stale-aware --model-role grader=spatialstale/judge
    inspect eval spatialstale_evals/stale.py -T path=tests/fixtures/stale_mini.json -T memory_access=tool \\
        --model spatialstale/stale-aware --model-role grader=spatialstale/judge
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Literal, get_args

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from spatialstale_evals.harness.memory_quota import MAX_MEMORY_CALLS
from spatialstale_evals.harness.memory_tool import MEMORY_ACCESS, MemoryAccess
from spatialstale_evals.harness.params import (
    CONVERSATIONS,
    Conversation,
    NotApplicable,
    check_bool,
    check_choice,
    check_positive_int,
    check_subset,
)
from spatialstale_evals.harness.score_counts import counted_epochs
from spatialstale_evals.harness.task_body import TaskBody
from spatialstale_evals.metadata import task_version
from spatialstale_evals.stale_corpus import prompts
from spatialstale_evals.stale_corpus.asking import StaleSettings, stale_probes
from spatialstale_evals.stale_corpus.corpus import (
    HUB_REVISION,
    STALE_DIMENSIONS,
    STALE_TYPES,
    Corpus,
    CorpusError,
    Record,
    download,
    file_sha256,
    load_corpus,
    record_sample,
)
from spatialstale_evals.stale_corpus.memory_access import (
    DEFAULT_MAX_MEMORY_CALLS,
    Haystacks,
    stale_memory_probes,
    tool_sample,
)
from spatialstale_evals.stale_corpus.scoring import stale_judge, stale_metrics

logger = logging.getLogger(__name__)
Source = Literal["local", "hub"]
SOURCES: tuple[Source, ...] = get_args(Source)
#: The history budget: with the suite's token counter (4 characters a token) a
#: history this long fits a 128k-context model with room for a tokenizer that
#: counts up to 1.25x more, the system prompt, the probes and their answers.
DEFAULT_CONTEXT_TOKENS = 96_000


def _local(path: str) -> Path:
    """``path`` as given, or, when relative and not found here, from the folder the
    command was started in: ``inspect eval spatialstale_evals/stale.py`` runs the task
    from the package's folder, while a user means their shell's (``$PWD``)."""
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return given
    started = Path(os.environ.get("PWD", ".")) / given
    if started.exists():
        return started
    raise CorpusError(
        f"STALE file {path} not found (looked for {given.absolute()} and {started.absolute()}): "
        "pass -T path=<a STALE JSON file>, an absolute path is safest"
    )


def _corpus_file(path: str | None, source: str, hub_revision: str) -> tuple[Path, str | None]:
    """The file to read and, from the hub, the commit it was downloaded at."""
    check_choice("source", source, SOURCES)
    if source == "local":
        if path is None:
            raise ValueError(
                "stale needs the STALE corpus: pass -T path=<a STALE JSON file>, or -T source=hub to download "
                'the published one (pip install -e ".[stale]")'
            )
        return _local(path), None
    if path is not None:
        raise ValueError("pass either -T path=<file> or -T source=hub, not both")
    return download(hub_revision)


def check_args(
    types: Any, dimensions: Any, conversation: str, context_tokens: int, strict: bool, structured_output: bool,
    memory_access: str, max_memory_calls: int, source: str, hub_revision: str,
) -> tuple[tuple[str, ...], tuple[str, ...]]:  # fmt: skip
    """Every check on the parameters but the corpus file's (``_corpus_file``),
    before any model call; returns the conflict types and the dimensions asked
    (``NotApplicable``: a history budget or a cap of memory calls for the setting
    that has none, a hub revision without the hub)."""
    check_choice("conversation", conversation, CONVERSATIONS)
    asked_types = check_subset("types", types, STALE_TYPES)
    asked = check_subset("dimensions", dimensions, STALE_DIMENSIONS)
    check_positive_int("context_tokens", context_tokens)
    check_bool("strict", strict)
    check_bool("structured_output", structured_output)
    check_choice("memory_access", memory_access, MEMORY_ACCESS)
    check_positive_int("max_memory_calls", max_memory_calls, allow_zero=True, most=MAX_MEMORY_CALLS)
    tool = memory_access == "tool"
    if tool and context_tokens != DEFAULT_CONTEXT_TOKENS:
        raise NotApplicable(
            f"context_tokens={context_tokens}: the history's budget in the prompt; "
            "memory_access=tool primes every session into the store"
        )
    if not tool and max_memory_calls != DEFAULT_MAX_MEMORY_CALLS:
        raise NotApplicable(f"max_memory_calls={max_memory_calls}: the memory calls per probe of memory_access=tool")
    if hub_revision != HUB_REVISION and source != "hub":
        raise NotApplicable(
            f"hub_revision={hub_revision!r}: the revision source=hub downloads; source={source} reads path"
        )
    return asked_types, asked


def _samples(
    file: Path, corpus: Corpus, records: list[Record], types: tuple[str, ...], tool: bool, context_tokens: int
) -> tuple[list[Sample], int]:
    """One sample per record of ``types`` (its history trimmed to ``context_tokens``,
    or primed into the memory store with ``tool``), and how many histories
    exceed the budget even trimmed (a warning); an error for no sample."""
    samples = [tool_sample(r) if tool else record_sample(r, context_tokens) for r in records]
    if not samples:
        skipped = f" ({len(corpus.skipped)} skipped, the first: {corpus.skipped[0]})" if corpus.skipped else ""
        raise ValueError(f"{file} has no usable record of type {', '.join(types)}{skipped}")
    over = sum(bool(s.metadata and s.metadata.get("trim", {}).get("over_budget")) for s in samples)
    if over:
        logger.warning(
            f"stale: {over} of {len(samples)} histories exceed context_tokens={context_tokens} even trimmed "
            "(their relevant sessions alone, or a flat history, which is one session): they are sent whole"
        )
    return samples, over


@task
def stale(
    path: str | None = None,
    source: Source = "local",
    types: str | list[str] = "all",
    dimensions: str | list[str] = "all",
    conversation: Conversation = "independent",
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    strict: bool = True,
    hub_revision: str = HUB_REVISION,
    structured_output: bool = False,
    memory_access: MemoryAccess = "prompt",
    max_memory_calls: int = DEFAULT_MAX_MEMORY_CALLS,
    **unknown: Any,
) -> Task:
    """STALE's state resolution, premise resistance and implicit policy adaptation on its own corpus.

    One sample per record (its id the record's ``uid``); every asked dimension
    is one model call, then one judge call on the ``grader`` model role
    (required: ``--model-role grader=<model>``) grades them all.

    Args:
        path: A local STALE JSON file (required unless ``source=hub``).
        source: ``local`` (read ``path``) or ``hub`` (download the published
            file with huggingface_hub: the ``[stale]`` extra, online).
        types: ``all``, or the conflict types to run, ``T1`` and/or ``T2``
            (a list, or comma-separated): a filter, not a label.
        dimensions: ``all``, or any of ``dim1``, ``dim2``, ``dim3``.
        conversation: ``independent`` (each probe after a fresh copy of the
            history, as STALE upstream) or ``shared`` (the three in one
            conversation, dim1 -> dim2 -> dim3).
        context_tokens: The history's budget in the suite's tokens (4
            characters each): older sessions are dropped until it fits, never
            the relevant ones.
        strict: Stop at the first bad record (default), or skip bad records
            and count them in the log (``records_skipped``).
        hub_revision: The dataset revision ``source=hub`` downloads: the
            default ``main`` is a branch that can move, so pass a commit to
            pin the corpus (the commit it resolved to is logged as
            ``hub_commit``, and the file's SHA-256, which the report groups
            runs by, as ``file_sha256``).
        structured_output: Pass the verdict schema as Inspect's ``response_schema``
            with the judge's call (the agent's answers are free text).
        memory_access: ``prompt`` (STALE's protocol: the history as earlier
            conversation) or ``tool`` (STALE's memory-agent setting: every
            session primed into the memory store as a file of
            ``/memories/conversations``, read with Inspect's memory tool;
            nothing is trimmed).
        max_memory_calls: Memory calls per probe with ``memory_access=tool``
            (default 10: a view of the folder and up to nine sessions; at most 100); calls
            past it are refused and counted, then the answer is asked for.
    """
    body = TaskBody(stale, locals())
    asked_types, asked = check_args(
        types, dimensions, conversation, context_tokens, strict, structured_output, memory_access, max_memory_calls,
        source, hub_revision,
    )  # fmt: skip
    file, commit = _corpus_file(path, source, hub_revision)
    corpus = load_corpus(file, strict=strict)
    records = [r for r in corpus.records if r.type in asked_types]
    tool = memory_access == "tool"
    samples, over = _samples(file, corpus, records, asked_types, tool, context_tokens)
    settings = StaleSettings(asked, conversation, max_memory_calls if tool else None)
    return Task(
        dataset=MemoryDataset(samples, name=file.stem, location=str(file)),
        solver=(
            stale_memory_probes(settings, Haystacks(file.stem, {r.uid: r for r in records}))
            if tool
            else stale_probes(settings)
        ),
        scorer=stale_judge(structured_output),
        metrics=stale_metrics(asked, asked_types, tool),
        epochs=counted_epochs(),
        name=body.name,
        version=task_version(),
        metadata=body.metadata(
            {
                "stale_prompt_version": prompts.STALE_PROMPT_VERSION,
                "types": list(asked_types),
                "dimensions": list(asked),
                "conversation": conversation,
                "context_tokens": context_tokens,
                "structured_output": structured_output,
                "source": source,
                "hub_commit": commit,
                "records_skipped": len(corpus.skipped),
                "skipped": list(corpus.skipped[:20]),
                "over_budget": over,
                "file_sha256": file_sha256(file),
            },
            {"memory_access": memory_access, "max_memory_calls": max_memory_calls} if tool else {},
        ),
    )
