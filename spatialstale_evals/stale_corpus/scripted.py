"""Scripted reference agents and a scripted judge for the ``stale`` task, so it
runs end to end offline (``spatialstale/stale-aware``, ``spatialstale/stale-naive``,
``spatialstale/stale-noread``, ``spatialstale/judge``). Deterministic; they read
only what a model is sent.

The agents retrieve by word overlap: the user turns of the history that share
the most content words with the probe (at least half as many as the best
turn, and at least one) are the candidates; ``stale-aware`` answers from the
latest of them (it trusts the newest thing the user said), ``stale-naive``
from the earliest (it trusts the first thing stored). Each answer quotes the
turn it chose. On STALE's real histories they are lexical baselines, not
models of understanding. ``stale-noread`` never reads: it answers that it does not know.

With the memory tool (``memory_access=tool``) the history is in files, so the
same two read it as an agent would, one call a reply (``memory_reply``): a
view of ``/memories``, then the session files one at a time, ``stale-aware``
from the newest back, ``stale-naive`` from the oldest on, until a file has a
user turn that shares a content word with the probe; they answer from that
file's best-matching user turn. So ``stale-aware`` reads the newest relevant
session (and the newer ones before it) and ``stale-naive`` the oldest (and
the older ones before it). Each probe is read afresh; a refused call or the
cap (no tool offered) makes them answer from what they have read.

The judge is lexical: an answer passes when it contains a content word of
M_new that M_old lacks (it states something of the new state); it fails
otherwise. A scenario whose M_new has no such word cannot be judged this way:
the judge gives no verdict for it, which the task counts as a judge failure.
It replies in STALE's own judge shape (``{"dim1_eval": {"reasoning", "pass"}}``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
from inspect_ai.tool import ToolInfo

from spatialstale_evals.harness.memory_tool import ROOT, TOOL_NAME
from spatialstale_evals.stale_corpus import prompts
from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS
from spatialstale_evals.stale_corpus.judgement import judge_key
from spatialstale_evals.stale_corpus.memory_access import SESSION_FOLDER, STALE_MEMORY_LIMIT

_WORD = re.compile(r"[a-z0-9]+")
#: Words that carry no topic (so "I" and "the" match nothing).
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have i i'm im in is it its "
    "just me my now of on or our so still that the their them then there these they this to too us was we "
    "were what when where which who will with would you your yours about any some since no not".split()
)
_DATE = re.compile(re.escape(prompts.STALE_SESSION_DATE).replace(re.escape("{timestamp}"), ".*?"))
#: The agents' answer around the quoted turn, and when nothing matches.
ANSWER = 'From what you have told me: "{turn}"'
NO_MEMORY = "I don't know: you have not told me about that."


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}


def _history_turns(messages: Sequence[ChatMessage]) -> list[str]:
    """The user's turns of the history (not the probes, which carry a ``dimension``), date lines removed."""
    return [
        _DATE.sub("", m.text, count=1)
        for m in messages[:-1]
        if isinstance(m, ChatMessageUser) and not (m.metadata or {}).get("dimension")
    ]


def recall(messages: Sequence[ChatMessage], newest: bool) -> str:
    """The answer of the retrieval agent: the latest (``newest``) or earliest best-matching user turn."""
    query = content_words(messages[-1].text) if messages else set()
    return choose(_history_turns(messages), query, newest) or NO_MEMORY


def choose(turns: Sequence[str], query: set[str], newest: bool) -> str | None:
    """The answer quoting the latest (``newest``) or earliest of the best-matching
    ``turns`` (at least half the best overlap with ``query``, and at least one word); None when none matches."""
    scored = [(len(query & content_words(turn)), turn) for turn in turns]
    best = max((s for s, _ in scored), default=0)
    if best == 0:
        return None
    candidates = [turn for s, turn in scored if s >= max(1, math.ceil(best / 2))]
    return ANSWER.format(turn=(candidates[-1] if newest else candidates[0]).strip())


def _tag(text: str, name: str) -> str | None:
    found = re.search(rf"<{name}>(.*?)</{name}>", text, re.DOTALL)
    return found.group(1) if found else None


def judge_reply(messages: Sequence[ChatMessage]) -> str:
    """The lexical judge's verdicts on the answers in the judge prompt (``prompts.STALE_JUDGE_USER``)."""
    text = messages[-1].text if messages else ""
    old, new = content_words(_tag(text, "old_state") or ""), content_words(_tag(text, "new_state") or "")
    new_only = new - old
    verdicts = {}
    for dimension in STALE_DIMENSIONS:
        answer = _tag(text, f"{dimension}_answer")
        if answer is None or not new_only:
            continue
        said = sorted(content_words(answer) & new_only)
        reasoning = f"states the new state ({', '.join(said)})" if said else "says nothing of the new state"
        verdicts[judge_key(dimension)] = {"reasoning": reasoning, "pass": bool(said)}
    return json.dumps(verdicts)


# -- reading the memory tool's files (``memory_access=tool``) ---------------------------

_NUMBERED = re.compile(r"^\s*\d+\t", re.MULTILINE)
_REFUSED = STALE_MEMORY_LIMIT.split("{", 1)[0]
_FILE = re.compile(rf"^{re.escape(SESSION_FOLDER)}/\S+\.md$", re.MULTILINE)


def _this_probe(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages since the probe being answered (the last user message)."""
    last = max((i for i, m in enumerate(messages) if isinstance(m, ChatMessageUser)), default=-1)
    return list(messages[last + 1 :])


def _answered(messages: Sequence[ChatMessage]) -> dict[str, str]:
    """The path of every memory call in ``messages`` whose answer came back, with that answer."""
    paths = {
        c.id: str((c.arguments or {}).get("path"))
        for m in messages
        if isinstance(m, ChatMessageAssistant)
        for c in m.tool_calls or []
        if c.function == TOOL_NAME
    }
    answers = [m for m in messages if isinstance(m, ChatMessageTool) and m.tool_call_id in paths]
    return {paths[m.tool_call_id]: m.text for m in answers}


def _user_turns(answer: str) -> list[str]:
    """The user turns of a file as a ``view`` answer shows it (``cat -n`` lines unnumbered)."""
    lines = _NUMBERED.sub("", answer).splitlines()
    return [line.removeprefix("user: ") for line in lines if line.startswith("user: ")]


def _view(path: str, k: int) -> ModelOutput:
    return ModelOutput.for_tool_call("stale", TOOL_NAME, {"command": "view", "path": path}, tool_call_id=f"view_{k}")


def memory_reply(messages: Sequence[ChatMessage], tools: Sequence[ToolInfo], newest: bool) -> str | ModelOutput:
    """The reader's next reply in the memory-tool setting: a ``view`` call, or its answer."""
    since = _this_probe(messages)
    read = _answered(since)
    query = content_words(next((m.text for m in reversed(messages) if isinstance(m, ChatMessageUser)), ""))
    listing = read.get(ROOT, "")
    files = sorted(_FILE.findall(listing), reverse=newest)
    refused = any(isinstance(m, ChatMessageTool) and m.text.startswith(_REFUSED) for m in since)
    can_call = any(t.name == TOOL_NAME for t in tools) and not refused
    for path in files:
        if path not in read:
            return _view(path, len(messages)) if can_call else NO_MEMORY
        answer = choose(_user_turns(read[path]), query, newest)
        if answer is not None:
            return answer
    return _view(ROOT, len(messages)) if can_call and not listing else NO_MEMORY


def reader(newest: bool) -> Callable[[Sequence[ChatMessage], Sequence[ToolInfo]], str | ModelOutput]:
    """``stale-aware`` (``newest``) or ``stale-naive``: from the history in the prompt
    (``recall``), or, in the memory-tool setting, from the files it reads (``memory_reply``)."""

    def reply(messages: Sequence[ChatMessage], tools: Sequence[ToolInfo]) -> str | ModelOutput:
        in_store = bool(tools) or any(isinstance(m, ChatMessageTool) for m in messages)
        return memory_reply(messages, tools, newest) if in_store else recall(messages, newest)

    return reply


def bound_reader(every_file: bool) -> Callable[[Sequence[ChatMessage], Sequence[ToolInfo]], str | ModelOutput]:
    """The readers of the memory-tool setting's cost bounds (``stale_corpus/cost.py``;
    not served as agents): a view of ``/memories``, then (``every_file``) every
    session file once, oldest first, then the answer, from what was read as
    ``stale-aware`` answers (without a file read: that it does not know). Once
    per conversation: in ``shared`` mode the later probes read nothing more."""

    def reply(messages: Sequence[ChatMessage], tools: Sequence[ToolInfo]) -> str | ModelOutput:
        read = _answered(messages)
        listing = read.get(ROOT)
        if any(t.name == TOOL_NAME for t in tools) and listing is None:
            return _view(ROOT, len(messages))
        unread = [f for f in sorted(_FILE.findall(listing or "")) if f not in read]
        if every_file and unread and any(t.name == TOOL_NAME for t in tools):
            return _view(unread[0], len(messages))
        query = content_words(next((m.text for m in reversed(messages) if isinstance(m, ChatMessageUser)), ""))
        turns = [turn for path, text in read.items() if path != ROOT for turn in _user_turns(text)]
        return choose(turns, query, newest=True) or NO_MEMORY

    return reply


#: The bound readers by bound (``bound_reader``).
BOUND_READERS = {"low": bound_reader(every_file=False), "high": bound_reader(every_file=True)}
#: The scripted repliers of the stale task by name (``spatialstale/<name>``): (messages, tools) -> a reply.
STALE_REPLIERS: dict[str, Callable[[Sequence[ChatMessage], Sequence[ToolInfo]], str | ModelOutput]] = {
    "stale-aware": reader(newest=True),
    "stale-naive": reader(newest=False),
    "stale-noread": lambda messages, tools: NO_MEMORY,
    "judge": lambda messages, tools: judge_reply(messages),
}
