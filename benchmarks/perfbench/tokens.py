"""Tokens: per navigation decision and per episode by strategy, per detection
instance by batch size, and how an episode's tokens grow with its steps.

- Per decision and per episode, by strategy (prompt and completion, navigator
  and auditor), from each model event's usage; checked against the score's
  own token count.
- Per detection instance at B = 1, 10, 20, 64 (L1 text), beside the paper's
  GPT-4o figures (``spatialstale_evals.paper.DETECTION_COST``): counted, not
  run, by the matrix's cost model (``runs.cost.estimate_cost("detect", ...)``: every audit
  prompt the detect task builds, the reply as the scripted ``observer`` writes
  it, which is what a run with that agent logs).
- A least-squares fit tokens = a * steps + b over episodes at ``history=0``
  (agents observer, memory and random, so episode lengths vary from 1 to 50
  steps), and how much a decision's prompt changes within an episode.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog

from spatialstale_evals import paper
from spatialstale_evals.navigate import navigate
from spatialstale_evals.navigation.strategies import STRATEGIES as REGISTERED
from spatialstale_evals.runs.cost import estimate_cost
from spatialstale_evals.world import dataset

from .runner import linear_fit, mean, model_events, run_eval, usage_of

#: The paper's strategies (the registry's, in its order).
STRATEGIES = tuple(name for name, policy in REGISTERED.items() if policy.paper)
#: The strategies the linear fit is made for, and the agents (besides observer)
#: whose episodes it pools, for a spread of episode lengths.
FIT_STRATEGIES = ("no_memory", "no_filter", "omcd")
FIT_AGENTS = ("memory", "random")
BATCH_SIZES = (1, 10, 20, 64)


def episode_tokens(log: EvalLog) -> list[dict[str, Any]]:
    """One row per episode: its steps and tokens by role (navigator calls
    offer tools, audit calls do not). The row total must equal the score's
    ``tokens``, or the two ways of counting disagree."""
    rows = []
    for s in log.samples or []:
        events = model_events(s)
        nav = [usage_of(e) for e in events if e.tools]
        aud = [usage_of(e) for e in events if not e.tools]
        value = s.scores["navigation_scorer"].metadata["counts"]
        row = {
            "steps": value["steps"],
            "nav_calls": len(nav),
            "nav_in": sum(u[0] for u in nav),
            "nav_out": sum(u[1] for u in nav),
            "audit_calls": len(aud),
            "audit_in": sum(u[0] for u in aud),
            "audit_out": sum(u[1] for u in aud),
            "score_tokens": value["tokens"],
            "decision_in_min": min((u[0] for u in nav), default=0),
            "decision_in_max": max((u[0] for u in nav), default=0),
        }
        row["total"] = row["nav_in"] + row["nav_out"] + row["audit_in"] + row["audit_out"]
        if row["total"] != row["score_tokens"]:
            raise RuntimeError(f"model-event usage {row['total']} != score tokens {row['score_tokens']}")
        rows.append(row)
    return rows


def strategy_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Means per episode, and per decision over all decisions pooled."""
    decisions = sum(r["nav_calls"] for r in rows)
    return {
        "episodes": len(rows),
        "steps": mean([r["steps"] for r in rows]),
        "decision_in": sum(r["nav_in"] for r in rows) / decisions,
        "decision_out": sum(r["nav_out"] for r in rows) / decisions,
        "nav_in": mean([r["nav_in"] for r in rows]),
        "nav_out": mean([r["nav_out"] for r in rows]),
        "audit_calls": mean([r["audit_calls"] for r in rows]),
        "audit_in": mean([r["audit_in"] for r in rows]),
        "audit_out": mean([r["audit_out"] for r in rows]),
        "total": mean([r["total"] for r in rows]),
    }


def episodes_of(agent: str, strategy: str, modality: str, limit: int, log_dir: Path) -> list[dict[str, Any]]:
    task = navigate(regime="L2", strategy=strategy, modality=modality, epochs=1)
    return episode_tokens(run_eval(task, f"spatialstale/{agent}", log_dir, limit=limit).log)


def linear_row(strategy: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The fit over ``rows`` and the spread of a decision's prompt tokens:
    across episodes (their means) and within one episode (max - min)."""
    fit = linear_fit([r["steps"] for r in rows], [r["total"] for r in rows])
    played = [r for r in rows if r["nav_calls"]]
    per_step = [r["nav_in"] / r["nav_calls"] for r in played]
    spread = [r["decision_in_max"] - r["decision_in_min"] for r in played]
    return {
        "strategy": strategy,
        "episodes": len(rows),
        "steps_min": min(r["steps"] for r in rows),
        "steps_max": max(r["steps"] for r in rows),
        **fit,
        "prompt_per_step_min": min(per_step),
        "prompt_per_step_max": max(per_step),
        "within_episode_spread_max": max(spread),
        "within_episode_spread_pct_max": max(s / p * 100 for s, p in zip(spread, per_step)),
    }


def measure_tokens(limit: int, modalities: list[str], tmp: Path) -> dict[str, Any]:
    """Observer episodes by strategy and modality; the text ones, with the
    other agents' episodes, feed the linear fit."""
    by_strategy = []
    fit_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for modality in modalities:
        for strategy in STRATEGIES:
            rows = episodes_of("observer", strategy, modality, limit, tmp / f"tokens-{strategy}-{modality}")
            by_strategy.append({"strategy": strategy, "modality": modality, **strategy_summary(rows)})
            if modality == "text":
                fit_rows[strategy] += rows
    for agent in FIT_AGENTS:
        for strategy in FIT_STRATEGIES:
            fit_rows[strategy] += episodes_of(agent, strategy, "text", limit, tmp / f"linear-{agent}-{strategy}")
    linear = [linear_row(strategy, fit_rows[strategy]) for strategy in FIT_STRATEGIES]
    return {"by_strategy": by_strategy, "linear": linear}


def measure_detect(limit: int) -> list[dict[str, Any]]:
    """Calls and tokens per detection instance (L1 text, the first ``limit``
    canonical instances) by B, from the matrix's cost model."""
    instances = dataset.load(None, "L1")[:limit]
    rows = []
    for b in BATCH_SIZES:
        cost = estimate_cost("detect", instances, regime="L1", modality="text", batch_size=b)[1]
        paper_calls, paper_tokens = paper.DETECTION_COST.get(b, (None, None))
        n = len(instances)
        rows.append(
            {
                "batch_size": b,
                "instances": n,
                "calls": cost.calls / n,
                "input": cost.input_tokens / n,
                "output": cost.output_tokens / n,
                "total": (cost.input_tokens + cost.output_tokens) / n,
                "paper_calls": paper_calls,
                "paper_tokens": paper_tokens,
            }
        )
    return rows
