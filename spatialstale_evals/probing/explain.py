"""What ``inspect view`` shows of a probe sample: its input (the probes
asked, the final lake beside the lake as memory describes it), its target
(the stale entries, from which every right answer follows) and the
explanation's line per probe with its verdict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spatialstale_evals.harness.lake_map import lake_and_memory
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import DANGER, SAFE
from spatialstale_evals.world.targets import STALE_KINDS, kind_of

#: Each target kind: the entry's claim, and what the cell is now.
KIND_TEXT = {
    "stale_thaw": "SAFE -> hole",
    "stale_freeze": "DANGER -> ice",
    "valid_safe": "SAFE, still ice",
    "valid_danger": "DANGER, still a hole",
}


def _cell(cell: Sequence[int]) -> str:
    return f"({cell[0]},{cell[1]})"


def sample_text(instance: Instance, params: Mapping[str, Any]) -> tuple[str, str]:
    """The sample's input and target (``TaskFamily.sample_text``). The target
    is the truth every right answer follows from: the entries stale on the
    final lake, with their change (an explicit probe's answer is the cell's
    state now, a premise holds unless its entry is listed, an implicit probe
    steps onto its cell exactly when the cell is ice now). The targets
    themselves are chosen by the solver (``choose_targets``: too slow on a
    large grid to run for every instance before the first sample starts)."""
    grid = instance.final_grid()
    dimensions = list(params["dimensions"])
    how = "each probe a fresh conversation" if params.get("conversation") != "shared" else "one conversation per entry"
    shown = (
        f"probe {instance.id} ({instance.regime}, {params.get('modality', 'text')}): "
        f"{', '.join(dimensions)} about up to {params['targets_per_kind']} memory entries of each kind "
        f"(stale SAFE, stale DANGER and as many valid ones), on the lake after every change, "
        f"the agent at S (implicit: next to the entry); {how}.\n\n"
        + lake_and_memory(grid, instance.memory, lake_title="lake at the end")
    )
    kinds = {e.id: (e, kind_of(e, grid)) for e in instance.memory}
    stale = [f"{eid} {_cell(e.cell)} {KIND_TEXT[kind]}" for eid, (e, kind) in kinds.items() if kind in STALE_KINDS]
    target = f"stale now: {', '.join(stale)}; every other entry's claim holds" if stale else "every claim holds"
    return shown, target


def _said(record: Mapping[str, Any]) -> str:
    """What a probe's reply answered, in the probe's own terms."""
    answer = record.get("answer")
    if record["dimension"] == "explicit":
        return f"said {SAFE if answer else DANGER}"
    if record["dimension"] == "premise":
        return "said the claim holds" if answer else "said the claim no longer holds"
    onto = "onto it" if answer else "not onto it"
    return f"moved {record.get('direction')} from {_cell(record['placement'])}, {onto}"


def probe_line(record: Mapping[str, Any]) -> str:
    """One probe's verdict: ``pass: explicit mem_044 (5,4), SAFE -> hole: said DANGER``."""
    about = f"{record['dimension']} {record['memory_id']} {_cell(record['cell'])}, {KIND_TEXT[record['kind']]}"
    outcome = record["outcome"]
    if outcome == "skipped":
        return f"skipped: {about}: no placement to ask from"
    if outcome == "unparseable":
        return f"unparseable: {about}: {record.get('problem') or 'no usable answer'}"
    return f"{outcome}: {about}: {_said(record)}"


def explanation_lines(records: Iterable[Mapping[str, Any]]) -> str:
    """One line per probe (``probe_line``), as a list."""
    return "\n".join(f"- {probe_line(r)}" for r in records)
