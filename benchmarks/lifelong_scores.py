"""The lifelong yardstick measured: what trivial note writers score, the
scripted agents' scores with the difference ``diligent`` - ``write_once``,
and the memory gain of ``diligent`` over ``memory=none`` (docs/lifelong.md,
"Trivial writers", "The scripted agents on L1 and L2", "Memory gain").

    python benchmarks/lifelong_scores.py [--lifetimes 50] [--writer-lifetimes 10]
        [--log-dir logs/lifelong-scores] [--parts writers,agents,gain]

``writers``: the trivial writers of ``tests/_lifetime_writers.py`` through
``lifelong_with_agent`` (a constant SAFE writer, a constant HOLE writer, the
view-only writer, two SAFE lines, nothing) beside ``diligent`` and
``write_once``, on L1 and L2: the scores the task had before task version
6-A (``note_accuracy``, now ``note_precision``, coverage, repair rate, hazard
claims per episode start) and after (``note_balanced`` beside its attainable
bound, ``note_recall``). ``agents``: ``diligent``, ``write_once``, ``amnesiac``
and ``credulous`` on the first N lifetimes of L1 and L2 at the defaults:
``note_balanced``, SPL, success, deaths and hazard claims acted on; then the
per-lifetime difference ``diligent`` - ``write_once`` in ``note_balanced``
and SPL with its 95 % interval (BCa bootstrap over lifetimes, 10,000
resamples, seed 0) and the exact signed-rank p. ``gain``: ``diligent`` with
and without memory on the same lifetimes (``--gain-regimes``, default L1,L2;
the report's memory-gain table: exact signed-rank test, Holm within a regime).

Each configuration's log is kept in its own folder under ``--log-dir`` and
reused when it is there (``lifelong_tokens.run``).
"""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _lifetime_writers import WRITERS, writer  # noqa: E402
from lifelong_tokens import run  # noqa: E402

from spatialstale_evals.analysis.families import plain_markdown  # noqa: E402
from spatialstale_evals.harness.score_counts import counts_of  # noqa: E402
from spatialstale_evals.harness.significance import exact_signed_rank  # noqa: E402
from spatialstale_evals.lifelong import lifelong_with_agent  # noqa: E402
from spatialstale_evals.lifetime.gain import memory_gain_table, spl_terms  # noqa: E402
from spatialstale_evals.lifetime.scoring import pooled_ratio  # noqa: E402
from spatialstale_evals.lifetime.tables import acted_on_counts, lifetime_tables  # noqa: E402

REGIMES = ("L1", "L2")
AGENTS = ("diligent", "write_once", "amnesiac", "credulous")
#: The writers' table: the reference agents beside them.
REFERENCES = ("diligent", "write_once")
BEFORE = {"note_precision": "note_accuracy (now note_precision)", "note_coverage": "note_coverage",
          "repair_rate": "repair_rate", "hazard_claims": "hazard claims / episode start"}  # fmt: skip
AFTER = {"note_balanced": "note_balanced", "note_attainable": "attainable", "note_recall": "note_recall"}


def run_writer(log_dir: Path, kind: str, regime: str, limit: int) -> EvalLog:
    """The trivial writer ``kind`` on the first ``limit`` lifetimes (reused when present)."""
    where = log_dir / f"writer-{kind}_regime={regime}"
    for info in list_eval_logs(str(where)) if where.exists() else []:
        log = read_eval_log(info.name, header_only=True)
        if log.status == "success" and log.eval.config.limit == limit:
            return read_eval_log(info.name)
    task = lifelong_with_agent(writer(kind), regime=regime)
    (log,) = inspect_eval(task, model="spatialstale/amnesiac", limit=limit, log_dir=str(where), display="none")
    return read_eval_log(log.location)


def records(logs: dict[tuple[str, str], EvalLog]) -> pd.DataFrame:
    """One row per lifetime: agent, regime, memory, lifetime, counts, exact SPL terms."""
    rows = []
    for (agent, regime), log in logs.items():
        memory = (log.eval.task_args or {}).get("memory", "notes")
        for sample in log.samples or []:
            score = (sample.scores or {}).get("lifelong_scorer")
            if score is not None:
                meta = score.metadata or {}
                rows.append({"agent": agent, "regime": regime, "memory": memory, "instance_id": str(sample.id),
                             "value": dict(counts_of(score) or {}) | acted_on_counts(meta),
                             "spl_terms": spl_terms(meta.get("episodes") or [])})  # fmt: skip
    return pd.DataFrame(rows)


def _series(row: pd.Series, first: int = 1) -> str:
    return " ".join("-" if math.isnan(v) else f"{v:.2f}" for k, v in row.items() if int(k) >= first)


def agents_table(frame: pd.DataFrame) -> pd.DataFrame:
    tables = lifetime_tables(frame.drop(columns=["memory"]))
    summary, spl, notes = (tables[k] for k in ("summary", "spl_by_episode", "note_balanced_by_episode"))
    out = []
    for key in summary.index:
        s = summary.loc[key]
        deaths = s["episode_death_rate"] * s["episodes"]
        acted = frame[(frame["agent"] == key[0]) & (frame["regime"] == key[1])]["value"]
        out.append({
            "agent": key[0], "regime": key[1], "note_balanced": s["note_balanced"], "attainable": s["note_attainable"],
            "note_balanced, episodes 2-5": _series(notes.loc[key], 2), "SPL": s["spl"],
            "SPL, episodes 1-5": _series(spl.loc[key]), "success": s["episode_success_rate"],
            "deaths": f"{deaths:.0f} of {s['episodes']:.0f}",
            "hazard claims acted on": f"{sum(v.get('hazards_acted_on', 0) for v in acted):.0f} of "
                                      f"{sum(v.get('hazard_claims', 0) for v in acted):.0f}",
        })  # fmt: skip
    return pd.DataFrame(out)


def writers_table(frame: pd.DataFrame) -> pd.DataFrame:
    tables = lifetime_tables(frame.drop(columns=["memory"]))
    summary = tables["summary"]
    out = []
    for key in summary.index:
        s = summary.loc[key]
        out.append({"notes kept": key[0], "regime": key[1]} | {label: s[name] for name, label in BEFORE.items()}
                   | {label: s[name] for name, label in AFTER.items()})  # fmt: skip
    return pd.DataFrame(out)


def lifetime_score(value: dict[str, float], terms: list[str], name: str) -> float:
    if name == "spl":
        return float(sum(Fraction(t) for t in terms) / len(terms))
    return pooled_ratio(value, name)


def difference_table(frame: pd.DataFrame, a: str = "diligent", b: str = "write_once") -> pd.DataFrame:
    """Per regime and score: the per-lifetime difference ``a`` - ``b``, its 95 %
    BCa bootstrap interval and the exact signed-rank p."""
    out = []
    for regime in REGIMES:
        g = frame[frame["regime"] == regime]
        ra = {r.instance_id: r for r in g[g["agent"] == a].itertuples()}
        rb = {r.instance_id: r for r in g[g["agent"] == b].itertuples()}
        shared = sorted(set(ra) & set(rb))
        for name in ("note_balanced", "spl"):
            x = [lifetime_score(ra[s].value, ra[s].spl_terms, name) for s in shared]
            y = [lifetime_score(rb[s].value, rb[s].spl_terms, name) for s in shared]
            d = np.array(x) - np.array(y)
            ci = stats.bootstrap((d,), np.mean, n_resamples=10_000, method="BCa", random_state=0).confidence_interval
            exact = [Fraction(v).limit_denominator(10**9) for v in x], [Fraction(v).limit_denominator(10**9) for v in y]
            test = exact_signed_rank(*exact)
            out.append({"regime": regime, "score": name, "lifetimes": len(shared), a: np.mean(x), b: np.mean(y),
                        "difference": d.mean(), "95 % CI low": ci.low, "95 % CI high": ci.high,
                        "exact signed-rank p": test.pvalue})  # fmt: skip
    return pd.DataFrame(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lifetimes", type=int, default=50)
    parser.add_argument("--writer-lifetimes", type=int, default=10)
    parser.add_argument("--log-dir", default="logs/lifelong-scores")
    parser.add_argument("--parts", default="writers,agents,gain")
    parser.add_argument("--gain-regimes", default="L1,L2")
    parser.add_argument("--agents", default=",".join(AGENTS), help="the agents' table's agents (a subset runs fewer)")
    args = parser.parse_args()
    parts, log_dir = args.parts.split(","), Path(args.log_dir)
    if "writers" in parts:
        n = args.writer_lifetimes
        logs = {(k, r): run_writer(log_dir, k, r, n) for k in WRITERS for r in REGIMES}
        logs |= {(a, r): run(log_dir, a, {"regime": r}, n) for a in REFERENCES for r in REGIMES}
        print(f"\nTrivial writers through lifelong_with_agent, {n} lifetimes x 5 episodes\n")
        print(plain_markdown(writers_table(records(logs))))
    if "agents" in parts:
        n = args.lifetimes
        logs = {(a, r): run(log_dir, a, {"regime": r}, n) for a in args.agents.split(",") for r in REGIMES}
        frame = records(logs)
        print(f"\nScripted agents, {n} lifetimes x 5 episodes, the task's defaults\n")
        print(plain_markdown(agents_table(frame)))
        print("\nPer-lifetime difference diligent - write_once (95 % BCa bootstrap interval, 10,000 resamples)\n")
        print(plain_markdown(difference_table(frame)))
    if "gain" in parts:
        n = args.lifetimes
        logs = {}
        for regime in args.gain_regimes.split(","):
            for memory in ("none", "notes"):  # the runs without memory first: the agents part may have made the others
                task_args = {"regime": regime} | ({"memory": memory} if memory != "notes" else {})
                logs[(f"diligent memory={memory}", regime)] = run(log_dir, "diligent", task_args, n)
        frame = records(logs).assign(model="spatialstale/diligent", config="")
        gain = memory_gain_table(frame.drop(columns=["agent"]))
        print(f"\nMemory gain of diligent (memory=notes minus memory=none), {n} lifetimes x 5 episodes\n")
        print(plain_markdown(gain.drop(columns=["model", "config"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
