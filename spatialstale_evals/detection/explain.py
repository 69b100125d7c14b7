"""What ``inspect view`` shows of a detect sample: its input (the audit asked,
the lake as the auditor first sees it beside the lake as memory describes
it), its target (the stale entries) and the explanation's line per window
naming the entries the audit got wrong."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spatialstale_evals.harness.lake_map import lake_and_memory
from spatialstale_evals.world.instance import Instance, Window
from spatialstale_evals.world.staleness import FREEZE, THAW

#: A stale entry's change, by its label: its claim, and what the cell is now.
CHANGE = {THAW: "SAFE -> hole", FREEZE: "DANGER -> ice"}


def entry_cells(instance: Instance) -> dict[str, str]:
    """Every cell entry's id -> ``(r,c)``."""
    return {e.id: f"({e.row},{e.col})" for e in instance.memory if not e.is_note}


def stale_entries(instance: Instance, labels: Mapping[str, str | None]) -> str:
    """The stale entries of one window (``labels``: its truth), ``mem_044 (5,4) SAFE -> hole, ...``."""
    cells = entry_cells(instance)
    stale = [f"{eid} {cells[eid]} {CHANGE[kind]}" for eid, kind in labels.items() if kind]
    return ", ".join(stale) or "nothing stale"


def sample_text(instance: Instance, params: Mapping[str, Any]) -> tuple[str, str]:
    """The sample's input and target (``TaskFamily.sample_text``)."""
    windows = instance.windows
    first = windows[0]
    audits = (
        "once, before the agent moves"
        if len(windows) == 1
        else f"{len(windows)} times (steps {', '.join(str(w.step) for w in windows)}), after each lake change"
    )
    notes = f" and {params['distractors']} notes" if params.get("distractors") else ""
    shown = (
        f"detect {instance.id} ({instance.regime}, {params.get('modality', 'text')}): which of the "
        f"{instance.n_entries} memory entries{notes} does the lake contradict? Audited {audits}, "
        f"{params.get('batch_size')} entries per call.\n\n"
        + lake_and_memory(first.grid, instance.memory, lake_title=f"lake at step {first.step}")
    )
    if len(windows) == 1:
        target = "stale: " + stale_entries(instance, first.labels)
    else:
        target = "; ".join(window_change(instance, before, w) for before, w in zip((None, *windows), windows))
    return shown, target


def window_change(instance: Instance, before: Window | None, window: Window) -> str:
    """A window's truth as the change from the window ``before`` it (the
    first: its stale entries): entries gone stale (``+``), entries no longer
    stale (``-``), and how many are stale now."""
    if before is None:
        return f"step {window.step}: {stale_entries(instance, window.labels)}"
    cells = entry_cells(instance)
    new = {eid: kind for eid, kind in window.stale.items() if before.labels.get(eid) != kind}
    gone = [eid for eid in before.stale if not window.labels.get(eid)]
    parts = [f"+{eid} {cells[eid]} {CHANGE[kind]}" for eid, kind in new.items()] + [f"-{eid}" for eid in gone]
    return f"step {window.step}: {', '.join(parts) or 'no change'} ({len(window.stale)} stale)"


def window_line(instance: Instance, step: int, flagged: Sequence[str], labels: Mapping[str, str | None]) -> str:
    """What one window's audit got right and wrong, by entry: the stale
    entries found and missed (with their change), the entries flagged wrongly."""
    cells = entry_cells(instance)
    stale = {eid: kind for eid, kind in labels.items() if kind}
    found = [eid for eid in stale if eid in flagged]
    missed = [f"missed {eid} at {cells[eid]}, {CHANGE[kind]}" for eid, kind in stale.items() if eid not in flagged]
    wrongly = [f"{eid} at {cells[eid]}" if eid in cells else f"{eid} (a note)" for eid in flagged if eid not in stale]
    wrong = [f"flagged {len(wrongly)} wrongly: {', '.join(wrongly)}"] if wrongly else []
    head = f"step {step}: found {len(found)} of {len(stale)} stale" + (f" ({', '.join(found)})" if found else "")
    return "; ".join([head, *missed, *wrong]) + ("" if missed or wrong else "; nothing wrong")


def flagged_answer(windows: Sequence[Mapping[str, Any]]) -> str:
    """The score's answer (``inspect view``'s ANSWER column): the entries the
    audit flagged stale, per window when there are several."""
    named = [", ".join(w.get("flagged") or []) or "none" for w in windows]
    if len(windows) == 1:
        return f"flagged {named[0]}"
    return "; ".join(f"step {w.get('step', '?')}: flagged {n}" for w, n in zip(windows, named)) or "no window audited"


def explanation_lines(instance: Instance | None, windows: Sequence[Mapping[str, Any]]) -> str:
    """One line per audited window (``window_line``), as a list; empty
    without the instance (a sample stopped before it was logged)."""
    if instance is None:
        return ""
    return "\n".join(
        f"- {window_line(instance, w['step'], w['flagged'], instance.labels_at(w['step']))}" for w in windows
    )
