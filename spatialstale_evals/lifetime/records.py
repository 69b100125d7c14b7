"""What each episode leaves for the scorer and the researcher: its record
(outcome, trajectory, the shortest safe path it had, the notes' scores at its
start, the knowable cells they told right, the repairs its write-back made,
the death's cause) and the audit of the notes shown in the transcript at its
start."""

from __future__ import annotations

import math
from collections.abc import Mapping, Set
from typing import Any

from spatialstale_evals.lifetime.episode import LifeEpisode
from spatialstale_evals.lifetime.measures import CLASSES, balanced, excess_steps, spl_fraction
from spatialstale_evals.lifetime.notes import (
    HOLE_CLAIM,
    SAFE,
    Notes,
    claim_of_kind,
    death_cause,
    note_scores,
    repair_counts,
    truth,
)
from spatialstale_evals.world.env import SUCCESS
from spatialstale_evals.world.grid import Cell, Grid, path_steps
from spatialstale_evals.world.lifetimes import EpisodeWorld

#: Cells listed by name in an audit (stale or hazard); the rest are counted.
AUDIT_LISTED = 40


def episode_record(
    episode: LifeEpisode, world: EpisodeWorld, start: Notes, end: Notes, ever_seen: Set[Cell],
    provenance: Mapping[str, Notes] | None = None, last_seen: Mapping[Cell, str] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One episode's record (``LifetimeState.records``): the notes at its
    start scored against the lake it started on and the cells seen in earlier
    episodes (``last_seen``: each with its type at its last sighting; its
    cells are ``ever_seen``), the repairs of those notes by the end of its
    write-back, and what happened. ``provenance`` splits the notes at its start by who wrote
    them (``seeded``: lines of ``initial_memory=paper``'s seed still in the
    store; ``written``: everything else), each part scored alike. A death on
    the harness's fallback step is cause ``fallback`` and acts on no claim."""
    death = episode.death_cell
    fallback = episode.died_on_fallback
    by_source = provenance or {"seeded": Notes(), "written": start}
    success, steps, shortest = episode.outcome == SUCCESS, episode.env.steps, path_steps(world.grid)
    spl = spl_fraction(success, steps, shortest)
    knowable = knowable_counts(start, world.grid, last_seen or {})
    return {
        "episode": episode.index,
        "outcome": episode.outcome,
        "steps": steps,
        "shortest": shortest,
        "spl": None if spl is None else float(spl),
        "excess_steps": excess_steps(success, steps, shortest),
        "trajectory": episode.trajectory,
        "actions": episode.actions,
        "fallbacks": episode.fallbacks,
        "death_cell": list(death) if death else None,
        "death_cause": death_cause(start, death, fallback) if death else None,
        "hazard_acted_on": not fallback and hazard_acted_on(start, world.grid, death),
        "notes": note_scores(start, world.grid, ever_seen),
        "knowable": knowable,
        "note_balanced": _defined(balanced((knowable[f"told_{c}"], knowable[f"knowable_{c}"]) for c in CLASSES)),
        "note_attainable": _defined(balanced((knowable[f"sighted_{c}"], knowable[f"knowable_{c}"]) for c in CLASSES)),
        "notes_by_provenance": {name: note_scores(part, world.grid, ever_seen) for name, part in by_source.items()},
        "repair": repair_counts(start, episode.sightings, end),
        "notes_after": {"claims": sum(len(v) for v in end.claims.values()), "memory_bytes": end.memory_bytes},
        "changes": len(world.changes),
        "events_realized": episode.events,
        "sightings": len(episode.sightings),
        "memory_calls": episode.memory_calls,
        "write_back_calls": episode.write_back_calls,
        "memory_refused": episode.memory_refused,
        "model_calls": episode.model_calls,
        "tokens": episode.tokens,
    }


def _defined(value: float) -> float | None:
    """None for NaN (a record is JSON: undefined is null there)."""
    return None if math.isnan(value) else value


def hazard_acted_on(notes: Notes, grid: Grid, death: Cell | None) -> bool:
    """Whether the agent acted on a hazard claim of the notes its episode
    began with: it stepped into a cell those notes claimed SAFE (alone or
    beside a HOLE claim) that was a hole when the episode began (``grid``),
    and died there. Entering a hole ends the episode, so an episode acts on
    at most one; under L3 a hole that froze before the agent got there is no
    death and not counted, and a cell that thawed into a hole during the
    episode was no hazard claim at its start."""
    return death is not None and SAFE in notes.claims.get(death, set()) and truth(grid, death) == HOLE_CLAIM


#: The keys of ``knowable_counts``: counts, summed over samples by the metrics.
KNOWABLE_KEYS = ("knowable_safe", "knowable_hole", "told_safe", "told_hole", "sighted_safe", "sighted_hole")


def knowable_counts(notes: Notes, grid: Grid, last_seen: Mapping[Cell, str]) -> dict[str, int]:
    """The knowable cells at an episode's start (those the agent saw in
    earlier episodes: ``last_seen``, each with its type at its last sighting)
    by their class now on ``grid`` (``knowable_safe``, ``knowable_hole``); of
    each class, those whose notes say exactly the truth now (``told_*``: one
    claim, true; no claim, a false claim or both claims is a miss), and those
    whose last sighting does (``sighted_*``: what a keeper of every sighting as
    last seen would tell, the attainable bound). ``note_balanced`` is the mean
    over the classes present of told / knowable (``scoring.py``)."""
    counts = dict.fromkeys(KNOWABLE_KEYS, 0)
    for cell, kind in last_seen.items():
        now = truth(grid, cell)
        name = "safe" if now == SAFE else "hole"
        counts[f"knowable_{name}"] += 1
        counts[f"told_{name}"] += notes.claims.get(cell, set()) == {now}
        counts[f"sighted_{name}"] += claim_of_kind(kind) == now
    return counts


def note_audit(notes: Notes, grid: Grid, ever_seen: Set[Cell], episode: int) -> dict[str, Any]:
    """The notes at an episode's start as a researcher reads them in ``inspect
    view``: the scores, and which claims are stale and which are hazards."""
    scores = note_scores(notes, grid, ever_seen)
    stale = sorted(
        f"({r},{c}) claimed {claim}, now {truth(grid, (r, c))}"
        for (r, c), made in notes.claims.items()
        for claim in made
        if claim != truth(grid, (r, c))
    )
    hazards = sorted(
        f"({r},{c})" for (r, c), made in notes.claims.items() if SAFE in made and truth(grid, (r, c)) == HOLE_CLAIM
    )
    more = [f"... {len(stale) - AUDIT_LISTED} more"] if len(stale) > AUDIT_LISTED else []
    return {
        "episode": episode,
        **scores,
        "stale": stale[:AUDIT_LISTED] + more,
        "hazards": hazards[:AUDIT_LISTED],
    }
