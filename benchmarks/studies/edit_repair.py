"""Repair against deletion (docs/memory.md, "Edit proposals"): does showing an audit's
proposed correction (``filter_mode=correct``) beat deleting the flagged entry
(``delete``, the paper) for the scripted navigators?

    python benchmarks/studies/edit_repair.py [--seeds 50] [--regimes L1 L2 L3]

Each cell runs the navigate task twice on the same seeds, ``delete`` and
``correct``, with ``omcd`` (``output=edit``, the scripted ``observer`` as the
auditor: every correction right) and with ``oracle`` (the true claims), one
episode per seed (the scripted agents are deterministic: every epoch is the
same). The navigators: ``memory`` (believes its memory view only; full
observability, which it ignores) and ``mixed`` (believes what it sees and its
memory elsewhere) under partial observability (``view_radius`` 2 and 1: at
full observability it never reads its memory). Success and death are integer
counts of 50 episodes; the paired test is the report's (Wilcoxon signed-rank
on the per-seed outcome, ``harness.significance.paired_wilcoxon``, which names its
method), Holm-adjusted over every cell of the table.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from fractions import Fraction

from inspect_ai import eval as inspect_eval

from spatialstale_evals.harness.significance import holm, paired_wilcoxon
from spatialstale_evals.navigate import navigate

#: (navigator, view_radius) of each row.
AGENTS = [("memory", None), ("mixed", 2), ("mixed", 1)]
STRATEGIES = {"omcd": {"strategy": "omcd", "output": "edit"}, "oracle": {"strategy": "oracle"}}
MODES = ("delete", "correct")


def outcomes(log_dir: str, seeds: int, agent: str, **args: object) -> dict[str, dict[str, int]]:
    """Per seed: its episode's success / death / timeout flags."""
    (log,) = inspect_eval(
        navigate(epochs=1, **args),  # type: ignore[arg-type]
        model=f"spatialstale/{agent}",
        model_roles={"auditor": "spatialstale/observer"},
        limit=seeds,
        log_dir=log_dir,
        display="none",
    )
    if log.status != "success":
        raise RuntimeError(f"{agent} {args}: {log.error}")
    return {str(s.id): s.scores["navigation_scorer"].metadata["counts"] for s in log.samples or []}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--regimes", nargs="+", default=["L1", "L2", "L3"])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as log_dir:
        for agent, radius in AGENTS:
            for regime in args.regimes:
                for name, strategy in STRATEGIES.items():
                    runs = {
                        mode: outcomes(
                            log_dir, args.seeds, agent, regime=regime, view_radius=radius, filter_mode=mode, **strategy
                        )
                        for mode in MODES
                    }
                    ids = sorted(runs["delete"])
                    test = paired_wilcoxon(
                        [Fraction(runs["correct"][i]["success"]) for i in ids],
                        [Fraction(runs["delete"][i]["success"]) for i in ids],
                    )
                    counts = {m: {k: sum(v[k] for v in runs[m].values()) for k in ("success", "death")} for m in MODES}
                    rows.append((agent, radius, regime, name, len(ids), counts, test))
    adjusted = iter(holm([r[-1].pvalue for r in rows if not math.isnan(r[-1].pvalue)]))
    print(
        "| navigator | view_radius | regime | strategy | episodes | success: delete -> correct "
        "| deaths: delete -> correct | p (Wilcoxon, method) | Holm |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for agent, radius, regime, name, n, counts, test in rows:
        d, c = counts["delete"], counts["correct"]
        if math.isnan(test.pvalue):
            p, adj = f"- ({test.note})", "-"
        else:
            p, adj = f"{test.pvalue:.2g} ({test.method})", f"{next(adjusted):.2g}"
        print(
            f"| {agent} | {radius if radius is not None else 'full'} | {regime} | {name} | {n} "
            f"| {d['success']} -> {c['success']} | {d['death']} -> {c['death']} | {p} | {adj} |"
        )


if __name__ == "__main__":
    main()
