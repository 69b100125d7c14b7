"""The scripted references of ``lifelong -T memory=shared`` and ``-T provenance=...``
(issue 39): figures per arm from the episode records of real runs.

- ``shared``: ``diligent`` and ``write_once`` as the walker and the scout
  (model role ``scout``, served by the scripted provider too), in both orders;
- ``provenance``: ``credulous`` under ``memory=notes`` with ``provenance``
  ``none``, ``stamped`` and ``resolved``.

Per run: SPL (mean over episodes), success and deaths (episodes), the hazard
claims acted on, ``note_balanced`` per author (pooled told / knowable, mean of
the two classes), and the stale propagation counts per (writer, reader).

    python benchmarks/lifelong_shared.py --regimes L1 L2 --lifetimes 10 --episodes 5 --log-dir logs/shared
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inspect_ai import eval as inspect_eval  # noqa: E402

import spatialstale_evals._registry  # noqa: E402, F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong  # noqa: E402
from spatialstale_evals.lifetime.provenance import PROVENANCES  # noqa: E402

#: The runs: label -> (walker model, scout model or None, task arguments).
RUNS: dict[str, tuple[str, str | None, dict[str, Any]]] = {
    "shared diligent->write_once": ("spatialstale/diligent", "spatialstale/write_once", {"memory": "shared"}),
    "shared write_once->diligent": ("spatialstale/write_once", "spatialstale/diligent", {"memory": "shared"}),
    **{f"credulous provenance={p}": ("spatialstale/credulous", None, {"provenance": p}) for p in PROVENANCES},
}


def figures(samples: list[Any]) -> dict[str, Any]:
    recs = [r for s in samples for r in s.scores["lifelong_scorer"].metadata["episodes"]]
    spl = [r["spl"] for r in recs if r["spl"] is not None]
    out: dict[str, Any] = {
        "episodes": len(recs),
        "spl": sum(spl) / len(spl) if spl else float("nan"),
        "success": sum(r["outcome"] == "success" for r in recs),
        "deaths": sum(r["outcome"] == "death" for r in recs),
        "hazard_acted_on": sum(bool(r["hazard_acted_on"]) for r in recs),
    }
    told: dict[str, dict[str, list[int]]] = {}
    prop: dict[str, dict[str, int]] = {}
    for r in recs:
        shared = r.get("shared")
        parts = shared["by_author"] if shared else {"walker": {"knowable": r["knowable"]}}
        for author, part in parts.items():
            k = part["knowable"]
            for c in ("safe", "hole"):
                pair = told.setdefault(author, {}).setdefault(c, [0, 0])
                pair[0] += k[f"told_{c}"]
                pair[1] += k[f"knowable_{c}"]
        for writer, counts in (shared or {}).get("propagation", {}).items():
            row = prop.setdefault(f"{writer}->{shared['author']}", {})
            for key, v in counts.items():
                row[key] = row.get(key, 0) + v
    out["note_balanced"] = {
        a: round(sum(t / n for t, n in cls.values() if n) / max(1, sum(1 for _, n in cls.values() if n)), 3)
        for a, cls in told.items()
    }
    out["propagation"] = prop
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--regimes", nargs="+", default=["L1", "L2"])
    parser.add_argument("--lifetimes", type=int, default=10)
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--log-dir", default="logs/lifelong_shared")
    args = parser.parse_args(argv)
    rows = []
    for regime in args.regimes:
        for label in args.runs:
            walker, scout, task_args = RUNS[label]
            (log,) = inspect_eval(
                lifelong(regime=regime, episodes=args.episodes, **task_args), model=walker,
                model_roles={"scout": scout} if scout else None, limit=args.lifetimes, display="none",
                log_dir=args.log_dir,
            )  # fmt: skip
            if log.status != "success" or not log.samples:
                print(f"{regime} {label}: {log.status}", file=sys.stderr)
                return 1
            f = figures(log.samples)
            print(f"{regime} | {label} | {f}", file=sys.stderr, flush=True)
            prop = "; ".join(
                f"{pair}: {c['stale_read']}/{c['read']} stale, acted on {c['acted_on']} "
                f"({c['hazard_deaths']} deaths, {c['detours']} detours), repaired {c['repaired']}"
                for pair, c in sorted(f["propagation"].items())
            )
            balanced = ", ".join(f"{a} {v}" for a, v in sorted(f["note_balanced"].items()))
            rows.append(
                f"| {regime} | {label} | {f['episodes']} | {f['spl']:.3f} | {f['success']} | {f['deaths']} "
                f"| {f['hazard_acted_on']} | {balanced} | {prop or '-'} |"
            )
    print(
        "| regime | run | episodes | spl | success | deaths | hazard claims acted on | note_balanced by author "
        "| stale propagation (writer->reader) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
