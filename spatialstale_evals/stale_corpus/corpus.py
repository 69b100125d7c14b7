"""The STALE corpus (docs/specification.md#stale): its JSON records read and checked one by one,
and each record's history as the agent is shown it, trimmed to a token budget.

A record: ``uid``, ``M_old``, ``M_new``, ``explanation``, ``type`` (``T1`` /
``T2``; ``conversation_type`` and ``conflict_type``, the names ports use, are
read the same, and must agree when several are given), ``probing_queries`` with
``dim1_query``, ``dim2_query``, ``dim3_query``, ``haystack_session`` and
``relevant_session_index``, optionally ``timestamps``. ``haystack_session`` is
a list of sessions, each a list of ``{role, content}`` turns, or one flat list
of turns (one session, whose relevant index may then be left out: it is 0;
being relevant, a flat history is never trimmed).
``timestamps``, when given, has one entry per session (text, or null for
none) and is shown as it is. A turn's content must be non-empty text.

Every text of a record is made loggable as it is read (``loggable.py``: a
lone surrogate becomes U+FFFD); the sample's metadata counts the characters
replaced (``corpus_replaced_characters``, only when there were some). A file
nested too deep for the JSON reader is refused as not JSON.

A bad record is reported by its index and uid with what is wrong (``CorpusError``);
``strict=False`` skips it instead and counts it (the task records the count).

Trimming: the history is counted with the suite's token counter
(ceil(characters / 4) per message, ``harness/tokens.py``), each
session as the agent sees it (with its date line). While it is over the
budget, whole sessions are dropped, oldest (first in the corpus) first,
never one that ``relevant_session_index`` names. A record whose relevant
sessions alone exceed the budget keeps them and is marked ``over_budget``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from inspect_ai._util.error import PrerequisiteError  # inspect-evals-lint: ignore[IECQ001] -- not exported publicly
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

from spatialstale_evals.harness.loggable import loggable_value
from spatialstale_evals.harness.tokens import count_text_tokens
from spatialstale_evals.stale_corpus import prompts

StaleType = Literal["T1", "T2"]
STALE_TYPES: tuple[StaleType, ...] = get_args(StaleType)
StaleDimension = Literal["dim1", "dim2", "dim3"]
STALE_DIMENSIONS: tuple[StaleDimension, ...] = get_args(StaleDimension)
#: The roles a history turn may have, and the message each becomes.
TURN_MESSAGES: dict[str, type[ChatMessageUser] | type[ChatMessageAssistant]] = {
    "user": ChatMessageUser,
    "assistant": ChatMessageAssistant,
}
REQUIRED_TEXT = ("uid", "M_old", "M_new", "explanation")
#: The keys a record's conflict type may go by (STALE's own first).
TYPE_KEYS = ("type", "conversation_type", "conflict_type")


class CorpusError(ValueError):
    """A STALE file or record that cannot be read as the schema says."""


class HubUnavailable(CorpusError, PrerequisiteError):
    """``source=hub`` cannot get the file (no ``huggingface_hub``, offline). An
    Inspect ``PrerequisiteError`` too: ``inspect eval`` then prints its message
    alone, the fix in plain words, where any other error gets a traceback."""

    def __init__(self, message: str) -> None:
        CorpusError.__init__(self, message)
        self.message = message


@dataclass(frozen=True)
class Record:
    """One STALE scenario: the state that changed, the three probes, the history."""

    uid: str
    m_old: str
    m_new: str
    explanation: str
    type: str
    queries: Mapping[str, str]
    sessions: tuple[tuple[tuple[str, str], ...], ...]  # (role, content) turns per session
    timestamps: tuple[str | None, ...]
    relevant: tuple[int, ...]
    #: Characters of the record's text replaced to make it loggable (``loggable.py``).
    replaced: int = 0


@dataclass(frozen=True)
class Corpus:
    """The records read (in file order) and the problem of each record skipped."""

    records: tuple[Record, ...]
    skipped: tuple[str, ...] = ()


def _text(raw: Mapping[str, Any], key: str) -> str:
    """A required text field (a uid may be a number: it is read as text)."""
    value = raw.get(key)
    if value is None:
        raise ValueError(f"missing field {key!r}")
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{key!r} must be non-empty text, got {type(value).__name__} {str(value)[:40]!r}")
    return str(value)


def _type(raw: Mapping[str, Any]) -> str:
    """The conflict type, under whichever of ``TYPE_KEYS`` the record uses."""
    given = [raw[k] for k in TYPE_KEYS if raw.get(k) is not None]
    if any(g != given[0] for g in given):
        raise ValueError(f"the type keys disagree: {', '.join(f'{k}={raw[k]!r}' for k in TYPE_KEYS if k in raw)}")
    value = given[0] if given else None
    if value not in STALE_TYPES:
        raise ValueError(f"{' / '.join(TYPE_KEYS)} must be one of {', '.join(STALE_TYPES)}, got {value!r}")
    return str(value)


def _queries(raw: Mapping[str, Any]) -> dict[str, str]:
    found = raw.get("probing_queries")
    if not isinstance(found, Mapping):
        raise ValueError(f"probing_queries must be an object with dim1_query..dim3_query, got {found!r:.60}")
    out = {}
    for dim in STALE_DIMENSIONS:
        query = found.get(f"{dim}_query", found.get(dim))
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"probing_queries.{dim}_query must be non-empty text, got {query!r:.60}")
        out[dim] = query
    return out


def _turn(turn: Any, where: str) -> tuple[str, str]:
    readable = isinstance(turn, Mapping) and isinstance(turn.get("content"), str) and turn["content"].strip()
    if not readable or turn.get("role") not in TURN_MESSAGES:
        raise ValueError(
            f"{where} must be a {{role: user|assistant, content: non-empty text}} turn, got {str(turn)[:60]!r}"
        )
    return str(turn["role"]), str(turn["content"])


def _sessions(raw: Mapping[str, Any]) -> tuple[tuple[tuple[tuple[str, str], ...], ...], bool]:
    """The sessions, and whether the corpus gave one flat list of turns."""
    history = raw.get("haystack_session")
    if not isinstance(history, list):
        raise ValueError(f"haystack_session must be a list, got {type(history).__name__}")
    if not history:
        raise ValueError("haystack_session is empty")
    flat = all(isinstance(item, Mapping) for item in history)
    if flat:
        return (tuple(_turn(t, f"haystack_session[{i}]") for i, t in enumerate(history)),), True
    sessions = []
    for i, session in enumerate(history):
        if not isinstance(session, list):
            raise ValueError(f"haystack_session[{i}] must be a list of turns (or the history one flat list of turns)")
        if not session:
            raise ValueError(f"haystack_session[{i}] is an empty session")
        sessions.append(tuple(_turn(t, f"haystack_session[{i}][{j}]") for j, t in enumerate(session)))
    return tuple(sessions), False


def _timestamps(raw: Mapping[str, Any], n: int) -> tuple[str | None, ...]:
    found = raw.get("timestamps")
    if found is None:
        return (None,) * n
    if isinstance(found, str) and n == 1:
        return (found,)
    if not isinstance(found, list) or len(found) != n:
        raise ValueError(f"timestamps must be a list of one per session ({n}), got {str(found)[:60]!r}")
    bad = [i for i, t in enumerate(found) if t is not None and not isinstance(t, str)]
    if bad:
        raise ValueError(f"timestamps[{bad[0]}] must be text or null, got {str(found[bad[0]])[:40]!r}")
    return tuple(found)


def _relevant(raw: Mapping[str, Any], n: int, flat: bool) -> tuple[int, ...]:
    found = raw.get("relevant_session_index")
    if found is None and flat:
        return (0,)
    values = [found] if isinstance(found, int) else found
    if not isinstance(values, list) or not values or not all(type(v) is int for v in values):  # not bool
        raise ValueError(f"relevant_session_index must be a session index or a list of them, got {found!r}")
    bad = [v for v in values if not 0 <= v < n]
    if bad:
        raise ValueError(f"relevant_session_index {bad} out of range: the history has {n} session(s)")
    return tuple(sorted(set(values)))


def parse_record(raw: Any, index: int) -> Record:
    """One record, checked; a ``CorpusError`` names the record (index, uid) and what is wrong."""
    uid = raw.get("uid") if isinstance(raw, Mapping) else None
    try:
        if not isinstance(raw, Mapping):
            raise ValueError(f"a record must be an object, got {type(raw).__name__}")
        text = {key: _text(raw, key) for key in REQUIRED_TEXT}
        sessions, flat = _sessions(raw)
        (text, queries, sessions, timestamps), replaced = loggable_value(
            (text, _queries(raw), sessions, _timestamps(raw, len(sessions)))
        )
        return Record(
            uid=text["uid"],
            m_old=text["M_old"],
            m_new=text["M_new"],
            explanation=text["explanation"],
            type=_type(raw),
            queries=queries,
            sessions=sessions,
            timestamps=timestamps,
            relevant=_relevant(raw, len(sessions), flat),
            replaced=replaced,
        )
    except RecursionError:
        raise CorpusError(f"STALE record {index}: nested too deep to read") from None
    except ValueError as exc:
        raise CorpusError(f"STALE record {index} (uid {uid!r}): {exc}") from None


def file_sha256(path: Path) -> str:
    """The file's SHA-256, logged so a table names the corpus it came from."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_corpus(path: str | Path, strict: bool = True) -> Corpus:
    """Every record of a STALE JSON file (a list of records), checked.

    Raises:
        CorpusError: The file is missing or not a JSON list; with ``strict``,
            the first bad record (without, bad records are skipped and listed);
            two records with one uid (sample ids must be unique).
    """
    file = Path(path)
    if not file.is_file():
        raise CorpusError(f"STALE file {file} not found: pass -T path=<a STALE JSON file> (docs/tasks.md#stale)")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorpusError(f"STALE file {file} is not JSON: {exc}") from None
    except RecursionError:
        raise CorpusError(f"STALE file {file} is nested too deep to be a STALE corpus") from None
    if not isinstance(data, list):
        raise CorpusError(f"STALE file {file} must hold a JSON list of records, got {type(data).__name__}")
    records, skipped, seen = [], [], set()
    for index, raw in enumerate(data):
        try:
            record = parse_record(raw, index)
            if record.uid in seen:
                raise CorpusError(f"STALE record {index} (uid {record.uid!r}): the uid is used by an earlier record")
        except CorpusError as exc:
            if strict:
                raise CorpusError(f"{exc} (in {file}; -T strict=false skips bad records and counts them)") from None
            skipped.append(str(exc))
            continue
        seen.add(record.uid)
        records.append(record)
    return Corpus(tuple(records), tuple(skipped))


def session_messages(record: Record, index: int) -> list[ChatMessage]:
    """One session as the agent sees it: its turns, the first after the session's date line
    (message ids ``uid/session/turn``, not random: the same record gives byte-identical samples)."""
    date = record.timestamps[index]
    header = prompts.STALE_SESSION_DATE.format(timestamp=date) if date is not None else ""
    return [
        TURN_MESSAGES[role](content=(header if i == 0 else "") + content, id=f"{record.uid}/{index}/{i}")
        for i, (role, content) in enumerate(record.sessions[index])
    ]


def message_tokens(message: ChatMessage) -> int:
    """A message's tokens as the scripted provider counts them (so the budget is what it will count)."""
    return count_text_tokens(message.text)


def session_tokens(record: Record) -> list[int]:
    """The tokens of each session as shown (``harness/tokens.py``)."""
    return [sum(message_tokens(m) for m in session_messages(record, i)) for i in range(len(record.sessions))]


@dataclass(frozen=True)
class Trimmed:
    """Which sessions a history keeps under a budget, and its size before and after."""

    kept: tuple[int, ...]
    tokens: int
    tokens_full: int
    over_budget: bool

    def to_json(self, sessions: int) -> dict[str, Any]:
        return {
            "sessions": sessions,
            "sessions_kept": len(self.kept),
            "kept": list(self.kept),
            "history_tokens": self.tokens,
            "history_tokens_full": self.tokens_full,
            "over_budget": self.over_budget,
        }


def trim(record: Record, budget: int) -> Trimmed:
    """Drop whole sessions, oldest first and never a relevant one, until the history fits ``budget``."""
    sizes = session_tokens(record)
    kept, total = list(range(len(sizes))), sum(sizes)
    for index in range(len(sizes)):
        if total <= budget:
            break
        if index not in record.relevant:
            kept.remove(index)
            total -= sizes[index]
    return Trimmed(tuple(kept), total, sum(sizes), total > budget)


def history_messages(record: Record, kept: Sequence[int]) -> list[ChatMessage]:
    """The system message, then the kept sessions in corpus order."""
    messages: list[ChatMessage] = [ChatMessageSystem(content=prompts.STALE_SYSTEM, id=f"{record.uid}/system")]
    for index in kept:
        messages += session_messages(record, index)
    return messages


# -- the published corpus on the Hugging Face hub (the optional [stale] extra) --

#: STALE's dataset repository and file (CC BY 4.0; its distractor sessions derive from LongMemEval, MIT).
HUB_REPO, HUB_FILE = "STALEproj/STALE", "T1_T2_400_FULL.json"
#: Records in the published file (``eval.yaml``'s ``dataset_samples``).
HUB_RECORDS = 400
#: The revision downloaded unless ``-T hub_revision=`` names one. The commit
#: actually downloaded is recorded in the log (``hub_commit``): pin it to rerun.
HUB_REVISION = "main"


def download(revision: str = HUB_REVISION) -> tuple[Path, str]:
    """The published file via ``huggingface_hub`` (cached under ``~/.cache/huggingface``),
    and the commit it came from.

    Raises:
        CorpusError: ``huggingface_hub`` is not installed, or the download failed
            (offline, no such revision); the message says to pass ``path``.
    """
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise HubUnavailable(
            "source=hub downloads STALE with huggingface_hub, which is not installed: "
            'pip install -e ".[stale]", or download the file yourself and pass -T path=<file>'
        ) from None
    try:
        local = hf_hub_download(repo_id=HUB_REPO, filename=HUB_FILE, repo_type="dataset", revision=revision)
    except Exception as exc:  # noqa: BLE001 - offline, unknown revision, HTTP errors: all say the same
        # not the exception's text: offline, huggingface_hub's reads "client has been closed"
        raise HubUnavailable(
            f"could not download {HUB_FILE} from the Hugging Face dataset {HUB_REPO} at revision {revision!r} "
            f"({type(exc).__name__}: offline, or no such revision). Fetch the file on a machine that is online "
            "and pass -T path=<file>"
        ) from None
    found = Path(local)
    return found, found.parent.name  # .../snapshots/<commit>/<file>


def record_sample(record: Record, budget: int) -> Sample:
    """The record as an Inspect sample: its id the uid, its input the (trimmed)
    history, its target the new state, the rest (the probes, the truth, the
    trimming) in its metadata."""
    trimmed = trim(record, budget)
    return Sample(
        id=record.uid,
        input=history_messages(record, trimmed.kept),
        target=record.m_new,
        metadata=sample_metadata(record, {"trim": trimmed.to_json(len(record.sessions))}),
    )


def sample_metadata(record: Record, shown: Mapping[str, Any]) -> dict[str, Any]:
    """A record's sample metadata: the truth and the probes, then ``shown`` (how
    the history reaches the agent), the prompt version and the characters replaced."""
    return {
        "uid": record.uid,
        "type": record.type,
        "m_old": record.m_old,
        "m_new": record.m_new,
        "explanation": record.explanation,
        "queries": dict(record.queries),
        "relevant_sessions": list(record.relevant),
        **shown,
        "stale_prompt_version": prompts.STALE_PROMPT_VERSION,
        **({"corpus_replaced_characters": record.replaced} if record.replaced else {}),
    }
