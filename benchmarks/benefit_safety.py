"""Memory that matters, measured with the scripted agents (README, "Memory that
matters"): the benefit of memory on the clean regime L0 and its price on L2
under partial observability, and the filter modes side by side.

    python benchmarks/benefit_safety.py [--radii 0,1,2] [--seeds 50] [--log-dir logs/benefit-safety]

The ``mixed`` agent (observation where it sees, its memory view elsewhere;
a perfect auditor of what it sees) plays every configuration on the canonical
50 seeds, text, one epoch:

- benefit: L0, ``no_filter`` vs ``no_memory`` (success, timeout, steps);
- safety: L2, ``no_filter`` vs ``omcd`` (its audit is perfect on the cells in
  view) vs ``resolve`` vs ``oracle`` (deaths, deaths on a stale entry shown,
  timeouts);
- filter modes: L2, ``omcd`` with ``delete`` / ``mark`` / ``history``;
- audit cost: ``omcd``'s calls per episode on L2, full observability beside each radius.

Paired tests: Wilcoxon signed-rank on the seeds' exact differences
(``analysis/stats.py``), two-sided; with one epoch a seed's rate is 0 or 1.
"""

from __future__ import annotations

import argparse
import statistics
import time
from fractions import Fraction
from typing import Any

from inspect_ai import eval as inspect_eval

from spatialstale_evals.analysis.stats import paired_wilcoxon
from spatialstale_evals.navigate import navigate

AGENT = "spatialstale/mixed"


def configurations(radii: list[int]) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = [{"regime": "L2", "strategy": "omcd", "view_radius": None}]
    for r in radii:
        runs += [{"regime": "L0", "strategy": s, "view_radius": r} for s in ("no_filter", "no_memory")]
        runs += [{"regime": "L2", "strategy": s, "view_radius": r} for s in ("no_filter", "omcd", "resolve", "oracle")]
        runs += [{"regime": "L2", "strategy": "omcd", "view_radius": r, "filter_mode": m} for m in ("mark", "history")]
    return runs


def key(args: dict[str, Any]) -> tuple:
    return (args["regime"], args["strategy"], args["view_radius"], args.get("filter_mode", "delete"))


def episodes(log: Any) -> dict[str, dict[str, Any]]:
    return {
        str(s.id): s.scores["navigation_scorer"].metadata | s.scores["navigation_scorer"].value for s in log.samples
    }


def summary(eps: dict[str, dict[str, Any]]) -> dict[str, float]:
    values = list(eps.values())
    n = len(values)

    def pct(k: str) -> float:
        return 100 * sum(v[k] for v in values) / n

    won = [v["steps"] for v in values if v["success"]]
    return {
        "n": n,
        "success": pct("success"),
        "death": pct("death"),
        "timeout": pct("timeout"),
        "death_on_stale_shown": pct("death_on_stale_shown"),
        "steps": statistics.fmean(v["steps"] for v in values),
        "steps_success": statistics.fmean(won) if won else float("nan"),
        "audit_calls": statistics.fmean(v["audit_calls"] for v in values),
    }


def paired(a: dict, b: dict, metric: str) -> str:
    seeds = sorted(set(a) & set(b))
    t = paired_wilcoxon([Fraction(a[s][metric]) for s in seeds], [Fraction(b[s][metric]) for s in seeds])
    return "-" if t.pvalue != t.pvalue else f"{t.pvalue:.2g} ({t.method}, {t.n_nonzero} non-zero)"


def radius_label(r: int | None) -> str:
    return "full" if r is None else str(r)


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _header(*names: str) -> list[str]:
    return [_row(*names), "|" + "---|" * len(names)]


def benefit_table(s: dict, results: dict, radii: list[int | None]) -> list[str]:
    out = ["### Benefit: L0 (nothing is stale), memory vs none\n"]
    out += _header("radius", "memory", "success %", "timeout %", "mean steps", "steps (success)", "p, success")
    for r in radii:
        a, b = ("L0", "no_filter", r, "delete"), ("L0", "no_memory", r, "delete")
        for k, label in ((a, "no_filter (all entries)"), (b, "no_memory")):
            x = s[k]
            p = paired(results[a], results[b], "success") if k == a else ""
            cells = f"{x['success']:.0f}", f"{x['timeout']:.0f}", f"{x['steps']:.1f}", f"{x['steps_success']:.1f}"
            out.append(_row(radius_label(r), label, *cells, p))
    return out


def safety_table(s: dict, results: dict, radii: list[int | None]) -> list[str]:
    out = ["\n### Safety: L2 (stale memory), raw vs audited vs resolved vs oracle\n"]
    out += _header(
        "radius", "strategy", "success %", "death %", "death on a stale entry shown %", "timeout %",
        "audit calls / episode", "p, success vs no_filter", "p, death vs no_filter",
    )  # fmt: skip
    for r in radii:
        base = ("L2", "no_filter", r, "delete")
        for strategy in ("no_filter", "omcd", "resolve", "oracle"):
            k = ("L2", strategy, r, "delete")
            x = s[k]
            tests = ["", ""] if k == base else [paired(results[k], results[base], m) for m in ("success", "death")]
            cells = (
                f"{x['success']:.0f}",
                f"{x['death']:.0f}",
                f"{x['death_on_stale_shown']:.0f}",
                f"{x['timeout']:.0f}",
            )
            out.append(_row(radius_label(r), strategy, *cells, f"{x['audit_calls']:.1f}", *tests))
    return out


def filter_table(s: dict, radii: list[int | None]) -> list[str]:
    out = [
        "\n### Filter modes: L2, omcd\n",
        *_header("radius", "filter_mode", "success %", "death %", "timeout %", "mean steps"),
    ]
    for r in radii:
        for mode in ("delete", "mark", "history"):
            x = s[("L2", "omcd", r, mode)]
            cells = f"{x['success']:.0f}", f"{x['death']:.0f}", f"{x['timeout']:.0f}", f"{x['steps']:.1f}"
            out.append(_row(radius_label(r), mode, *cells))
    return out


def cost_table(s: dict, radii: list[int | None]) -> list[str]:
    out = ["\n### Audit cost: omcd on L2, calls per episode\n", *_header("radius", "calls / episode")]
    return out + [_row(radius_label(r), f"{s[('L2', 'omcd', r, 'delete')]['audit_calls']:.1f}") for r in [None, *radii]]


def tables(results: dict[tuple, dict], radii: list[int | None]) -> str:
    s = {k: summary(v) for k, v in results.items()}
    return "\n".join(
        benefit_table(s, results, radii)
        + safety_table(s, results, radii)
        + filter_table(s, radii)
        + cost_table(s, radii)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--radii", default="0,1,2", help="view radii, comma-separated")
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--log-dir", default="logs/benefit-safety")
    args = parser.parse_args()
    radii = [int(r) for r in args.radii.split(",")]
    began = time.perf_counter()
    runs = configurations(radii)
    logs = inspect_eval(
        [navigate(epochs=1, **r) for r in runs],
        model=AGENT,
        log_dir=args.log_dir,
        limit=args.seeds,
        display="none",
        max_tasks=4,
    )
    results = {key(r): episodes(log) for r, log in zip(runs, logs)}
    print(tables(results, radii))
    print(f"\n{len(runs)} tasks, {sum(len(v) for v in results.values())} episodes, {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
