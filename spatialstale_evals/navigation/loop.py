"""The navigate task's agent loop, shared by every memory strategy.

Strategies differ only in the memory view they build, so each is a policy
(``navigation/strategies.py``) that one loop consults: before the first step,
before every step (what has come into view) and after each L3 event it may
judge the store and rebuild the view; every turn the navigator gets a fresh
prompt (``history=0`` by default), so a step's prompt does not grow with the
step number and an episode's tokens grow linearly with its length. With a
``view_radius`` the agent (and its audits) see only the cells around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentText,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.audit import FORMATS, audit_span, audit_summary
from spatialstale_evals.harness.counts import confusion, edit_counts, f1_from_counts
from spatialstale_evals.harness.lake_episode import play_turn
from spatialstale_evals.harness.loggable import loggable_output, tallies
from spatialstale_evals.harness.memory_text import MemoryFraming, MemoryPosition, MemoryStyle, system_prompt, written
from spatialstale_evals.harness.memory_tool import MemoryAccess
from spatialstale_evals.harness.memory_view import FilterMode
from spatialstale_evals.harness.move import MOVE_TOOL
from spatialstale_evals.harness.observe import Observation, Observed, observation, observation_parts, user_message
from spatialstale_evals.harness.samples import InstanceSet, record_instance
from spatialstale_evals.harness.score_counts import COUNTS
from spatialstale_evals.navigation.episode import (
    Episode,
    due_entries,
    episode_record,
    headline_value,
    score_explanation,
    score_value,
    step_line,
)
from spatialstale_evals.navigation.memory_access import FetchedMemory, memory_counts, memory_line
from spatialstale_evals.navigation.metrics import NAVIGATION_METRICS
from spatialstale_evals.navigation.state import NavigationState
from spatialstale_evals.navigation.strategies import STRATEGIES, JudgeRequest, MemoryPolicy, Moment, Verdict
from spatialstale_evals.world.env import DynamicFrozenLakeEnv
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import MemoryEntry
from spatialstale_evals.world.render import RenderStyle

#: The ``source`` of the one transcript line per step (``episode.step_line``):
#: one small event, so the harness's own cost per step stays low (README, Performance).
STEP_SOURCE = "step"


def step_message(
    episode: Episode,
    modality: str | Observation,
    policy: MemoryPolicy,
    position: MemoryPosition = "before",
    access: MemoryAccess = "prompt",
) -> ChatMessageUser:
    """The memory view, the observation (after a partial-observability line),
    then the position line. By default memory comes first: what changes least
    comes first, so providers' prefix caches can reuse it (``position``). With
    the memory tool (``access``) a line saying where the notes are stands for the view."""
    agent, goal = episode.agent, episode.goal
    memory: list[Content] = []
    if policy.shows_memory and access == "tool":
        memory.append(ContentText(text=prompts.NAVIGATE_MEMORY_TOOL))
    elif policy.shows_memory:
        text = (
            prompts.NAVIGATE_MEMORY.format(count=len(episode.view), entries="\n".join(n.text for n in episode.view))
            if episode.view
            else prompts.NAVIGATE_MEMORY_EMPTY
        )
        memory.append(ContentText(text=text))
    seen: list[Content] = []
    if episode.view_radius is not None:
        unseen = observation(modality).unseen
        seen.append(ContentText(text=prompts.NAVIGATE_PARTIAL.format(radius=episode.view_radius, unseen=unseen)))
    seen += observation_parts(episode.seen, agent, modality, "navigate")
    step = prompts.NAVIGATE_STEP.format(
        row=agent[0], col=agent[1], goal_row=goal[0], goal_col=goal[1], steps_left=episode.steps_left
    )
    parts = [*memory, *seen] if position == "before" else [*seen, *memory]
    return user_message([*parts, ContentText(text=step)])


def audit_record(
    episode: Episode, instance: Instance, reason: str, verdict: Verdict, edits: bool = False
) -> dict[str, Any]:
    """One judgement in the episode record: which entries the view now treats
    as contradicted, and the confusion counts of this judgement (the entries
    it judged, not those it could not see) against the truth; with ``edits``
    (an audit asked for them) the counts of its proposed corrections too."""
    removed = {eid for eid, d in episode.decisions.items() if d == "contradicted"}
    judged = [e for e in instance.memory if verdict.decisions.get(e.id, "unverified") != "unverified"]
    flagged = {e.id for e in judged if verdict.decisions[e.id] == "contradicted"}
    labels = instance.labels_at(episode.epoch)
    counts = confusion(judged, flagged, labels, instance.g0)
    if edits:
        counts |= edit_counts(judged, flagged, verdict.corrections, labels)
    return {
        "step": episode.env.steps,
        "reason": reason,
        "removed": sorted(removed),
        "calls": verdict.calls,
        "judged": len(judged),
        "f1": f1_from_counts(counts["tp"], counts["fp"], counts["fn"]),
        **counts,
    }


def model_input(
    system: ChatMessage, turns: list[list[ChatMessage]], current: ChatMessage, history: int
) -> list[ChatMessage]:
    earlier = [m for turn in turns[max(len(turns) - history, 0) :] for m in turn] if history else []
    return [system, *earlier, current]


@dataclass
class Navigation:
    """One episode being played: the loop's state and its steps as methods."""

    instance: Instance
    policy: MemoryPolicy
    episode: Episode
    navigator: Model
    auditor: Model
    settings: NavigationSettings
    turns: list[list[ChatMessage]] = field(default_factory=list)
    #: The memory in the store (``memory_access=tool``), None when it is in the prompt.
    fetched: FetchedMemory | None = None

    def __post_init__(self) -> None:
        self.system: ChatMessage = ChatMessageSystem(content=system_prompt(self.settings.memory_framing))

    def due(self) -> tuple[MemoryEntry, ...]:
        """Entries not yet judged since the world last changed whose cell is in
        view (a distractor note, about no cell, always is)."""
        episode = self.episode
        return due_entries(self.instance.memory, episode.agent, episode.view_radius, episode.judged, episode.epoch)

    async def judge(self, moment: Moment, reason: str) -> None:
        """Let the policy judge the store now, if it does at this moment, and
        rebuild the view from the latest decision on every entry; the audit is
        recorded with its own confusion counts against the truth."""
        episode, instance = self.episode, self.instance
        if episode.over or not self.policy.judges(moment, instance, episode.epoch):
            return
        request = JudgeRequest(
            instance=instance,
            grid=episode.grid,
            seen=episode.seen,
            agent=episode.agent,
            auditor=self.auditor,
            modality=self.settings.observation,
            batch_size=self.settings.batch_size,
            structured=self.settings.structured_output,
            output=self.settings.output,
            threshold=self.settings.threshold,
            reason=reason,
            step=episode.env.steps,
            epoch=episode.epoch,
            due=self.due(),
            ledger=episode.ledger,
            decisions=episode.decisions,
        )
        label = self.policy.label(reason)
        if not self.policy.calls_model or not request.due:  # no model call: no span of its own
            record = await self.apply(request, moment)
        else:
            async with audit_span(label):  # the auditor's calls and what each reply said
                record = await self.apply(request, moment)
        if record is not None:  # after the span: the navigator's transcript shows what the audit did
            summary = audit_summary(record["judged"], record["calls"], record, "removed", record["removed"])
            transcript().info(summary, source=label)

    async def apply(self, request: JudgeRequest, moment: Moment) -> dict[str, Any] | None:
        """The policy's verdict on ``request``, merged into the episode's
        decisions, the view rebuilt; every window's judgement, and every other
        one that did something, recorded (the record, else None)."""
        episode, instance = self.episode, self.instance
        verdict = await self.policy.judge(request)
        if verdict is None:
            return None
        episode.judged.update((e.id, episode.epoch) for e in request.due)
        if verdict.resolutions:
            episode.resolutions.extend(verdict.resolutions)
            transcript().info({"resolutions": verdict.resolutions}, source=self.policy.name)
        changed = episode.decide(verdict.decisions, verdict.steps, verdict.corrections)
        episode.audit_tokens += verdict.tokens
        episode.audit_calls += verdict.calls
        mode = self.settings.filter_mode
        episode.view = self.policy.view(
            instance.memory, episode.decisions, mode, episode.decided_at, episode.corrections
        )
        if self.fetched is not None:
            self.fetched.sync(episode.view, episode.env.steps)
        if moment != "view" or verdict.calls or changed:  # every window's judgement, and every one that did something
            edits = FORMATS[self.settings.output].edits
            episode.audits.append(audit_record(episode, instance, request.reason, verdict, edits))
            return episode.audits[-1]
        return None

    async def decide(self) -> tuple[list[ChatMessage], ChatMessageAssistant]:
        """Show the navigator this step's prompt; the step's messages so far and
        the reply whose calls ``act`` answers (with the memory tool: after the
        step's memory calls, those taken out of it)."""
        s = self.settings
        user = step_message(self.episode, s.observation, self.policy, s.memory_position, s.memory_access)
        if self.fetched is not None:
            return await self.fetched.step(self.generate, user, self.episode.env.steps)
        reply = await self.generate([user])
        return [user, reply], reply

    async def generate(self, current: list[ChatMessage]) -> ChatMessageAssistant:
        """The navigator's reply to the step's messages so far, after the kept turns."""
        tools = [MOVE_TOOL] if self.fetched is None else [MOVE_TOOL, self.fetched.info]
        output = loggable_output(
            await self.navigator.generate(
                [*model_input(self.system, self.turns, current[0], self.settings.history), *current[1:]],
                tools=tools,
                tool_choice="auto",
                config=GenerateConfig(parallel_tool_calls=False),
            )
        )
        self.episode.nav_tokens += output.usage.total_tokens if output.usage else 0
        return output.message

    async def turn(self, messages: list[ChatMessage]) -> None:
        """One decision: what the agent sees (and the policy's judgement of what
        came into view), prompt, reply, move, and the policy's reaction to any
        event the move's step fired."""
        episode = self.episode
        episode.observe()
        await self.judge("view", f"in view at step {episode.env.steps}")
        shown, reply = await self.decide()
        start, fallbacks = episode.agent, len(episode.fallbacks)
        turn = [*shown, *play_turn(episode, reply)]
        messages.extend(turn)
        self.turns.append(turn)
        fallback = episode.fallbacks[-1]["problem"] if len(episode.fallbacks) > fallbacks else None
        step = episode.env.steps
        transcript().info(step_line(step, start, episode.actions[-1], episode, fallback), source=STEP_SOURCE)
        if episode.last_fired:
            episode.epoch = step
            await self.judge("event", f"event at step {step}")


@dataclass(frozen=True)
class NavigationSettings(Observed):
    """Everything a navigate task fixes for its episodes: its parameters, as
    validated by the task (``view_radius`` already None when it covers the
    grid; ``max_steps`` None for each instance's own budget). No defaults
    here: they are the task's (``harness.params.defaults``), in one place."""

    strategy: str
    modality: str
    batch_size: int
    output: str
    threshold: float
    max_steps: int | None
    history: int
    view_radius: int | None
    filter_mode: FilterMode
    memory_style: MemoryStyle
    memory_framing: MemoryFraming
    memory_position: MemoryPosition
    distractors: int
    structured_output: bool
    render: RenderStyle
    memory_access: MemoryAccess
    max_memory_calls: int


@solver
def navigation_loop(instances: InstanceSet, settings: NavigationSettings) -> Solver:
    """Play one episode: build the strategy's memory view, then ask the model
    for one ``move`` per step until success, death or the step budget."""
    policy, s = STRATEGIES[settings.strategy], settings

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        canonical = instances.begin(state)
        instance = written(canonical, s.memory_style, s.distractors)  # the store as this run writes it
        env = DynamicFrozenLakeEnv(instance, max_steps=s.max_steps or instance.max_steps)
        env.reset()
        episode = Episode(env=env, view=policy.view(instance.memory, {}), view_radius=s.view_radius)
        episode.trajectory.append(list(env.agent))
        navigator = get_model()
        auditor = get_model(role="auditor", default=navigator)
        fetched = FetchedMemory(s.max_memory_calls) if s.memory_access == "tool" else None
        run = Navigation(instance, policy, episode, navigator, auditor, s, fetched=fetched)
        try:
            episode.observe()
            await run.judge("start", "start")
            if fetched is not None:
                fetched.sync(episode.view, 0)  # the file holds the view before the first step
            state.messages = [run.system]
            while not episode.over:
                await run.turn(state.messages)
        finally:
            # Also when an Inspect limit (tokens, time, messages) stops the
            # episode: Inspect still scores the sample (outcome "limit").
            record = episode_record(episode, canonical)
            # the repair counts too (only when non-zero): they survive Inspect stripping an unloggable sample's content
            state.store_as(NavigationState).episode = record | (fetched.evidence(record) if fetched else {}) | tallies()
            record_instance(state, canonical)
        state.output.completion = f"{episode.outcome} after {env.steps} steps"
        return state

    return solve


@scorer(metrics=NAVIGATION_METRICS)
def navigation_scorer():
    """Outcome of one episode, with what is needed to trace a death to its
    entry: the headline values as the score's value, every count in its
    metadata (``counts``) beside the episode record."""

    async def score(state: TaskState, target: Target) -> Score:
        record: dict[str, Any] | None = state.store_as(NavigationState).episode
        counts = score_value(record) | memory_counts(record)  # the memory tool's counts: none without it
        return Score(
            value=headline_value(counts),
            answer=record["outcome"],
            explanation=score_explanation(record) + memory_line(record),
            metadata={**record, COUNTS: counts},
        )

    return score
