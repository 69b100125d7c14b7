"""The lifelong loop: a lifetime's episodes, each a new conversation, with only
the memory store carried from one to the next.

Per episode: the notes in the store are read and scored against the lake as
it now is (``notes.note_scores``) and the audit is written to the transcript;
then the navigate task's loop (one ``move`` per step, a greedy fallback for a
reply without one) with Inspect's ``memory`` tool beside ``move``: memory
calls take no step, at most ``max_memory_calls`` per step, each run by
Inspect's own ``execute_tools`` (so the transcript shows every file
operation); then one write-back turn that tells the agent the outcome and
offers only ``memory`` (same cap). The conversation is kept within the
episode (``history``: None keeps all of it, append-only, so each request is
the previous one plus the new turn; K keeps the last K turns), and dropped
at its end. The memory store is Inspect's per-sample ``MemoryStore``: it
persists across the episodes of one sample and never crosses samples or
epochs. Under ``memory=none`` (``arms.py``) the loop is the same without the
memory tool, its prompt lines and the write-back turn. Under
``memory=transcript`` the conversation is not dropped: it carries over to the
next episode (``transcript.Transcript``), compacted by Inspect's strategies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolCall
from inspect_ai.util import LimitExceededError, store, store_as

from spatialstale_evals.harness import prompts as shared
from spatialstale_evals.harness.lake_episode import play_turn
from spatialstale_evals.harness.loggable import loggable_output, record_replacements
from spatialstale_evals.harness.memory_quota import bounded_memory
from spatialstale_evals.harness.move import MOVE_TOOL
from spatialstale_evals.harness.observe import observation, observation_parts, user_message
from spatialstale_evals.lifetime import prompts
from spatialstale_evals.lifetime.agents import AgentFactory, move_tool, react_factory, run_agent
from spatialstale_evals.lifetime.arms import DEFAULT_MEMORY, MEMORY_ARMS, MemoryArm
from spatialstale_evals.lifetime.episode import LifeEpisode, LifetimeState, MemoryStore
from spatialstale_evals.lifetime.notes import Notes, parse_notes
from spatialstale_evals.lifetime.provenance import Session, runtime_memory, step_labels
from spatialstale_evals.lifetime.records import episode_record, note_audit
from spatialstale_evals.lifetime.samples import LifetimeSet
from spatialstale_evals.lifetime.shared import (
    AUTHORS,
    SCOUT_ROLE,
    agent_models,
    author_of,
    by_author,
    shared_record,
    system_prompt,
    writable,
)
from spatialstale_evals.lifetime.transcript import DEFAULT_THRESHOLD, Transcript, new_compaction_events, strategy_for
from spatialstale_evals.world.env import DynamicFrozenLakeEnv
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.lifetimes import Lifetime


@dataclass(frozen=True)
class LifelongSettings:
    """What the task fixes for every lifetime (its parameters, validated), in
    the order its samples' metadata names them (``dataclasses.asdict``);
    ``max_steps`` None: each lifetime's own budget."""

    episodes: int
    view_radius: int | None
    history: int | None
    max_memory_calls: int
    initial_memory: str
    agent: str = "default"
    max_steps: int | None = None
    memory: str = DEFAULT_MEMORY
    #: ``memory=transcript`` only: the memory tool offered too, and how the conversation is compacted.
    memory_tool: bool = False
    compaction: str = "none"
    compaction_threshold: int = DEFAULT_THRESHOLD
    #: The runtime's provenance settings (``provenance.py``, ``shared.py``).
    provenance: str = "none"
    scout_access: str = "readwrite"

    @property
    def arm(self) -> MemoryArm:
        """What carries over between episodes (``arms.MEMORY_ARMS``)."""
        return MEMORY_ARMS[self.memory]

    @property
    def tool(self) -> bool:
        """Whether the memory tool is offered (and so the write-back turn played)."""
        return self.arm.tool or self.memory_tool

    def system_text(self) -> str:
        """The system prompt: the arm's, with the memory tool's paragraph when ``memory_tool`` adds it."""
        extra = prompts.TRANSCRIPT_MEMORY_TOOL if self.memory_tool and not self.arm.tool else ""
        return (self.arm.system + extra).format(episodes=self.episodes, max_memory_calls=self.max_memory_calls)

    @property
    def runtime(self) -> bool:
        """Whether the runtime keeps the memory's provenance (``provenance.py``):
        under ``memory=shared`` or a ``provenance`` other than ``none``."""
        return self.memory == "shared" or self.provenance != "none"


def paper_memory(instance: Instance) -> str:
    """The instance's entries in the paper's entry format, one per line."""
    return "".join(entry.text + "\n" for entry in instance.memory)


#: A memory store instance's files in the sample's store: ``MemoryStore:files``
#: (the default instance), ``MemoryStore:<instance>:files`` (a named one, or
#: ``@<scope>`` under Inspect's ``tool_state_scope``), as ``StoreModel`` names them.
_STORE_FILES = re.compile(rf"^{MemoryStore.__name__}:(?:(?P<instance>.+):)?files$")


#: Reads an agent's notes as they are now, inside its sample: path -> text.
NotesReader = Callable[[], dict[str, str]]


def own_notes(reader: NotesReader) -> NotesReader:
    """An agent's own reader, its answer held to ``path -> text`` (a reader
    that returns something else is the caller's error, said plainly)."""

    def read() -> dict[str, str]:
        files = reader()
        if not isinstance(files, Mapping):
            raise TypeError(f"the notes reader must return a mapping path -> text; it returned {type(files).__name__}")
        return {str(path): str(text) for path, text in files.items()}

    return read


def memory_files() -> dict[str, str]:
    """Every file of every memory store instance of the sample as it is now
    (path -> text): the default instance's under their own paths, first, then
    any other instance's (an agent that ran the memory tool with an
    ``instance`` or inside ``tool_state_scope``) as ``[instance]/path``, so
    notes are read wherever the agent's memory tool kept them."""
    files = dict(store_as(MemoryStore).files)
    others: dict[str, str] = {}
    for key, value in store().items():
        found = _STORE_FILES.match(key)
        if found and found["instance"] is not None and isinstance(value, dict):
            others |= {f"[{found['instance']}]{path}": str(text) for path, text in value.items()}
    return files | dict(sorted(others.items()))


def provenance(files: dict[str, str], seed: dict[str, str], height: int, width: int) -> dict[str, Notes] | None:
    """The notes split by who wrote them: ``seeded``, the lines of the
    ``initial_memory`` seed still in their file as seeded; ``written``, every
    other line (the agent's). None without a seed (all notes are the agent's)."""
    if not seed:
        return None
    parts: dict[str, dict[str, str]] = {"seeded": {}, "written": {}}
    for path, text in files.items():
        seeded = set(seed.get(path, "").split("\n")) - {""}
        lines = text.split("\n")
        parts["seeded"][path] = "\n".join(line for line in lines if line in seeded)
        parts["written"][path] = "\n".join(line for line in lines if line not in seeded)
    return {name: parse_notes(part, height, width) for name, part in parts.items()}


@dataclass
class Conversation:
    """One episode's conversation with the agent."""

    model: Model
    memory: Tool
    settings: LifelongSettings
    episode: LifeEpisode
    system: ChatMessage
    turns: list[list[ChatMessage]]
    #: The lifetime's conversation under ``memory=transcript`` (None: this episode's alone).
    lifetime: Transcript | None = None
    #: The runtime's provenance under ``settings.runtime`` (None: none kept).
    session: Session | None = None

    def request(self, current: list[ChatMessage]) -> list[ChatMessage]:
        """The system message, the kept turns, the turn under way."""
        history = self.settings.history
        kept = self.turns if history is None else self.turns[len(self.turns) - history :] if history else []
        return [self.system, *(m for turn in kept for m in turn), *current]

    async def generate(self, current: list[ChatMessage], tools: list[Any]) -> ChatMessageAssistant:
        """The model's reply (an empty one, so a fallback step, when its output has no choice).
        Calls and tokens are counted from the transcript (``count_model_events``)."""
        sent = self.request(current)
        if self.lifetime is not None:
            sent = await self.lifetime.input(sent, current, tools)
        output: ModelOutput = await self.model.generate(
            sent, tools=tools, tool_choice="auto", config=GenerateConfig(parallel_tool_calls=False)
        )
        if self.lifetime is not None:
            await self.lifetime.record(sent, output)
        return loggable_output(output).message  # an empty reply (a fallback step) when it has no choice

    async def run_memory(self, calls: list[ToolCall], used: int, limit: str) -> tuple[list[ChatMessage], int, bool]:
        """Answers to the reply's memory calls, in order: those within the cap
        run by Inspect's ``execute_tools``, the rest refused. Any failure the
        tool itself does not report becomes an error answer, never a sample
        error. Returns the answers, the calls used, whether any was refused."""
        allowed = calls[: max(0, self.settings.max_memory_calls - used)]
        answers: list[ChatMessage] = []
        if allowed:
            try:
                result = await execute_tools([ChatMessageAssistant(content="", tool_calls=allowed)], [self.memory])
                answers = [m for m in result.messages if isinstance(m, ChatMessageTool)]
            except LimitExceededError:
                raise
            except Exception as exc:  # noqa: BLE001 - bad model output never crashes a sample
                answers = [
                    ChatMessageTool(content=prompts.MEMORY_FAILED.format(error=type(exc).__name__), tool_call_id=c.id,
                                    function="memory")
                    for c in allowed
                ]  # fmt: skip
        refused = calls[len(allowed) :]
        answers += [
            ChatMessageTool(content=limit.format(cap=self.settings.max_memory_calls), tool_call_id=c.id,
                            function="memory")
            for c in refused
        ]  # fmt: skip
        self.episode.memory_calls += len(allowed)
        self.episode.memory_refused += len(refused)
        return answers, used + len(allowed), bool(refused)

    def step_prompt(self, first: bool) -> ChatMessageUser:
        """The episode header (first step only), the view line, the observation, the step line."""
        ep, s = self.episode, self.settings
        parts: list[Any] = []
        if first:
            later = s.arm.carries_conversation and ep.index > 1
            header = prompts.TRANSCRIPT_EPISODE_START if later else prompts.EPISODE_START
            parts.append(ContentText(text=header.format(episode=ep.index, episodes=s.episodes)))
        if s.view_radius is not None:
            unseen = observation("text").unseen
            parts.append(ContentText(text=shared.NAVIGATE_PARTIAL.format(radius=s.view_radius, unseen=unseen)))
        parts += observation_parts(ep.seen, ep.agent, "text", "navigate")
        if self.session is not None and (labels := step_labels(self.session, memory_files())):
            parts.append(ContentText(text="\n".join(labels)))
        goal = ep.goal
        step = shared.NAVIGATE_STEP.format(
            row=ep.agent[0], col=ep.agent[1], goal_row=goal[0], goal_col=goal[1], steps_left=ep.steps_left
        )
        return user_message([*parts, ContentText(text=step)])

    async def turn(self, first: bool) -> None:
        """One step: the prompt, then replies until one moves (memory calls in
        between, up to the cap); a reply without a valid move, or one over the
        cap without a move, gets the greedy fallback step."""
        ep = self.episode
        ep.observe()
        current: list[ChatMessage] = [self.step_prompt(first)]
        used = 0
        tools = [MOVE_TOOL, self.memory] if self.settings.tool else [MOVE_TOOL]
        try:
            while True:
                reply = await self.generate(current, tools)
                current.append(reply)
                calls = list(reply.tool_calls or [])
                # without the memory tool a memory call is a call of an unknown tool (the fallback step)
                offered = self.settings.tool
                mem = [c for c in calls if c.function == "memory" and offered]
                others = [c for c in calls if c.function != "memory" or not offered]
                answers, used, refused = await self.run_memory(mem, used, prompts.MEMORY_LIMIT)
                if mem and not others and not refused:
                    current += answers
                    continue
                current += answers + play_turn(self.episode, reply, others)
                break
        finally:
            self.turns.append(current)

    async def write_back(self) -> None:
        """The turn after the episode: its outcome, and only the memory tool."""
        ep, s = self.episode, self.settings
        following = prompts.NEXT_EPISODE_TRANSCRIPT if s.arm.carries_conversation else prompts.NEXT_EPISODE
        after = following.format(episode=ep.index + 1) if ep.index < s.episodes else prompts.LAST_EPISODE
        text = prompts.WRITE_BACK.format(
            episode=ep.index, episodes=s.episodes, outcome=ep.outcome, steps=ep.env.steps, next_episode=after,
            max_memory_calls=s.max_memory_calls,
        )  # fmt: skip
        current: list[ChatMessage] = [ChatMessageUser(content=text)]
        used = 0
        try:
            while True:
                reply = await self.generate(current, [self.memory])
                current.append(reply)
                calls = list(reply.tool_calls or [])
                mem = [c for c in calls if c.function == "memory"]
                others = [
                    ChatMessageTool(content=prompts.MOVE_AFTER_EPISODE, tool_call_id=c.id, function=c.function)
                    for c in calls
                    if c.function != "memory"
                ]
                before = ep.memory_calls
                answers, used, refused = await self.run_memory(mem, used, prompts.MEMORY_LIMIT_WRITE_BACK)
                ep.write_back_calls += ep.memory_calls - before
                current += answers + others
                if not mem or refused:
                    break
        finally:
            self.turns.append(current)


def count_model_events(episode: LifeEpisode, start: int) -> None:
    """The episode's model calls and tokens: every model event the transcript
    holds from its ``start`` (its event count as the episode began), whoever
    made the call (the default loop, ``react``, any agent, the write-back),
    tokens as each call's usage reports them."""
    calls = [e for e in transcript().history.events_from(start) if isinstance(e, ModelEvent)]
    episode.model_calls = len(calls)
    episode.tokens = sum(e.output.usage.total_tokens for e in calls if e.output and e.output.usage)


async def play_episode(
    life: Lifetime, instance: Instance, k: int, settings: LifelongSettings, memory_tool: Tool, model: Model,
    messages: list[ChatMessage], factory: AgentFactory | None = None, notes: NotesReader = memory_files,
    lifetime: Transcript | None = None, session: Session | None = None,
) -> None:  # fmt: skip
    """Episode ``k``: notes scored at its start, the steps, the write-back, its record
    (the notes read by ``notes``: the memory stores, or an agent's own reader);
    under ``memory=transcript`` in the ``lifetime``'s conversation; ``session``:
    the runtime's provenance, under ``settings.runtime``."""
    state = store_as(LifetimeState)
    first_event = transcript().history.event_count
    world = life.episodes[k - 1]
    env = DynamicFrozenLakeEnv(life.instance_for(instance, k), max_steps=settings.max_steps or life.max_steps)
    env.reset()
    episode = LifeEpisode(index=k, env=env, view_radius=settings.view_radius)
    episode.trajectory.append(list(env.agent))
    files = notes()
    start_notes: Notes = parse_notes(files, life.height, life.width)
    seed = {prompts.PAPER_MEMORY_PATH: paper_memory(instance)} if settings.initial_memory == "paper" else {}
    sources = provenance(files, seed, life.height, life.width)
    ever_seen = {(r, c) for r, c in state.ever_seen}
    last_seen = {(r, c): kind for r, c, kind in state.last_seen}
    transcript().info(note_audit(start_notes, world.grid, ever_seen, k), source=f"notes at the start of episode {k}")
    own_system = lifetime is None  # a transcript's system message is the lifetime's
    system = ChatMessageSystem(content=system_prompt(settings, author_of(k))) if own_system else lifetime.system
    talk = Conversation(model, memory_tool, settings, episode, system, [], lifetime=lifetime, session=session)
    if lifetime is not None:
        talk.turns = lifetime.turns
        lifetime.episode_start = len(lifetime.turns)
        if lifetime.strategy is not None:
            lifetime.strategy.moment = lambda: (episode.grid, last_seen | episode.sightings,
                                                {"episode": k, "step": episode.env.steps})  # fmt: skip
    authored = None
    if session is not None:
        session.begin(k, author_of(k) if settings.memory == "shared" else AUTHORS[0], writable(settings, k), episode)
        authored = by_author(session.ledger, files, world.grid, ever_seen, last_seen, life.height, life.width)
    try:
        if factory is None and settings.agent == "default":
            first = True
            while not episode.over:
                await talk.turn(first)
                first = False
        else:  # an Inspect agent plays the episode with the two tools (lifetime/agents.py)
            episode.observe()
            strategy = lifetime.strategy if lifetime is not None else None
            make = factory or react_factory(episode, settings.max_memory_calls, strategy)
            tools = [move_tool(episode), memory_tool] if settings.tool else [move_tool(episode)]
            prior = talk.request([])
            played = await run_agent(make(tools), episode, [*prior, talk.step_prompt(True)], settings.max_memory_calls)
            talk.turns.append(played[len(prior) :])
            if strategy is not None:  # react's compactions, scored once its run is over
                strategy.finish(new_compaction_events(first_event))
            replies = [m for m in played if isinstance(m, ChatMessageAssistant)]
            episode.memory_calls += sum(c.function == "memory" for m in replies for c in m.tool_calls or [])
        if settings.tool:
            if session is not None:
                session.phase = "write_back"
            await talk.write_back()
    finally:
        count_model_events(episode, first_event)
        end_notes = parse_notes(notes(), life.height, life.width)
        record = episode_record(episode, world, start_notes, end_notes, ever_seen, sources, last_seen)
        if session is not None and settings.memory == "shared" and authored is not None:
            record["shared"] = shared_record(session.ledger, k, author_of(k), record, world.grid, end_notes, authored)
        state.records.append(record)
        state.ever_seen = sorted([list(c) for c in ever_seen | set(episode.sightings)])
        state.last_seen = [[r, c, kind] for (r, c), kind in sorted((last_seen | episode.sightings).items())]
        state.tokens += episode.tokens
        new_turns = talk.turns[lifetime.episode_start :] if lifetime is not None else talk.turns
        messages.extend([*([system] if lifetime is None or k == 1 else []), *(m for turn in new_turns for m in turn)])


@solver
def lifelong_loop(
    lives: LifetimeSet, settings: LifelongSettings, agent: AgentFactory | None = None, notes: NotesReader | None = None
) -> Solver:
    """Play a lifetime: ``episodes`` episodes, only the memory carried over;
    each by the default loop, ``react`` (``settings.agent``) or ``agent``'s;
    the notes read from the memory stores, or by ``notes`` (``memory=own``)."""
    if (notes is not None) != (settings.arm.notes_from == "agent"):
        raise ValueError(f"memory={settings.memory} reads the notes from the {settings.arm.notes_from}; notes={notes}")
    read = memory_files if notes is None else own_notes(notes)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        life = lives.begin(state)
        instance = lives.instance(life)
        memory_store = store_as(MemoryStore)
        if settings.initial_memory == "paper" and not memory_store.seeding_complete:
            text = paper_memory(instance)
            memory_store.files[prompts.PAPER_MEMORY_PATH] = text
            transcript().info(
                {"path": prompts.PAPER_MEMORY_PATH, "entries": len(instance.memory), "bytes": len(text.encode()),
                 "text": text},
                source="initial memory: the paper's entries written before episode 1",
            )  # fmt: skip
        memory_store.seeding_complete = True
        memory_tool = bounded_memory()
        model = get_model()
        session = None
        if settings.runtime:  # the runtime keeps the provenance (lifetime/provenance.py, lifetime/shared.py)
            session = Session(provenance=settings.provenance, height=life.height, width=life.width)
            session.ledger.seed(memory_store.files)
            memory_tool = runtime_memory(memory_tool, session)
        models = agent_models(settings, model, get_model(role=SCOUT_ROLE, default=model))
        state.messages = []
        lifetime = None
        if settings.arm.carries_conversation:
            strategy = strategy_for(settings.compaction, settings.compaction_threshold, lambda: ({}, {}, {}))
            lifetime = Transcript(ChatMessageSystem(content=settings.system_text()), strategy=strategy)
        for k in range(1, settings.episodes + 1):
            await play_episode(
                life, instance, k, settings, memory_tool, models[author_of(k)], state.messages, agent, read, lifetime,
                session,
            )  # fmt: skip
        records = store_as(LifetimeState).records
        record_replacements(state.metadata)
        state.output.completion = ", ".join(f"{r['episode']}: {r['outcome']}" for r in records)
        return state

    return solve
