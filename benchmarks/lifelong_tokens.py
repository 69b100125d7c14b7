"""What a ``lifelong`` lifetime costs and how much of each request a prompt
cache can reuse, measured with the scripted agents (docs/performance.md,
"Lifelong: tokens per lifetime" and "Lifelong: prompt prefixes").

    python benchmarks/lifelong_tokens.py [--lifetimes 10] [--log-dir logs/lifelong-tokens]
        [--parts agents,trust,settings,prefix]

``agents``: ``diligent``, ``write_once`` and ``amnesiac`` on L0-L3 (the first
N lifetimes of each regime, the task's defaults): tokens and calls per
lifetime as the scripted provider counts them (the episode records' sums),
against the cost model's estimate (``lifetime/cost.py``, the matrix dry run's
figure), and the agents' scores (SPL, success and ``note_balanced`` by
episode index, ``note_balanced`` beside its attainable bound, repair rate,
hazard claims and those acted on; ``lifetime/tables.py``, from each sample's
counts in ``Score.metadata["counts"]``).
``trust``: ``diligent`` and ``write_once`` on L1-L3 from the paper's notes
at ``view_radius=0``, where the notes are all they go on: the hazard claims
they act on. ``settings``: ``diligent`` on L1 against ``episodes``, ``view_radius`` and
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
import re
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
from spatialstale_evals.harness.score_counts import counts_of  # noqa: E402
from spatialstale_evals.harness.tokens import count_text_tokens  # noqa: E402
from spatialstale_evals.lifelong import lifelong  # noqa: E402
from spatialstale_evals.lifetime.cost import estimate_lifetime_cost  # noqa: E402
from spatialstale_evals.lifetime.prompts import EPISODE_START  # noqa: E402
from spatialstale_evals.lifetime.tables import acted_on_counts, hazard_rows, lifetime_tables  # noqa: E402
from spatialstale_evals.world import lifetimes  # noqa: E402

AGENTS = ("diligent", "write_once", "amnesiac")
REGIMES = ("L0", "L1", "L2", "L3")
#: The settings where notes are all the agent has to go on: it sees only its own cell,
#: and starts from the paper's notes (already stale by the regime).
TRUST_ARGS: dict[str, Any] = {"view_radius": 0, "initial_memory": "paper"}
TRUST_AGENTS = ("diligent", "write_once")
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


def _tool_tokens(event: Any) -> int:
    return sum(count_text_tokens(t.model_dump_json(exclude_none=True)) for t in event.tools or [])


#: The first words of an episode's first prompt (``prompts.EPISODE_START``).
EPISODE_HEADER = re.compile(
    "^" + re.escape(EPISODE_START).replace(r"\{episode\}", r"\d+").replace(r"\{episodes\}", r"\d+")
)


#: Request positions within an episode shown apart (this one and every later one together).
LAST_POSITION = 6


def _opens_episode(messages: list[Any]) -> bool:
    """Whether a request is an episode's first: it ends with the episode's first prompt."""
    last = messages[-1]
    return last.role == "user" and bool(EPISODE_HEADER.match(last.text))


def prefix_shares(log: EvalLog) -> dict[str, list[float]]:
    """Per request after an episode's first (a step's or the write-back's):
    ``repeat``, the share of the previous request's input that this one
    repeats at its start (1.0: append-only), and ``reuse``, the share of this
    request's input a prompt cache could serve from the previous one (tool
    definitions included when they are the same, as a provider caches them
    first)."""
    out: dict[str, list[float]] = defaultdict(list)
    for sample in log.samples or []:
        sample = resolve_sample_attachments(sample, "full")
        calls = [e for e in sample.events if e.event == "model"]
        position = 0
        for before, now in zip(calls, calls[1:]):
            if _opens_episode(now.input):  # its first request: the previous one was another conversation's
                position = 0
                continue
            position += 1
            same, total = shared(before.input, now.input)
            previous = shared(before.input, before.input)[1]
            tools = _tool_tokens(now) if [t.name for t in now.tools] == [t.name for t in before.tools] else 0
            kind = "step" if any(t.name == "move" for t in now.tools) else "write-back"
            out[f"{kind}: repeat"].append(same / previous if previous else math.nan)
            out[f"{kind}: reuse"].append((same + tools) / (total + _tool_tokens(now)))
            if kind == "step":
                out[f"position {min(position, LAST_POSITION)}"].append(out[f"{kind}: reuse"][-1])
    return out


def _series(row: pd.Series) -> str:
    return " ".join("-" if math.isnan(v) else f"{v:.2f}" for v in row)


def score_table(logs: dict[tuple[str, str], EvalLog]) -> pd.DataFrame:
    rows = []
    for (agent, regime), log in logs.items():
        for sample in log.samples or []:
            score = (sample.scores or {}).get("lifelong_scorer")
            if score is not None:
                value = dict(counts_of(score) or {}) | acted_on_counts(score.metadata or {})
                rows.append({"agent": agent, "regime": regime, "value": value})
    records = pd.DataFrame(rows)
    steps = {
        key: " ".join(
            f"{statistics.mean(r['steps'] for _, rs in episode_records(log) for r in rs if r['episode'] == k):.1f}"
            for k in sorted({r["episode"] for _, rs in episode_records(log) for r in rs})
        )
        for key, log in logs.items()
    }
    tables = lifetime_tables(records)
    hazards = hazard_rows(records).set_index(["agent", "regime"])
    spl, success, notes, summary = (
        tables[k] for k in ("spl_by_episode", "success_by_episode", "note_balanced_by_episode", "summary")
    )
    out = []
    for key in summary.index:
        s = summary.loc[key]
        out.append(
            {
                "agent": key[0],
                "regime": key[1],
                "mean steps by episode": steps[key],
                "SPL by episode": _series(spl.loc[key]),
                "success by episode": _series(success.loc[key]),
                "note_balanced by episode": _series(notes.loc[key]),
                "note_balanced (attainable)": f"{s['note_balanced']:.3f} ({s['note_attainable']:.3f})",
                "repair rate": s["repair_rate"],
                "hazard claims per episode start": s["hazard_claims"],
                "hazard claims acted on / hazard claims": s["acted_on_rate"],
                "acted on": hazards.loc[key, "acted_on"],
            }
        )
    return pd.DataFrame(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lifetimes", type=int, default=10)
    parser.add_argument("--log-dir", default="logs/lifelong-tokens")
    parser.add_argument("--parts", default="agents,trust,settings,prefix")
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
    if "trust" in parts:
        trusting = {}
        for agent in TRUST_AGENTS:
            for regime in REGIMES[1:]:
                trusting[(agent, regime)] = run(log_dir, agent, {"regime": regime, **TRUST_ARGS}, n)
        print(f"\nHazard claims acted on: {TRUST_ARGS}, {n} lifetimes per regime\n")
        print(plain_markdown(score_table(trusting)))
    if "settings" in parts:
        print(f"\n`diligent` on L1, {n} lifetimes\n")
        print(COST_HEADER.format(what="setting"))
        for label, extra in SETTINGS:
            task_args = {"regime": "L1", **extra}
            print(cost_line(label, cost_rows(run(log_dir, "diligent", task_args, n), task_args)))
    if "prefix" in parts:
        print("\nPrefix share within an episode (requests after an episode's first)\n")
        print("| runs | request | share | requests | mean | median | min | requests >= 0.9 |")
        print("|---|---|---|---|---|---|---|---|")
        groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for (agent, _), log in logs.items():
            for key, values in prefix_shares(log).items():
                groups[f"`{agent}`, L0-L3, whole-episode history"][key] += values
        history = run(log_dir, "diligent", {"regime": "L1", "history": 4}, n)
        groups["`diligent`, L1, history=4"] = prefix_shares(history)
        for label, shares in groups.items():
            for key, values in sorted(shares.items()):
                if key.startswith("position"):
                    continue
                kind, share = key.split(": ")
                print(
                    f"| {label} | {kind} | {share} | {len(values)} | {statistics.mean(values):.1%} "
                    f"| {statistics.median(values):.1%} | {min(values):.1%} "
                    f"| {sum(v >= 0.9 for v in values) / len(values):.1%} |"
                )
        print("\nReuse share of a step's request by its position in the episode (1: the move after the first view)\n")
        print("| runs | " + " | ".join(f"{k}" for k in range(1, LAST_POSITION)) + f" | {LAST_POSITION}+ |")
        print("|---|" + "---|" * LAST_POSITION)
        for label, shares in groups.items():
            cells = [shares.get(f"position {k}", []) for k in range(1, LAST_POSITION + 1)]
            print(f"| {label} | " + " | ".join(f"{statistics.mean(v):.1%}" if v else "-" for v in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
