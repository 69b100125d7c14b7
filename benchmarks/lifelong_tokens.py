"""What a ``lifelong`` lifetime costs and how much of each request a prompt
cache can reuse, measured with the scripted agents (docs/performance.md,
"Lifelong: tokens per lifetime" and "Lifelong: prompt prefixes").

    python benchmarks/lifelong_tokens.py [--lifetimes 5] [--log-dir logs/lifelong-tokens] [--parts agents,settings]

``agents``: ``diligent``, ``write_once`` and ``amnesiac`` on L0-L3 (the first
N lifetimes of each regime, the task's defaults): tokens and calls per
lifetime as the scripted provider counts them (the episode records' sums),
against the cost model's estimate (``lifetime/cost.py``, the matrix dry run's
figure), and the agents' scores (success and note accuracy by episode index,
repair rate, hazard claims and those acted on; ``lifetime/tables.py``).
``settings``: ``diligent`` on L1 against ``episodes``, ``view_radius`` and
``history``. ``prefix``: for every request after an episode's first, the share
of its input tokens that repeats the previous request of the same episode
(``studies/prefix_cache.py``'s count: tool definitions left out), over the
``agents`` runs (whole-episode history) and ``diligent`` with ``history=4``.

Each configuration's log is kept in its own folder under ``--log-dir`` and
reused when it is there (delete the folder to measure again).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log, resolve_sample_attachments

sys.path.insert(0, str(Path(__file__).parent))
from studies.prefix_cache import shared  # noqa: E402

from spatialstale_evals.analysis.families import plain_markdown  # noqa: E402
from spatialstale_evals.lifelong import lifelong  # noqa: E402
from spatialstale_evals.lifetime.cost import estimate_lifetime_cost  # noqa: E402
from spatialstale_evals.lifetime.tables import acted_on_counts, hazard_rows, lifetime_tables  # noqa: E402
from spatialstale_evals.world import lifetimes  # noqa: E402

AGENTS = ("diligent", "write_once", "amnesiac")
REGIMES = ("L0", "L1", "L2", "L3")
#: (label, task arguments) of the settings table (``diligent`` on L1).
SETTINGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("2 episodes", {"episodes": 2}),
    ("5 episodes (default)", {}),
    ("10 episodes", {"episodes": 10}),
    ("5 episodes, view_radius=2", {"view_radius": 2}),
    ("5 episodes, view_radius=null (full view)", {"view_radius": None}),
    ("5 episodes, history=4", {"history": 4}),
    ("5 episodes, history=0", {"history": 0}),
)


def folder(agent: str, args: dict[str, Any]) -> str:
    return "_".join([agent, *(f"{k}={v}" for k, v in sorted(args.items()))])


def run(log_dir: Path, agent: str, args: dict[str, Any], limit: int) -> EvalLog:
    """The log of ``agent`` on the first ``limit`` lifetimes under ``args`` (reused when present)."""
    where = log_dir / folder(agent, args)
    found = [info for info in list_eval_logs(str(where))] if where.exists() else []
    for info in found:
        log = read_eval_log(info.name, header_only=True)
        if log.status == "success" and log.eval.config.limit == limit:
            return read_eval_log(info.name)
    (log,) = inspect_eval(
        lifelong(**args), model=f"spatialstale/{agent}", limit=limit, log_dir=str(where), display="none"
    )
    return read_eval_log(log.location)


def episode_records(log: EvalLog) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    for sample in log.samples or []:
        score = (sample.scores or {}).get("lifelong_scorer")
        if score is not None:
            yield str(sample.id), score.metadata["episodes"]


def cost_rows(log: EvalLog, args: dict[str, Any]) -> list[dict[str, float]]:
    """Per lifetime: counted tokens and calls, and the estimate's."""
    regime = args.get("regime", "L2")
    lives = {life.id: life for life in lifetimes.load(None, regime)}
    rows = []
    for sample_id, records in episode_records(log):
        est = estimate_lifetime_cost(lives[sample_id], args)["low"]
        rows.append(
            {
                "tokens": sum(r["tokens"] for r in records),
                "calls": sum(r["model_calls"] for r in records),
                "estimate": est["input_tokens"] + est["output_tokens"],
                "estimate_calls": est["calls"],
                "success": sum(r["outcome"] == "success" for r in records) / len(records),
            }
        )
    return rows


def cost_line(label: str, rows: list[dict[str, float]]) -> str:
    tokens = [r["tokens"] for r in rows]
    counted, estimated = statistics.mean(tokens), statistics.mean(r["estimate"] for r in rows)
    worst = max(abs(r["estimate"] / r["tokens"] - 1) for r in rows)
    calls = statistics.mean(r["calls"] for r in rows)
    return (
        f"| {label} | {calls:.1f} | {counted:,.0f} ({min(tokens):,}-{max(tokens):,})"
        f" | {statistics.mean(r['estimate_calls'] for r in rows):.1f} | {estimated:,.0f} "
        f"| {100 * (estimated / counted - 1):+.1f} % | {100 * worst:.0f} % |"
    )


COST_HEADER = (
    "| {what} | calls per lifetime | tokens per lifetime: mean (min-max) | estimated calls | estimated tokens "
    "| estimate vs counted (means) | largest error, one lifetime |\n|---|---|---|---|---|---|---|"
)


def prefix_shares(log: EvalLog) -> list[float]:
    """Per request after an episode's first: the share of its input that repeats the previous request."""
    values = []
    for sample in log.samples or []:
        sample = resolve_sample_attachments(sample, "full")
        calls = [e for e in sample.events if e.event == "model"]
        for before, now in zip(calls, calls[1:]):
            if now.input[:2] != before.input[:2]:  # a new episode: another system message or first prompt
                continue
            same, total = shared(before.input, now.input)
            values.append(same / total if total else math.nan)
    return values


def _series(row: pd.Series) -> str:
    return " ".join("-" if math.isnan(v) else f"{v:.2f}" for v in row)


def score_table(logs: dict[tuple[str, str], EvalLog]) -> pd.DataFrame:
    rows = []
    for (agent, regime), log in logs.items():
        for sample in log.samples or []:
            score = (sample.scores or {}).get("lifelong_scorer")
            if score is not None:
                value = dict(score.value) | acted_on_counts(score.metadata or {})  # type: ignore[arg-type]
                rows.append({"agent": agent, "regime": regime, "value": value})
    records = pd.DataFrame(rows)
    tables = lifetime_tables(records)
    hazards = hazard_rows(records).set_index(["agent", "regime"])
    success, accuracy, summary = (tables[k] for k in ("success_by_episode", "note_accuracy_by_episode", "summary"))
    out = []
    for key in summary.index:
        s = summary.loc[key]
        out.append(
            {
                "agent": key[0],
                "regime": key[1],
                "success by episode": _series(success.loc[key]),
                "note accuracy by episode": _series(accuracy.loc[key]),
                "repair rate": s["repair_rate"],
                "hazard claims per episode start": s["hazard_claims"],
                "hazard claims acted on / hazard claims": s["acted_on_rate"],
                "acted on": hazards.loc[key, "acted_on"],
            }
        )
    return pd.DataFrame(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lifetimes", type=int, default=5)
    parser.add_argument("--log-dir", default="logs/lifelong-tokens")
    parser.add_argument("--parts", default="agents,settings,prefix")
    args = parser.parse_args()
    parts, log_dir, n = args.parts.split(","), Path(args.log_dir), args.lifetimes
    logs: dict[tuple[str, str], EvalLog] = {}
    if "agents" in parts or "prefix" in parts:
        for agent in AGENTS:
            for regime in REGIMES:
                logs[(agent, regime)] = run(log_dir, agent, {"regime": regime}, n)
    if "agents" in parts:
        print(f"\nScripted agents, {n} lifetimes per regime, the task's defaults\n")
        print(COST_HEADER.format(what="agent, regime"))
        for (agent, regime), log in logs.items():
            print(cost_line(f"`{agent}`, {regime}", cost_rows(log, {"regime": regime})))
        print()
        print(plain_markdown(score_table(logs)))
    if "settings" in parts:
        print(f"\n`diligent` on L1, {n} lifetimes\n")
        print(COST_HEADER.format(what="setting"))
        for label, extra in SETTINGS:
            task_args = {"regime": "L1", **extra}
            print(cost_line(label, cost_rows(run(log_dir, "diligent", task_args, n), task_args)))
    if "prefix" in parts:
        print("\nPrefix share within an episode (requests after an episode's first)\n")
        print("| runs | requests | prefix share: mean | median | min | share >= 0.9 |\n|---|---|---|---|---|---|")
        groups: dict[str, list[float]] = defaultdict(list)
        for (agent, _), log in logs.items():
            groups[f"`{agent}`, L0-L3, whole-episode history"] += prefix_shares(log)
        groups["`diligent`, L1, history=4"] = prefix_shares(run(log_dir, "diligent", {"regime": "L1", "history": 4}, n))
        for label, values in groups.items():
            print(
                f"| {label} | {len(values)} | {statistics.mean(values):.1%} | {statistics.median(values):.1%} "
                f"| {min(values):.1%} | {sum(v >= 0.9 for v in values) / len(values):.1%} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
