"""The navigate task's agent loop, shared by all five memory strategies.

The strategies differ only in the memory view they build (which entries the
navigator sees), so they are data (``Strategy``) feeding one loop, not five
solvers. Each decision is a fresh prompt by default (``history=0``), so a
step's prompt does not grow with the step number and an episode's tokens grow
linearly with its length.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentText,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from spatialstale_evals.harness import metrics, prompts
from spatialstale_evals.harness.audit import audit_entries
from spatialstale_evals.harness.detection import confusion
from spatialstale_evals.harness.observe import observation_parts, user_message
from spatialstale_evals.harness.parsing import parse_move
from spatialstale_evals.harness.samples import InstanceSet, record_instance
from spatialstale_evals.world.env import DEATH, SUCCESS, TIMEOUT, DynamicFrozenLakeEnv
from spatialstale_evals.world.grid import ACTIONS, Cell, Grid, goal_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import MemoryEntry
from spatialstale_evals.world.staleness import change_kind, stale_labels


@dataclass(frozen=True)
class Strategy:
    """How a strategy builds the navigator's memory view.

    Attributes:
        shows_memory: Whether the prompt has a memory section at all.
        judge: Who decides which entries to remove: nobody (``none``), the
            shared model audit (``audit``) or the ground truth (``truth``).
        single_batch: Audit all N entries in one call (self_verify) instead of
            batches of ``batch_size``.
        audit_at_start: Always judge before the first step, even if the world
            has not changed yet (self_verify's pre-navigation pass).
        refresh_on_event: Judge again after each realized L3 event and rebuild
            the view from the latest verdicts.
    """

    name: str
    shows_memory: bool
    judge: str = "none"
    single_batch: bool = False
    audit_at_start: bool = False
    refresh_on_event: bool = False


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("no_memory", shows_memory=False),
        Strategy("no_filter", shows_memory=True),
        Strategy("self_verify", shows_memory=True, judge="audit", single_batch=True, audit_at_start=True),
        Strategy("omcd", shows_memory=True, judge="audit", refresh_on_event=True),
        Strategy("oracle", shows_memory=True, judge="truth", refresh_on_event=True),
    )
}


def greedy_direction(agent: Cell, goal: Cell) -> str:
    """The paper's fallback: one step toward the goal along the axis with the
    larger remaining distance (rows on a tie), blind to holes."""
    dr, dc = goal[0] - agent[0], goal[1] - agent[1]
    if dr == dc == 0:
        return "DOWN"
    if abs(dr) >= abs(dc):
        return "DOWN" if dr > 0 else "UP"
    return "RIGHT" if dc > 0 else "LEFT"


@dataclass
class Episode:
    """One episode's live state and record."""

    env: DynamicFrozenLakeEnv
    view: list[MemoryEntry]
    trajectory: list[list[int]] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    extra_calls: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    audits: list[dict[str, Any]] = field(default_factory=list)
    nav_tokens: int = 0
    audit_tokens: int = 0
    audit_calls: int = 0
    death_cell: Cell | None = None
    last_fired: list[dict[str, Any]] = field(default_factory=list)

    @property
    def grid(self) -> Grid:
        return self.env.grid

    @property
    def steps_left(self) -> int:
        return self.env.max_steps - self.env.steps

    def step(self, direction: str) -> str:
        """Apply one move; the text the ``move`` tool returns."""
        before = self.env.agent
        _, _, _, _, info = self.env.step(ACTIONS.index(direction))
        pos = self.env.agent
        self.actions.append(direction)
        self.trajectory.append(list(pos))
        self.last_fired = info["events"]
        self.events.extend(info["events"])
        if self.env.outcome == DEATH:
            self.death_cell = pos
            return f"Moved {direction} into a hole at ({pos[0]},{pos[1]}). Episode over: death."
        if self.env.outcome == SUCCESS:
            return f"Moved {direction} and reached the goal at ({pos[0]},{pos[1]}). Episode over: success."
        where = (
            f"Bumped into the edge; still at ({pos[0]},{pos[1]})."
            if pos == before
            else f"Moved {direction} to ({pos[0]},{pos[1]})."
        )
        if self.env.outcome == TIMEOUT:
            return f"{where} Step budget used up. Episode over: timeout."
        return f"{where} Steps left: {self.steps_left}."


#: The public ``move(direction)`` tool, as offered to the model. The loop
#: applies the first call itself (``Episode.step``) rather than through
#: Inspect's ``execute_tools``: that logs a tool event and two span events
#: per step, the largest part of the harness's own cost (README, Performance).
#: The env's answer is still the ``ChatMessageTool`` in the sample's messages,
#: and the call itself is in each model event's output.
MOVE_TOOL = ToolInfo(
    name="move",
    description=prompts.MOVE_TOOL_DESCRIPTION,
    parameters=ToolParams(
        properties={
            "direction": ToolParam(type="string", enum=list(ACTIONS), description=prompts.MOVE_DIRECTION_DESCRIPTION)
        },
        required=["direction"],
    ),
)


def step_message(episode: Episode, modality: str, strategy: Strategy) -> ChatMessageUser:
    """Memory view first, then the observation, then the position line: what
    changes least comes first, so providers' prefix caches can reuse it."""
    grid, agent = episode.grid, episode.env.agent
    goal = goal_of(grid)
    parts: list[Content] = []
    if strategy.shows_memory:
        memory = (
            prompts.NAVIGATE_MEMORY.format(count=len(episode.view), entries="\n".join(e.text for e in episode.view))
            if episode.view
            else prompts.NAVIGATE_MEMORY_EMPTY
        )
        parts.append(ContentText(text=memory))
    parts += observation_parts(grid, agent, modality, prompts.NAVIGATE_OBSERVATION_IMAGE)
    text = prompts.NAVIGATE_STEP.format(
        row=agent[0], col=agent[1], goal_row=goal[0], goal_col=goal[1], steps_left=episode.steps_left
    )
    return user_message([*parts, ContentText(text=text)])


async def rebuild_view(
    episode: Episode,
    strategy: Strategy,
    instance: Instance,
    auditor: Model,
    modality: str,
    batch_size: int,
    reason: str,
) -> None:
    """Judge the whole store against the current grid and keep what survives."""
    grid, agent = episode.grid, episode.env.agent
    truth = stale_labels(instance.memory, instance.g0, grid)
    if strategy.judge == "truth":
        flagged = {eid for eid, kind in truth.items() if kind}
        calls = 0
    else:
        size = len(instance.memory) if strategy.single_batch else batch_size
        result = await audit_entries(
            auditor,
            grid,
            agent,
            instance.memory,
            modality=modality,
            batch_size=size,
            label=f"{strategy.name} audit ({reason})",
        )
        flagged, calls = result.flagged, result.calls
        episode.audit_tokens += result.tokens
        episode.audit_calls += calls
    episode.view = [e for e in instance.memory if e.id not in flagged]
    counts = confusion(
        instance.memory,
        flagged,
        [k for k, v in truth.items() if v == "thaw"],
        [k for k, v in truth.items() if v == "freeze"],
    )
    episode.audits.append(
        {
            "step": episode.env.steps,
            "reason": reason,
            "removed": sorted(flagged),
            "calls": calls,
            "f1": metrics.f1_from_counts(counts["tp"], counts["fp"], counts["fn"]),
            **counts,
        }
    )


def model_input(
    system: ChatMessage, turns: list[list[ChatMessage]], current: ChatMessage, history: int
) -> list[ChatMessage]:
    earlier = [m for turn in turns[len(turns) - history :] for m in turn] if history else []
    return [system, *earlier, current]


@solver
def navigation_loop(
    instances: InstanceSet, strategy: Strategy, modality: str, batch_size: int, max_steps: int, history: int
) -> Solver:
    """Play one episode: build the strategy's memory view, then ask the model
    for one ``move`` per step until success, death or the step budget."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        instance = instances.begin(state)
        navigator = get_model()
        auditor = get_model(role="auditor", default=navigator)
        env = DynamicFrozenLakeEnv(instance, max_steps=max_steps)
        env.reset()
        episode = Episode(env=env, view=list(instance.memory))
        episode.trajectory.append(list(env.agent))
        try:
            windows = {step for step, _ in instance.detection_windows()}
            if strategy.judge != "none" and (strategy.audit_at_start or 0 in windows):
                await rebuild_view(episode, strategy, instance, auditor, modality, batch_size, "start")
            if not strategy.shows_memory:
                episode.view = []
            system = ChatMessageSystem(content=prompts.NAVIGATE_SYSTEM)
            state.messages = [system]
            turns: list[list[ChatMessage]] = []
            config = GenerateConfig(parallel_tool_calls=False)
            while env.outcome is None:
                user = step_message(episode, modality, strategy)
                output = await navigator.generate(
                    model_input(system, turns, user, history), tools=[MOVE_TOOL], tool_choice="auto", config=config
                )
                episode.nav_tokens += output.usage.total_tokens if output.usage else 0
                reply = output.message
                choice = parse_move(reply.tool_calls)
                episode.extra_calls += choice.extra_calls
                calls = list(reply.tool_calls or [])
                tool_messages: list[ChatMessage]
                if choice.direction is not None:
                    # The first call only, with the direction as parsed (" up " is accepted).
                    result = episode.step(choice.direction)
                    tool_messages = [ChatMessageTool(content=result, tool_call_id=calls[0].id, function="move")]
                else:
                    direction = greedy_direction(env.agent, goal_of(episode.grid))
                    result = f"No valid move call ({choice.problem}); fallback moved {direction}. "
                    result += episode.step(direction)
                    episode.fallbacks.append(
                        {
                            "step": env.steps,
                            "problem": choice.problem,
                            "direction": direction,
                            "reply": reply.text[:2000],
                            "tool_calls": [{"function": c.function, "arguments": c.arguments} for c in calls],
                        }
                    )
                    transcript().info({"fallback": choice.problem, "direction": direction}, source="navigation")
                    tool_messages = (
                        [ChatMessageTool(content=result, tool_call_id=calls[0].id, function=calls[0].function)]
                        if calls
                        else [ChatMessageUser(content=result)]
                    )
                # Answer every other call too, so kept turns (history > 0) stay a
                # valid conversation for any provider.
                tool_messages += [
                    ChatMessageTool(content="Ignored: one move per turn.", tool_call_id=c.id, function=c.function)
                    for c in calls[1:]
                ]
                turn = [user, reply, *tool_messages]
                state.messages.extend(turn)
                turns.append(turn)
                if episode.last_fired:
                    transcript().info({"events": episode.last_fired}, source="world")
                    if strategy.refresh_on_event and env.outcome is None:
                        await rebuild_view(
                            episode,
                            strategy,
                            instance,
                            auditor,
                            modality,
                            batch_size,
                            f"event at step {env.steps}",
                        )
        finally:
            # Also when an Inspect limit (tokens, time, messages) stops the
            # episode: Inspect still scores the sample (outcome "limit").
            state.store.set("episode", episode_record(episode, instance))
            record_instance(state, instance)
        state.output.completion = f"{env.outcome or LIMIT} after {env.steps} steps"
        return state

    return solve


#: The outcome of an episode that an Inspect limit (``--token-limit``,
#: ``--time-limit``, ``--message-limit``) stopped first: neither success, death
#: nor timeout, and counted apart (score value ``limit``).
LIMIT = "limit"


def episode_record(episode: Episode, instance: Instance) -> dict[str, Any]:
    outcome, steps = episode.env.outcome or LIMIT, episode.env.steps
    death_on_stale = death_on_stale_shown = False
    death_entry = None
    if episode.death_cell is not None:
        r, c = episode.death_cell
        death_on_stale = change_kind(instance.g0, episode.grid, (r, c)) is not None
        death_entry = next(e.id for e in instance.memory if e.cell == (r, c))
        death_on_stale_shown = death_on_stale and any(e.id == death_entry for e in episode.view)
    return {
        "outcome": outcome,
        "steps": steps,
        "reward": {SUCCESS: 1.0, DEATH: -1.0}.get(outcome or "", 0.0),
        "trajectory": episode.trajectory,
        "actions": episode.actions,
        "fallbacks": episode.fallbacks,
        "extra_calls": episode.extra_calls,
        "death_cell": list(episode.death_cell) if episode.death_cell else None,
        "death_entry": death_entry,
        "death_on_stale": death_on_stale,
        "death_on_stale_shown": death_on_stale_shown,
        "audits": episode.audits,
        "events_realized": episode.events,
        "view_size": len(episode.view),
        "tokens": {"navigator": episode.nav_tokens, "auditor": episode.audit_tokens},
        "audit_calls": episode.audit_calls,
    }


#: The task metrics, in the order the log shows them.
NAVIGATION_METRICS = [
    metrics.success_rate(),
    metrics.success_stderr(),
    metrics.death_rate(),
    metrics.death_stderr(),
    metrics.timeout_rate(),
    metrics.timeout_stderr(),
    metrics.steps_success(),
    metrics.steps_death(),
    metrics.steps_timeout(),
    metrics.death_on_stale_rate(),
    metrics.fallback_rate(),
]


@scorer(metrics=NAVIGATION_METRICS)
def navigation_scorer():
    """Outcome of one episode, with what is needed to trace a death to its entry."""

    async def score(state: TaskState, target: Target) -> Score:
        rec = state.store.get("episode")
        outcome, steps = rec["outcome"], rec["steps"]
        flags = {k: int(outcome == k) for k in (SUCCESS, DEATH, TIMEOUT)}
        value = {
            **flags,
            "reward": rec["reward"],
            "steps": steps,
            **{f"steps_if_{k}": steps * v for k, v in flags.items()},
            LIMIT: int(outcome == LIMIT),
            "fallbacks": len(rec["fallbacks"]),
            "extra_calls": rec["extra_calls"],
            "death_on_stale": int(rec["death_on_stale"]),
            "death_on_stale_shown": int(rec["death_on_stale_shown"]),
            "audit_calls": rec["audit_calls"],
            "tokens": sum(rec["tokens"].values()),
        }
        explanation = f"{outcome} after {steps} steps"
        if rec["death_cell"]:
            explanation += (
                f" in {tuple(rec['death_cell'])} ({rec['death_entry']}: "
                f"{'stale' if rec['death_on_stale'] else 'not stale'}"
                f"{', shown to the agent' if rec['death_on_stale_shown'] else ''})"
            )
        return Score(value=value, answer=outcome, explanation=explanation, metadata=rec)

    return score
