"""Scripted reference agents and a scripted judge for the ``stale`` task, so it
runs end to end offline (``spatialstale/stale-aware``, ``spatialstale/stale-naive``,
``spatialstale/judge``). Deterministic; they read only what a model is sent.

The agents retrieve by word overlap: the user turns of the history that share
the most content words with the probe (at least half as many as the best
turn, and at least one) are the candidates; ``stale-aware`` answers from the
latest of them (it trusts the newest thing the user said), ``stale-naive``
from the earliest (it trusts the first thing stored). Each answer quotes the
turn it chose. On STALE's real histories they are lexical baselines, not
models of understanding.

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

from inspect_ai.model import ChatMessage, ChatMessageUser

from spatialstale_evals.harness import prompts
from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS
from spatialstale_evals.stale_corpus.judgement import judge_key

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
    scored = [(len(query & content_words(turn)), turn) for turn in _history_turns(messages)]
    best = max((s for s, _ in scored), default=0)
    if best == 0:
        return NO_MEMORY
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


#: The scripted repliers of the stale task by name (``spatialstale/<name>``).
STALE_REPLIERS: dict[str, Callable[[Sequence[ChatMessage]], str]] = {
    "stale-aware": lambda messages: recall(messages, newest=True),
    "stale-naive": lambda messages: recall(messages, newest=False),
    "judge": judge_reply,
}
