"""One navigation episode: the shared lake episode (``harness.lake_episode``:
the moves' answers, the fallback step) with the memory view's state, and the
record the scorer reads."""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from spatialstale_evals.harness.lake_episode import LIMIT, OUTCOMES, LakeEpisode
from spatialstale_evals.harness.lake_map import MAP_CELLS, draw
from spatialstale_evals.harness.memory_view import Decision, Note
from spatialstale_evals.world.env import DEATH, SUCCESS
from spatialstale_evals.world.grid import FROZEN, HOLE, Cell, Grid
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import MemoryEntry
from spatialstale_evals.world.observation import in_view
from spatialstale_evals.world.staleness import change_kind

REWARDS = {SUCCESS: 1.0, DEATH: -1.0}


def due_entries(
    memory: Sequence[MemoryEntry], agent: Cell, radius: int | None, judged: Set[tuple[str, int]], epoch: int
) -> tuple[MemoryEntry, ...]:
    """The entries a judgement at ``agent`` is due to judge: not yet judged
    since the world last changed (at ``epoch``), whose cell is in view (a
    distractor note, about no cell, always is). The loop and the cost
    estimate both ask this."""
    return tuple(e for e in memory if (e.is_note or in_view(agent, e.cell, radius)) and (e.id, epoch) not in judged)


@dataclass
class Episode(LakeEpisode):
    """One navigate episode's live state and record: the lake episode
    (``harness.lake_episode``) with the memory view and its judgements.

    ``view`` is the memory view the navigator is shown. ``epoch`` is the
    step the world last changed at (0 before any event); ``judged`` holds the
    (entry id, epoch) pairs already judged, so an entry is judged again only
    when its cell is in view after a change. ``decisions``, ``decided_at`` and
    ``corrections`` are the latest verdict on each entry (the claim proposed
    for a contradicted one); ``ledger`` what the agent has seen of each cell
    and when (the runtime resolver's evidence).
    """

    view: list[Note] = field(kw_only=True)
    epoch: int = 0
    judged: set[tuple[str, int]] = field(default_factory=set)
    decisions: dict[str, Decision] = field(default_factory=dict)
    decided_at: dict[str, int] = field(default_factory=dict)
    corrections: dict[str, str] = field(default_factory=dict)
    ledger: dict[Cell, tuple[str, int]] = field(default_factory=dict)
    resolutions: list[dict[str, Any]] = field(default_factory=list)
    audits: list[dict[str, Any]] = field(default_factory=list)
    nav_tokens: int = 0
    audit_tokens: int = 0
    audit_calls: int = 0

    def decide(
        self, decisions: dict[str, Decision], steps: dict[str, int], corrections: dict[str, str] | None = None
    ) -> bool:
        """Merge a verdict's decisions into the latest ones. The step an entry
        became contradicted (``steps``, else now) is kept while it stays so,
        for the ``history`` label, and the claim proposed for it (the latest
        judgement's, for ``correct``); True when any decision or proposed
        claim changed."""
        changed, corrections = False, corrections or {}
        for eid, new in decisions.items():
            old = self.decisions.get(eid, "keep")
            changed |= new != old
            if new == "contradicted" and old != "contradicted":
                self.decided_at[eid] = steps.get(eid, self.env.steps)
            elif new != "contradicted":
                self.decided_at.pop(eid, None)
            proposed = corrections.get(eid) if new == "contradicted" else None
            changed |= proposed != self.corrections.get(eid)
            if proposed is None:
                self.corrections.pop(eid, None)
            else:
                self.corrections[eid] = proposed
            self.decisions[eid] = new
        return changed

    def observe(self) -> None:
        """Record what the agent is shown now in the ledger (cell -> type, step),
        before every step; the (type, step) pairs are shared between cells of
        one type, so a step adds a few objects rather than one per cell."""
        steps, stamps = self.env.steps, {}
        for cell, kind in self.in_sight():
            stamp = stamps.get(kind)
            if stamp is None:
                stamp = stamps[kind] = (kind, steps)
            self.ledger[cell] = stamp


def episode_record(episode: Episode, instance: Instance) -> dict[str, Any]:
    """What the scorer reads (``Score.metadata``): the outcome, the trajectory,
    and the entry each death traces to, with how the view showed it at the end
    (``death_note``: its status and the claim it presented, None when not
    shown): a death on a hole ``corrected`` to SAFE is a wrong correction's."""
    outcome, steps = episode.outcome, episode.env.steps
    death_on_stale = death_on_stale_shown = False
    death_entry, death_note = None, None
    if episode.death_cell is not None:
        death_on_stale = change_kind(instance.g0, episode.grid, episode.death_cell) is not None
        death_entry = next(e.id for e in instance.memory if e.cell == episode.death_cell)
        death_on_stale_shown = death_on_stale and any(n.entry.id == death_entry and n.shows_claim for n in episode.view)
        shown = next((n for n in episode.view if n.entry.id == death_entry), None)
        death_note = {"status": shown.status, "claim": shown.claim or shown.entry.claim} if shown else None
    return {
        "outcome": outcome,
        "steps": steps,
        "reward": REWARDS.get(outcome, 0.0),
        "trajectory": episode.trajectory,
        "actions": episode.actions,
        "fallbacks": episode.fallbacks,
        "extra_calls": episode.extra_calls,
        "death_cell": list(episode.death_cell) if episode.death_cell else None,
        "death_entry": death_entry,
        "death_on_stale": death_on_stale,
        "death_on_stale_shown": death_on_stale_shown,
        "death_note": death_note,
        "audits": episode.audits,
        "events_realized": episode.events,
        "view_size": len(episode.view),
        "tokens": {"navigator": episode.nav_tokens, "auditor": episode.audit_tokens},
        "audit_calls": episode.audit_calls,
        **({"resolutions": episode.resolutions} if episode.resolutions else {}),
        "map": trajectory_map(instance.g0, episode.grid, episode.trajectory, episode.actions, outcome == DEATH),
    }


def score_value(record: dict[str, Any]) -> dict[str, Any]:
    """The episode's counts (``Score.metadata["counts"]``): what the task metrics and the report sum."""
    outcome, steps = record["outcome"], record["steps"]
    flags = {k: int(outcome == k) for k in OUTCOMES}
    return {
        **flags,
        "reward": record["reward"],
        "steps": steps,
        **{f"steps_if_{k}": steps * v for k, v in flags.items()},
        LIMIT: int(outcome == LIMIT),
        "fallbacks": len(record["fallbacks"]),
        "extra_calls": record["extra_calls"],
        "death_on_stale": int(record["death_on_stale"]),
        "death_on_stale_shown": int(record["death_on_stale_shown"]),
        "audit_calls": record["audit_calls"],
        "tokens": sum(record["tokens"].values()),
    }


#: What the sample list shows of an episode: its outcome (1/0 each), its
#: steps and whether it died on a stale cell.
HEADLINE_KEYS = (*OUTCOMES, "steps", "death_on_stale")


def headline_value(counts: dict[str, Any]) -> dict[str, Any]:
    """The episode's ``Score.value``: ``HEADLINE_KEYS`` of its counts."""
    return {k: counts[k] for k in HEADLINE_KEYS}


def score_explanation(record: dict[str, Any]) -> str:
    """The outcome line; a line on what went wrong (how the agent's view
    showed the entry of the cell it died on, its fallback moves), when
    anything did; then the trajectory map as a code block (when the record
    has one: records in older logs may not)."""
    text = f"{record['outcome']} after {record['steps']} steps"
    if record["death_cell"]:
        text += (
            f" in {tuple(record['death_cell'])} ({record['death_entry']}: "
            f"{'stale' if record['death_on_stale'] else 'not stale'}"
            f"{', shown to the agent' if record['death_on_stale_shown'] else ''})"
        )
    wrong = []
    if record["death_cell"]:
        note = record.get("death_note")
        shown = f"showed it as {note['claim']} ({note['status'].replace('_', ' ')})" if note else "did not show it"
        wrong.append(f"the agent's memory view {shown}")
    if record["fallbacks"]:
        wrong.append(f"{len(record['fallbacks'])} step(s) without a valid move call (a greedy step instead)")
    if wrong:
        text += "\n\n" + "; ".join(wrong)
    if record.get("map"):
        text += f"\n\n```\n{record['map']}\n```\n\n{MAP_LEGEND}"
    return text


#: The arrow drawn on a cell the agent left by each move.
ARROWS = {"UP": "^", "DOWN": "v", "LEFT": "<", "RIGHT": ">"}
#: How the map draws a cell the agent did not leave where it is no longer what
#: memory says (it changed since the snapshot: ``h`` thawed into a hole, ``f``
#: froze into ice); any other as ``lake_map.MAP_CELLS`` does.
MAP_CHANGED = {HOLE: "h", FROZEN: "f"}
MAP_LEGEND = (
    "The lake at the end: S start, G goal, . ice, H hole, h a hole memory says is ice, f ice memory says is a hole; "
    "^ v < > the agent's last move from a cell, @ where it ended, X where it died."
)


def trajectory_map(
    g0: Grid, grid: Grid, trajectory: Sequence[Sequence[int]], actions: Sequence[str], died: bool
) -> str:
    """The episode drawn as text (``MAP_LEGEND``), one row per grid row, under
    a line of column digits (the column mod 10): ``inspect view`` shows it in
    the score explanation, where the trajectory is otherwise two nested arrays."""
    cells = [
        [MAP_CHANGED[kind] if kind != g0[r][c] else MAP_CELLS[kind] for c, kind in enumerate(row)]
        for r, row in enumerate(grid)
    ]
    for (r, c), action in zip(trajectory, actions):
        cells[r][c] = ARROWS[action]
    end_r, end_c = trajectory[-1]
    cells[end_r][end_c] = "X" if died else "@"
    return "\n".join(draw(cells))


def step_line(step: int, start: Cell, direction: str, episode: Episode, fallback: str | None) -> str:
    """One step as the transcript lists it, after the step's model call: where
    the agent was, the move (and why it was a fallback), where it is now and
    what that ended, the budget left, and the lake changes the step fired."""
    end, outcome = episode.agent, episode.env.outcome
    move = direction + (f" (fallback: {fallback})" if fallback is not None else "")
    text = f"step {step}: ({start[0]},{start[1]}) {move} -> ({end[0]},{end[1]})"
    if end == start:
        text += " (bumped into the edge)"
    text += f": {outcome}" if outcome else f", {episode.steps_left} steps left"
    changes = [
        f"({r},{c}) now {episode.grid[r][c]}" + (" (under the agent)" if event["under_agent"] else "")
        for event in episode.last_fired
        for r, c in event["cells"]
    ]
    if changes:
        cut = any(event["cut_off"] for event in episode.last_fired)
        text += "; the lake changed: " + ", ".join(changes) + ("; the goal is cut off" if cut else "")
    return text
