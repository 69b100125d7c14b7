"""The report: from a folder of logs to a Markdown file, PNG plots and the main
tables on the terminal.

    from spatialstale_evals.analysis.report import build_report
    report = build_report("logs/matrix", "report/")   # writes report/REPORT.md + PNGs
    report.tables["navigation"]                       # the numbers as DataFrames

or ``spatialstale report LOG_DIR --out DIR``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.analysis import gap, inference, plots, stale, trust
from spatialstale_evals.analysis import logs as logs_mod
from spatialstale_evals.analysis.families import extra_sections, plain_markdown
from spatialstale_evals.analysis.layout import Spec, main_tables, missing, specs, titles
from spatialstale_evals.analysis.notes import notes
from spatialstale_evals.harness.family import TaskFamily, families

REPORT_FILE = "REPORT.md"
#: The sections of the fixed layout that read several families, after the
#: families' own (``TaskFamily.report_sections``).
SHARED_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Trust gap", ("acted_on",)),  # every family's trust_gap rows
    ("Statistics", ("wilcoxon", "correlation", "path_recall")),
)


def report_sections() -> list[tuple[str, tuple[str, ...]]]:
    """The fixed layout: the families' sections in registration order, then the
    shared ones; tables under one heading are one section, where it first appears."""
    merged: dict[str, tuple[str, ...]] = {}
    own = [section for family in families().values() for section in family.report_sections]
    for heading, names in [*own, *SHARED_SECTIONS]:
        merged[heading] = merged.get(heading, ()) + tuple(names)
    return list(merged.items())


def markdown_table(df: pd.DataFrame, spec: Spec) -> str:
    if df is None or df.empty:
        return "_(no data)_"
    cols = [c for c in spec if not isinstance(c[0], str) or c[0] in df.columns]
    # Hide columns that are empty everywhere (e.g. "config" when all runs use the
    # paper's protocol, paper columns when no model matches, edit columns when no
    # run proposed edits).
    rendered = []
    for col, header, fmt in cols:
        values = [fmt(col(row)) if callable(col) else fmt(row[col]) for _, row in df.iterrows()]
        if header in ("config", "note") or header.startswith(("paper", "edit")):
            if all(v in ("", "-") for v in values):
                continue
        rendered.append((header, values))
    lines = ["| " + " | ".join(h for h, _ in rendered) + " |", "|" + "---|" * len(rendered)]
    for i in range(len(df)):
        lines.append("| " + " | ".join(v[i].replace("|", "/") for _, v in rendered) + " |")
    return "\n".join(lines)


@dataclass
class Report:
    out_dir: Path
    markdown: Path
    plots: list[Path]
    tables: dict[str, pd.DataFrame]
    logset: logs_mod.LogSet
    seconds: float
    rendered: dict[str, str] = field(default_factory=dict)

    def terminal_text(self, names: Sequence[str] | None = None) -> str:
        """The main tables (``layout.main_tables``) as Markdown; the paired tests
        on success only (the Markdown report also has them on death)."""
        parts, title = [], titles()
        for name in main_tables() if names is None else names:
            body = self.rendered[name]
            df = self.tables[name]
            if name == "wilcoxon" and not df.empty:
                body = markdown_table(df[df["metric"] == "success"], specs()[name])
            parts.append(f"## {title[name]}\n\n{body}\n")
        return "\n".join(parts)


def _inputs_table(evals: pd.DataFrame) -> pd.DataFrame:
    if evals.empty:
        return pd.DataFrame()
    rows = []
    for r in evals.itertuples():
        args = json.loads(r.task_args)
        family = families()[r.family]
        args = {**args, "strategy": logs_mod.arm(args, r.family)} if family.arm_args and "strategy" in args else args
        cell = " / ".join(str(args.get(k, "")) for k in family.dimensions)
        rows.append(
            {
                "file": Path(r.log).name,
                "family": r.family,
                "model": r.model,
                "cell": cell,
                "config": r.config,
                "status": r.status + (f" ({r.unused})" if r.unused else ""),
                "epochs": r.epochs,
                "used_samples": r.used_samples,
            }
        )
    rank = {family: i for i, family in enumerate(families())}
    return (
        pd.DataFrame(rows)
        .sort_values(
            ["family", "model", "cell", "used_samples"], key=lambda s: s.map(rank) if s.name == "family" else s
        )
        .reset_index(drop=True)
    )


def family_layout_tables(logset: logs_mod.LogSet) -> dict[str, pd.DataFrame]:
    """Every family's tables of the fixed layout (``TaskFamily.layout_tables``),
    each built from the family's records and its tables built before it."""
    built: dict[str, pd.DataFrame] = {}
    for name, family in families().items():
        records = logset.records.get(name, pd.DataFrame())
        own: dict[str, pd.DataFrame] = {}
        for key, table in family.layout_tables.items():
            own[key] = table.build(records, own)
        built |= own
    return built


def compute_tables(
    logset: logs_mod.LogSet, alpha: float = paper.ALPHA, model_info: pd.DataFrame | None = None
) -> dict[str, pd.DataFrame]:
    own = family_layout_tables(logset)
    det, nav = logset.detect, logset.navigate
    tests = inference.wilcoxon_table(nav, alpha)
    return {
        **own,
        "wilcoxon": tests,
        "benefit": trust.benefit_table(own["navigation"], tests),
        "safety": trust.safety_table(own["navigation"], tests),
        "tax": gap.tax_table(nav, alpha, model_info),
        "acted_on": gap.acted_on_table(families(), logset.records),
        "stale_probe": stale.stale_probe_table(logset.stale, logset.probe),
        "correlation": inference.correlation_table(det, nav),
        "path_recall": inference.path_recall_table(det, nav),
        "inputs": _inputs_table(logset.evals),
        **{
            f"{name}:{key}": table
            for name, section in extra_sections(families(), logset.records)
            for key, (_, table) in section.items()
        },
    }


def render_markdown(
    report_tables: dict[str, pd.DataFrame],
    logset: logs_mod.LogSet,
    log_dir: str | Path,
    alpha: float,
    plot_files: list[Path],
) -> tuple[str, dict[str, str]]:
    rendered, spec, empty, title, note = {}, specs(), missing(), titles(), notes()
    for name, df in report_tables.items():
        if name in spec:
            rendered[name] = markdown_table(df, spec[name]) if not df.empty else f"_{empty[name]}_"
        else:  # a family's own section (``analysis/families.py``)
            rendered[name] = plain_markdown(df) if not df.empty else f"_No {name.split(':')[0]} logs._"
    evals = logset.evals
    used = int((evals["used_samples"] > 0).sum()) if not evals.empty else 0
    superseded = int((evals["unused"] == "superseded").sum()) if not evals.empty else 0
    lines = [
        "# SpatialSTALE report",
        "",
        f"Logs: `{log_dir}`; generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}. "
        f"{used} log(s) counted, {superseded} superseded, {len(evals) - used - superseded} with no usable sample, "
        f"{len(logset.skipped)} skipped; "
        + ", ".join(f"{len(logset.records.get(name, ()))} {name} {f.unit}(s)" for name, f in families().items())
        + ".",
        "",
        "Each (instance, epoch) of a configuration (task, model, model args and roles, task arguments other "
        "than epochs) is counted once, from the newest complete log that has it, else the newest partial one.",
        "",
    ]
    sections = report_sections()
    for heading, names in sections:
        lines += [f"## {heading}", ""]
        for name in names:
            lines += [f"### {title[name]}", "", rendered[name], ""]
            if name in note and not report_tables[name].empty:
                lines += [note[name].format(alpha=alpha, min_pairs=math.ceil(math.log2(2 / alpha))), ""]
    for family_name, section in extra_sections(families(), logset.records):
        lines += [f"## Task `{family_name}`", ""]
        for key, (heading, _) in section.items():
            lines += [f"### {heading}", "", rendered[f"{family_name}:{key}"], ""]
    lines += ["## Plots", ""]
    if plot_files:
        lines += [f"![{p.stem}]({p.name})" for p in plot_files] + [""]
    else:
        lines += ["_(no data to plot)_", ""]
    lines += [f"## {title['inputs']}", "", rendered["inputs"], ""]
    if logset.skipped:
        lines += ["### Skipped files", "", "| file | reason |", "|---|---|"]
        lines += [f"| {p} | {reason.replace('|', '/')} |" for p, reason in logset.skipped] + [""]
    return "\n".join(lines), rendered


def own_tables(family: TaskFamily, report_tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The family's report tables by key: those of its ``layout_tables`` in the
    fixed layout, and those of its own section (``<family>:<key>``) outside it."""
    prefix = f"{family.name}:"
    own = {key: report_tables[key] for key in family.layout_tables if key in report_tables}
    return own | {key[len(prefix) :]: t for key, t in report_tables.items() if key.startswith(prefix)}


def family_plots(
    chosen: Sequence[TaskFamily], report_tables: Mapping[str, pd.DataFrame], logset: logs_mod.LogSet, out_dir: Path
) -> list[Path]:
    """The plots of each family of ``chosen`` that has records and declares its own
    (``TaskFamily.plots``), from its report tables and records, in order."""
    written: list[Path] = []
    for family in chosen:
        records = logset.records.get(family.name, pd.DataFrame())
        if family.plots is not None and not records.empty:
            written += [Path(p) for p in family.plots(own_tables(family, report_tables), records, out_dir)]
    return written


def draw_plots(report_tables: Mapping[str, pd.DataFrame], logset: logs_mod.LogSet, out_dir: Path) -> list[Path]:
    """Every plot, in the order of the report's sections: the plots of the
    families in the fixed layout (registration order), the report's own
    (``analysis/plots.py``: the trust gap against capability), then the plots
    of the families with a section of their own."""
    registered = list(families().values())
    shared = plots.tax_vs_capability(report_tables["tax"], out_dir / plots.FILE)
    return [
        *family_plots([f for f in registered if f.in_report_layout], report_tables, logset, out_dir),
        *([shared] if shared is not None else []),
        *family_plots([f for f in registered if not f.in_report_layout], report_tables, logset, out_dir),
    ]


def build_report(
    log_dir: str | Path, out_dir: str | Path, alpha: float = paper.ALPHA, model_info: str | Path | None = None
) -> Report:
    """Read ``log_dir``, write ``out_dir/REPORT.md`` and the PNG plots, return
    the tables. ``model_info``: a CSV of a capability per model
    (``analysis.gap.read_model_info``) for the trust-gap view."""
    began = time.perf_counter()
    out_dir = Path(out_dir)
    info = gap.read_model_info(model_info) if model_info is not None else None
    logset = logs_mod.load(log_dir)
    report_tables = compute_tables(logset, alpha, info)
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_files = draw_plots(report_tables, logset, out_dir)
    text_md, rendered = render_markdown(report_tables, logset, log_dir, alpha, plot_files)
    markdown = out_dir / REPORT_FILE
    markdown.write_text(text_md, encoding="utf-8")
    return Report(
        out_dir=out_dir,
        markdown=markdown,
        plots=plot_files,
        tables=report_tables,
        logset=logset,
        seconds=time.perf_counter() - began,
        rendered=rendered,
    )
