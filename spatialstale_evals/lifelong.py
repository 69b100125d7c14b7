"""SpatialSTALE ``lifelong``: does an agent keep the notes it writes itself
true when the lake changes under them?

    inspect eval spatialstale_evals/lifelong.py -T regime=L1 --model anthropic/claude-sonnet-4-5
    inspect eval spatialstale_evals/lifelong.py -T episodes=2 --model spatialstale/diligent --limit 1
"""

from __future__ import annotations

import inspect
from dataclasses import asdict
from typing import Any, Literal

from inspect_ai import Task, task, task_with

from spatialstale_evals.harness.memory_quota import MAX_MEMORY_CALLS
from spatialstale_evals.harness.params import NotApplicable, check_choice, check_positive_int, parameters
from spatialstale_evals.harness.score_counts import counted_epochs
from spatialstale_evals.harness.task_body import TaskBody
from spatialstale_evals.lifetime.agents import AgentFactory
from spatialstale_evals.lifetime.agents import until_episode_over as until_episode_over  # the docs' idiom
from spatialstale_evals.lifetime.arms import DEFAULT_MEMORY, MEMORY_ARMS, MemoryName
from spatialstale_evals.lifetime.provenance import PROVENANCE_MEMORIES, PROVENANCES, ProvenanceName
from spatialstale_evals.lifetime.samples import LifetimeSet
from spatialstale_evals.lifetime.scoring import lifelong_scorer
from spatialstale_evals.lifetime.shared import SCOUT_ACCESS, ScoutAccess
from spatialstale_evals.lifetime.solver import LifelongSettings, NotesReader, lifelong_loop
from spatialstale_evals.lifetime.transcript import COMPACTIONS, DEFAULT_THRESHOLD, CompactionName
from spatialstale_evals.metadata import task_version
from spatialstale_evals.world.lifetimes import MAX_EPISODES
from spatialstale_evals.world.observation import covers_grid
from spatialstale_evals.world.regimes import REGIMES, RegimeName

#: Where the notes start: an empty store, or the instance's entries (already stale by the regime).
InitialMemory = Literal["empty", "paper"]
#: The per-episode agent: the navigate loop with the memory tool.
AgentName = Literal["default", "react"]


def check_args(
    regime: str, episodes: int, view_radius: int | None, history: int | None, max_memory_calls: int,
    initial_memory: str, agent: str, max_steps: int | None, epochs: int, memory: str = DEFAULT_MEMORY,
    notes_reader: bool = False, memory_tool: bool = False, compaction: str = "none",
    compaction_threshold: int = DEFAULT_THRESHOLD, provenance: str = "none", scout_access: str = "readwrite",
) -> None:  # fmt: skip
    """Every check on the parameters, before any model call (``notes_reader``:
    an agent's own notes reader was given, which ``memory=own`` needs)."""
    check_choice("regime", regime, REGIMES)
    check_positive_int("episodes", episodes)
    if episodes > MAX_EPISODES:
        raise ValueError(f"episodes must be at most {MAX_EPISODES} (the lifetimes' length); got {episodes}")
    if view_radius is not None:
        check_positive_int("view_radius", view_radius, allow_zero=True)
    if history is not None:
        check_positive_int("history", history, allow_zero=True)
        if agent != "default":
            raise ValueError(f"history={history} is kept by the default loop only; agent={agent} keeps it all")
    check_positive_int("max_memory_calls", max_memory_calls, allow_zero=True, most=MAX_MEMORY_CALLS)
    check_choice("initial_memory", initial_memory, ("empty", "paper"))
    check_choice("agent", agent, ("default", "react"))
    check_choice("memory", memory, tuple(MEMORY_ARMS))
    if (MEMORY_ARMS[memory].notes_from == "agent") != notes_reader:
        raise ValueError(
            f"memory={memory} with{'' if notes_reader else 'out'} a notes reader: the agent's own memory "
            "(memory=own) is read by the reader given to lifelong_with_agent(agent, notes=...), and only then"
        )
    if initial_memory != "empty" and not MEMORY_ARMS[memory].tool:
        raise ValueError(f"initial_memory={initial_memory} needs a memory to start from; memory={memory} has none")
    check_choice("provenance", provenance, PROVENANCES)
    if provenance != PROVENANCES[0] and memory not in PROVENANCE_MEMORIES:
        raise NotApplicable(f"provenance={provenance} stamps notes; memory={memory} has none (use notes or shared)")
    check_choice("scout_access", scout_access, SCOUT_ACCESS)
    if scout_access != SCOUT_ACCESS[0] and memory != "shared":
        raise NotApplicable(f"scout_access={scout_access} is the second agent's; memory={memory} has one agent")
    if max_steps is not None:
        check_positive_int("max_steps", max_steps)
    check_positive_int("epochs", epochs)
    check_transcript(memory, history, memory_tool, compaction, compaction_threshold)


def check_transcript(
    memory: str, history: int | None, memory_tool: bool, compaction: str, compaction_threshold: int
) -> None:
    """``memory_tool``, ``compaction`` and ``compaction_threshold`` are ``memory=transcript``'s,
    which keeps the whole conversation (no ``history``)."""
    if not isinstance(memory_tool, bool):
        raise ValueError(f"memory_tool must be true or false; got {memory_tool!r}")
    check_choice("compaction", compaction, COMPACTIONS)
    check_positive_int("compaction_threshold", compaction_threshold)
    if not MEMORY_ARMS[memory].carries_conversation:
        given = {"memory_tool": (memory_tool, False), "compaction": (compaction, "none"),
                 "compaction_threshold": (compaction_threshold, DEFAULT_THRESHOLD)}  # fmt: skip
        for name, (value, default) in given.items():
            if value != default:
                raise NotApplicable(f"{name}={value} is memory=transcript's; memory={memory} carries no conversation")
    elif history is not None:
        raise ValueError(f"history={history} drops turns; memory=transcript keeps them all (use compaction)")
    elif compaction == "none" and compaction_threshold != DEFAULT_THRESHOLD:
        raise NotApplicable(f"compaction_threshold={compaction_threshold} is a compaction's; compaction=none")


@task
def lifelong(
    regime: RegimeName = "L2",
    episodes: int = 5,
    view_radius: int | None = 1,
    history: int | None = None,
    max_memory_calls: int = 5,
    initial_memory: InitialMemory = "empty",
    agent: AgentName = "default",
    memory: MemoryName = DEFAULT_MEMORY,
    memory_tool: bool = False,
    compaction: CompactionName = "none",
    compaction_threshold: int = DEFAULT_THRESHOLD,
    provenance: ProvenanceName = "none",
    scout_access: ScoutAccess = "readwrite",
    dataset: str | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    **unknown: Any,
) -> Task:
    """Lifelong memory: notes the agent writes itself, across the episodes of one lake's lifetime.

    One sample per lifetime (50 per regime): ``episodes`` navigation episodes
    on one lake, same start and goal, the lake changing between them by the
    regime. Each episode is a new conversation; only the memory tool's
    ``/memories`` directory carries over. The notes are read at every episode
    start and scored against the lake. A parameter this signature does not
    name is an error.

    Args:
        regime: How the lake changes: ``L0`` never (the control), ``L1``
            scattered and ``L2`` clustered flips before every episode after
            the first, ``L3`` online events inside every episode.
        episodes: Episodes per lifetime (1 to 10).
        view_radius: The agent sees the cells within this many rows and
            columns of itself (default 1), the rest as ``?``; None shows the
            whole lake (then notes are of no use: the lower-bound setting).
        history: Earlier turns of the episode kept in each request: None (the
            default) keeps the whole episode, append-only; K keeps the last K
            turns (default loop only: refused with ``agent=react``). Nothing is
            kept from one episode to the next.
        max_memory_calls: Memory tool calls allowed per step, and in the
            write-back turn after each episode (default 5, at most 100); they take no step.
        initial_memory: ``empty`` (default) or ``paper``: the instance's memory
            entries written to ``/memories/lake.md`` before episode 1, in the
            paper's entry format (already stale by the regime).
        agent: The per-episode agent: ``default`` plays the navigate loop with
            ``move`` and ``memory``; ``react`` is Inspect's ``react()`` with the
            same tools (``lifelong_with_agent`` takes any Inspect agent).
        memory: What carries over between episodes: ``notes`` (default) the
            memory tool's ``/memories``, with a write-back turn after each
            episode; ``none`` nothing: no memory tool, no word of notes in any
            prompt, no write-back (the no-memory baseline for any model);
            ``transcript`` one conversation across the lifetime, never reset
            (each later episode begins with a turn saying the agent is back at
            the start), compacted by ``compaction``; ``own`` the agent's own
            memory system, read where it keeps it
            (``lifelong_with_agent(agent, notes=...)`` only).
        memory_tool: ``memory=transcript`` only: offer the memory tool (and
            its write-back turn) too (default false).
        compaction: ``memory=transcript`` only: ``none`` (default) or one of
            Inspect's compaction strategies (``summary``, ``edit``, ``trim``,
            ``native``, ``auto``), applied past ``compaction_threshold``.
        compaction_threshold: ``memory=transcript`` only: the conversation's
            size in tokens past which it is compacted (default 8000).
        provenance: What the agent is shown of its notes (``notes`` or
            ``shared``): ``none`` (default) the files as written; ``stamped``
            each claim line of a viewed file with the episode that last wrote
            it, labelled asserted, and the step prompt's view labelled verified
            now; ``resolved`` also the notes the current view contradicts,
            labelled so with the cell's state now. The files are unchanged.
        scout_access: The scout's access to ``/memories`` under ``memory=shared``:
            ``readwrite`` (default) or ``readonly`` (its writes refused, counted).
        dataset: Dataset folder made by ``spatialstale datasets generate`` (its
            ``lifelong/`` sub-folder); default the canonical set shipped in the package.
        max_steps: Step budget per episode; default the lifetime's (50 on 8x8).
        epochs: Runs of each lifetime; each starts with its own empty memory.
    """
    body = TaskBody(lifelong, locals())
    return _lifelong(
        body, regime, episodes, view_radius, history, max_memory_calls, initial_memory, agent, memory, dataset,
        max_steps, epochs, memory_tool=memory_tool, compaction=compaction, compaction_threshold=compaction_threshold,
        provenance=provenance, scout_access=scout_access,
    )  # fmt: skip


def recorded(settings: LifelongSettings) -> dict[str, Any]:
    """The parameters the samples' and the task's metadata name: what the
    solver runs with, each architecture's own only under it, so the other
    arms' samples are unchanged: the conversation's (``memory_tool``,
    ``compaction``, ``compaction_threshold``) under an arm that carries one,
    ``provenance`` when set, ``scout_access`` under ``memory=shared``."""
    params = asdict(settings)
    if not settings.arm.carries_conversation:
        for name in ("memory_tool", "compaction", "compaction_threshold"):
            del params[name]
    if settings.provenance == PROVENANCES[0]:  # the runtime's settings, only when set
        del params["provenance"]
    if settings.memory != "shared":
        del params["scout_access"]
    return params


def _lifelong(
    body: TaskBody, regime: str, episodes: int, view_radius: int | None, history: int | None, max_memory_calls: int,
    initial_memory: str, agent: str, memory: str, dataset: str | None, max_steps: int | None, epochs: int,
    factory: AgentFactory | None = None, notes: NotesReader | None = None, memory_tool: bool = False,
    compaction: str = "none", compaction_threshold: int = DEFAULT_THRESHOLD, provenance: str = "none",
    scout_access: str = "readwrite",
) -> Task:  # fmt: skip
    """``lifelong``'s task (``body``: its parameters and ``--epochs 0`` checked),
    played by ``factory``'s agents if given, its notes read by ``notes`` if
    given (``memory=own``): the body ``lifelong`` and ``lifelong_with_agent`` share."""
    check_args(
        regime, episodes, view_radius, history, max_memory_calls, initial_memory, agent, max_steps, epochs, memory,
        notes is not None, memory_tool, compaction, compaction_threshold, provenance, scout_access,
    )  # fmt: skip
    lives = LifetimeSet.load(dataset, regime, episodes)
    settings = LifelongSettings(
        episodes=episodes,
        view_radius=None if covers_grid(lives.first.height, lives.first.width, view_radius) else view_radius,
        history=history,
        max_memory_calls=max_memory_calls,
        initial_memory=initial_memory,
        agent=agent,
        max_steps=max_steps or lives.first.max_steps,
        memory=memory,
        memory_tool=memory_tool,
        compaction=compaction,
        compaction_threshold=compaction_threshold,
        provenance=provenance,
        scout_access=scout_access,
    )
    return Task(
        dataset=lives.samples(recorded(settings)),
        solver=lifelong_loop(lives, settings, factory, notes),
        scorer=lifelong_scorer(episodes),
        epochs=counted_epochs(epochs),
        name=body.name,
        version=task_version(),
        metadata=body.metadata({"regime": regime}, recorded(settings), lives.sha256),
    )


def lifelong_with_agent(agent: AgentFactory, notes: NotesReader | None = None, **args: Any) -> Task:
    """The ``lifelong`` task (``args`` are its parameters but ``history``, which
    only the default loop keeps) with your own per-episode agent:
    ``agent(tools)`` gets the episode's ``move`` tool (and ``memory`` under
    ``memory=notes``) and returns an Inspect ``Agent``; ``until_episode_over``
    is the ``on_continue`` that stops a ``react()`` at the episode's end
    (docs/lifelong.md). An agent with a memory system of its own plays
    ``memory="own"`` and gives ``notes``, a function that returns its notes
    as they are now (path -> text), called inside the sample at every
    episode start and end."""
    if args.get("history") is not None:
        raise ValueError(f"history={args['history']} is kept by the default loop only; your agent keeps its context")
    known = set(parameters(lifelong))
    body = TaskBody(lifelong, {"unknown": {k: v for k, v in args.items() if k not in known}})
    bound = inspect.signature(inspect.unwrap(lifelong)).bind(**args)
    bound.apply_defaults()
    given = {k: v for k, v in bound.arguments.items() if k in known}
    base = _lifelong(body, **given, factory=agent, notes=notes)
    return task_with(base, metadata=(base.metadata or {}) | {"agent": "custom"})
