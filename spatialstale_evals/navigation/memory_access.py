"""``navigate -T memory_access=tool``: the strategy's memory view in the memory
store instead of the step prompt (docs/tasks.md#navigate, "Memory in the store").

- The view (after the strategy's filtering and ``filter_mode``) is the file
  ``/memories/lake.md``, one entry a line in the entry format, exactly as the
  prompt would list it; written before the first step and rewritten whenever
  a judgement changes the view (the L3 refreshes of ``omcd`` and ``oracle``,
  the resolver's sightings), each text a new version of the file.
- Every step's prompt says that the agent's notes about the lake are in its
  memory directory, where the memory section would be; the read-only memory
  tool (the view is the strategy's, not the agent's to edit; so Claude models
  get it as a plain function tool) is offered beside ``move``. Memory calls
  take no step; at most ``max_memory_calls`` a step (``harness/memory_tool.py``),
  the rest refused; a reply that still makes none but memory calls gets the
  greedy fallback step.
- The episode record keeps whether and when the agent read the file (each
  read: the step, the version, the entries on the lines it asked for) and
  ``death_on_stale_read``: a death on a stale cell whose entry the agent's
  latest read of its line before the fatal move showed with its claim (as
  written or unverified; not marked, labelled out of date or corrected: as
  ``death_on_stale_shown`` reads the view), beside the
  ``death_on_stale`` and ``death_on_stale_shown`` of every mode.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.scorer import Metric, SampleScore
from inspect_ai.tool import Tool, ToolInfo, memory

from spatialstale_evals.harness.counts import ratio
from spatialstale_evals.harness.memory_tool import TOOL_NAME, MemoryUse, fetch_replies, prime, tool_info, write_file
from spatialstale_evals.harness.memory_view import Note
from spatialstale_evals.harness.metrics import defined, named_metric
from spatialstale_evals.harness.score_counts import metric_counts

#: The file the view is written to.
LAKE_FILE = "/memories/lake.md"
#: Memory calls per step unless told (the lifelong task's cap).
DEFAULT_MAX_MEMORY_CALLS = 5
#: The answer to a memory call past a step's cap.
NAVIGATE_MEMORY_LIMIT = "Not executed: at most {cap} memory calls per step. Call `move` now."


def lake_file(view: Sequence[Note]) -> str:
    """The view as its file holds it: every note's text on a line of its own."""
    return "".join(note.text + "\n" for note in view)


@dataclass
class FetchedMemory:
    """One episode's memory in the store: the file's versions (the step each
    was written at and the notes it holds), the memory tool, and what the
    agent did with it."""

    cap: int
    tool: Tool = field(default_factory=lambda: memory(readonly=True))
    versions: list[tuple[int, list[Note]]] = field(default_factory=list)
    use: MemoryUse = field(default_factory=MemoryUse)
    reads: list[dict[str, Any]] = field(default_factory=list)
    #: The navigator's model calls (a step's replies: its memory calls, then the move).
    model_calls: int = 0

    def __post_init__(self) -> None:
        self.info: ToolInfo = tool_info(self.tool)

    def sync(self, view: Sequence[Note], step: int) -> None:
        """Write the view to the file when it differs from the file's current version."""
        if self.versions and lake_file(self.versions[-1][1]) == lake_file(view):
            return
        if self.versions:
            write_file(LAKE_FILE, lake_file(view))
        else:
            prime({LAKE_FILE: lake_file(view)})
        self.versions.append((step, list(view)))

    async def step(
        self, generate: Callable[[list[ChatMessage]], Awaitable[ChatMessageAssistant]], user: ChatMessage, step: int
    ) -> tuple[list[ChatMessage], ChatMessageAssistant]:
        """One step's replies after ``user``: memory calls (capped) until a reply
        also moves or makes none; the step's messages and that last reply with
        its memory calls taken out (what the loop's ``act`` reads)."""
        use = MemoryUse(calls=0)
        new, last = await fetch_replies(
            lambda messages, allowed: generate(messages), [user], self.tool, use, self.cap, NAVIGATE_MEMORY_LIMIT
        )
        self.note_reads(use, step)
        self.model_calls += sum(isinstance(m, ChatMessageAssistant) for m in new)
        others = [c for c in last.tool_calls or [] if c.function != TOOL_NAME]
        return [user, *new], last.model_copy(update={"tool_calls": others or None})

    def note_reads(self, use: MemoryUse, step: int) -> None:
        """Add a step's memory use to the episode's: every read of the file with the entries it showed."""
        self.use.add(use)
        version = len(self.versions) - 1
        notes = self.versions[-1][1]
        for read in use.reads:
            first, last = read.lines or (1, -1)
            shown = notes[max(first, 1) - 1 : None if last == -1 or last > len(notes) else last]
            claims = {n.entry.id: n.shows_claim for n in shown}
            self.reads.append({"step": step, "version": version, "entries": len(shown), "claims": claims,
                               "bytes": read.bytes, "cut": read.cut})  # fmt: skip

    def evidence(self, record: dict[str, Any]) -> dict[str, Any]:
        """What the episode record adds: the memory evidence, and whether the agent
        died on a stale cell whose entry a read had shown it with its claim."""
        entry, before = record["death_entry"], [r for r in self.reads if r["step"] < record["steps"]]
        latest = next((r["claims"][entry] for r in reversed(before) if entry in r["claims"]), False)
        died_on_read = bool(record["death_on_stale"]) and latest
        return {
            "memory": {
                **{k: v for k, v in self.use.to_json().items() if k != "reads"},
                "reads": [{k: v for k, v in r.items() if k != "claims"} for r in self.reads],
                "read_steps": sorted({r["step"] for r in self.reads}),
                "versions": [{"step": s, "entries": len(view)} for s, view in self.versions],
                "model_calls": self.model_calls,
            },
            "death_on_stale_read": died_on_read,
        }


def memory_counts(record: dict[str, Any]) -> dict[str, Any]:
    """The episode's memory counts (none without the memory tool): the
    navigator's model calls, its memory calls (refused ones apart), reads of the file, whether it read the file at
    all, and ``death_on_stale_read``."""
    found = record.get("memory")
    if found is None:
        return {}
    return {
        "navigator_calls": found["model_calls"],
        "memory_calls": found["calls"],
        "memory_refused": found["refused"],
        "memory_reads": len(found["reads"]),
        "read_memory": int(bool(found["reads"])),
        "death_on_stale_read": int(record["death_on_stale_read"]),
    }


def memory_line(record: dict[str, Any]) -> str:
    """The explanation's line on the memory file (empty without the memory tool)."""
    found = record.get("memory")
    if found is None:
        return ""
    steps = found["read_steps"]
    when = f"at step(s) {', '.join(map(str, steps))}" if steps else "never"
    traced = "; it died on a stale entry it had read" if record["death_on_stale_read"] else ""
    versions, calls = len(found["versions"]), found["calls"]
    return f"\n\nMemory file {LAKE_FILE}: {versions} version(s), read {when} ({calls} memory call(s){traced})."


def _mean_of(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        counts = [c for c in metric_counts(scores) if key in c]
        return defined(ratio(sum(float(c[key]) for c in counts), len(counts)))

    return compute


#: Beside the navigation metrics with the memory tool: episodes that read the file, memory calls
#: per episode, and deaths on a stale entry the agent had read, over all episodes.
TOOL_METRICS: list[Metric] = [
    named_metric("memory_read_rate", _mean_of("read_memory")),
    named_metric("memory_calls_per_episode", _mean_of("memory_calls")),
    named_metric("death_on_stale_read_rate", _mean_of("death_on_stale_read")),
]
