"""What ``inspect view`` shows of a probe sample: its input (the probes
asked, the final lake beside the lake as memory describes it), its target
(the right answer about every target entry) and the explanation's line per
probe with its verdict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spatialstale_evals.harness.lake_map import lake_and_memory
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import DANGER, SAFE
from spatialstale_evals.world.targets import STALE_KINDS, choose_targets

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
    """The sample's input and target (``TaskFamily.sample_text``)."""
    targets = choose_targets(instance, params["targets_per_kind"])
    dimensions = list(params["dimensions"])
    how = "each probe a fresh conversation" if params.get("conversation") != "shared" else "one conversation per entry"
    shown = (
        f"probe {instance.id} ({instance.regime}, {params.get('modality', 'text')}): "
        f"{', '.join(dimensions)} about each of {len(targets)} memory entries "
        f"({', '.join(t.entry.id for t in targets) or 'none'}), on the lake after every change, "
        f"the agent at S (implicit: next to the entry); {how}.\n\n"
        + lake_and_memory(instance.final_grid(), instance.memory, lake_title="lake at the end")
    )
    answers = [
        f"{t.entry.id} {_cell(t.cell)}: {SAFE if t.safe_now else DANGER} now, "
        f"claim {t.entry.claim} {'stale' if t.kind in STALE_KINDS else 'holds'}"
        for t in targets
    ]
    return shown, "; ".join(answers) or "no targets"


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
