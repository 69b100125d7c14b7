"""The probe family's report table: STALE's three dimensions per model,
config, regime and modality, from the counts the probe scorer records, with
the very ratios its task metrics use (``probing/scoring.py``); and STALE's
own reported pass rates beside them, marked as a different benchmark. The
layout, title and note are :data:`TABLES`, which the family's registry entry
hands to the report (``TaskFamily.layout_tables``)."""

from __future__ import annotations

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.harness.counts import ratio
from spatialstale_evals.harness.report_layout import ReportTable, f3, integer, labels
from spatialstale_evals.harness.report_tables import LAKE_ORDER, nan, sort_table
from spatialstale_evals.probing import scoring as ps
from spatialstale_evals.probing.probes import DIMENSION_KINDS, DIMENSIONS, OF_STALE_DIMENSION

GROUP = ["model", "config", "regime", "modality"]
#: The config label of STALE's reference rows.
REFERENCE = "reference: STALE, a different benchmark (conflict type in the regime column)"


def dimension_row(c: dict[str, float], dimension: str) -> dict[str, float]:
    """The probe table's numbers of one dimension from summed counts."""
    kinds = DIMENSION_KINDS[dimension]
    asked = ps.summed(c, dimension, kinds, ps.ASKED)
    return {
        "dimension": dimension,
        "asked": int(asked),
        "stale_n": int(ps.summed(c, dimension, ps.stale_kinds(dimension), ps.ASKED)),
        "stale_acc": nan(ps.accuracy_of(dimension, ps.stale_kinds(dimension))(c)),
        "control_n": int(ps.summed(c, dimension, ps.control_kinds(dimension), ps.ASKED)),
        "control_acc": nan(ps.accuracy_of(dimension, ps.control_kinds(dimension))(c)),
        "balanced": nan(ps.balanced_of(dimension)(c)),
        "thaw_acc": nan(ps.accuracy_of(dimension, ["stale_thaw"])(c)),
        "freeze_acc": nan(ps.accuracy_of(dimension, ["stale_freeze"])(c)),
        "unparseable": nan(ratio(ps.summed(c, dimension, kinds, ["unparseable"]), asked)),
        "skipped": int(ps.summed(c, dimension, kinds, ["skipped"])),
        **{flag: int(ps.answers_flagged(flag, [dimension])(c) or 0) for flag in ps.ANSWER_FLAGS},
    }


def reference_rows() -> list[dict[str, object]]:
    """STALE's reported pass rates per dimension as rows of the table (accuracy on its conflicts: all stale)."""
    return [
        {
            "model": system,
            "config": REFERENCE,
            "regime": conflict,
            "modality": "text",
            "dimension": OF_STALE_DIMENSION[d],
            "stale_acc": v,
        }
        for (system, conflict), rates in paper.STALE_REFERENCE.items()
        for d, v in rates.items()
        if d in OF_STALE_DIMENSION
    ]


def probe_table(probe: pd.DataFrame) -> pd.DataFrame:
    """One row per model x config x regime x modality x dimension asked, then
    STALE's reference rows (only beside some data of ours)."""
    if probe.empty:
        return pd.DataFrame()
    rows = []
    for key, g in probe.groupby(GROUP, sort=False):
        c = ps.total(g.to_dict("records"))
        cell = {**dict(zip(GROUP, key)), "seeds": g["instance_id"].nunique()}
        rows += [{**cell, **dimension_row(c, d)} for d in DIMENSIONS if ps.summed(c, d, DIMENSION_KINDS[d], ps.ASKED)]
    ours = sort_table(pd.DataFrame(rows), {**LAKE_ORDER, "dimension": DIMENSIONS})
    return pd.concat([ours, pd.DataFrame(reference_rows())], ignore_index=True)


NOTE = (
    "Accuracy = passed / asked (an unusable reply is asked and not passed; 'unparseable' is its share). "
    "Stale: stale_thaw and stale_freeze targets (explicit: state resolution; premise: premise resistance; "
    "implicit: policy adaptation, thaw only); controls: valid_safe and valid_danger (implicit: valid_safe). "
    "Balanced: the mean accuracy over the two classes of right answer (explicit: safe now vs a hole now; "
    "otherwise stale vs control), 0.5 for a one-answer agent. Skipped: implicit targets without a placement. "
    "Rows marked 'reference: STALE' are the pass rates STALE reports for its own, conversational benchmark "
    "(judged by an LLM, every probe about a changed fact): orientation, not a comparison."
)

#: The family's table of the report's fixed layout (its ``Probes`` section).
TABLES = {
    "probe": ReportTable(
        title="Probes: STALE's three dimensions on spatial memory, by model x regime x modality",
        columns=[
            *labels("model", "config", "regime", "modality", "dimension"),
            ("seeds", "seeds", integer),
            ("stale_n", "stale N", integer),
            ("stale_acc", "accuracy on stale", f3),
            ("control_n", "control N", integer),
            ("control_acc", "accuracy on controls", f3),
            ("balanced", "balanced", f3),
            ("thaw_acc", "thaw", f3),
            ("freeze_acc", "freeze", f3),
            ("unparseable", "unparseable", f3),
            ("empty_answers", "empty answers", integer),
            ("truncated_answers", "cut answers", integer),
            ("skipped", "skipped", integer),
        ],
        build=lambda probe, built: probe_table(probe),
        missing="No probe logs.",
        note=NOTE,
    ),
}
