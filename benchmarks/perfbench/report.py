"""The Markdown report of a full run: a summary against the targets, then one
table (or a few) per measurement, from the results dict ``perf.py`` builds.

Each ``*_section`` function renders one part and returns its lines;
``render_report`` joins them. Only public keys are read, so the report can
be rendered again from a saved ``perf.json`` (whose private ``_`` keys, the
overhead measurement's inputs to its profile runs, are stripped).
"""

from __future__ import annotations

from typing import Any

from .runner import KB, median

#: The targets the summary checks: overhead ratio (text), and .eval KB per
#: 50-step episode in text and image mode.
TARGET_RATIO = 1.2  # text and image
TARGET_TEXT_KB = 50
TARGET_IMAGE_KB = 500


def k(x: float) -> str:
    """Thousands as ``12.3k``; smaller numbers as integers."""
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def table(header: str) -> list[str]:
    """A table's header line and its separator."""
    return [header, "|" + "---|" * (header.count("|") - 1)]


def header_lines(res: dict[str, Any]) -> list[str]:
    m = res["machine"]
    return [
        f"## SpatialSTALE performance ({'quick' if res['quick'] else 'full'} run)\n",
        f"Machine: {m['cpu'] or 'unknown CPU'}, {m['cores']} cores, {m['platform']}, Python {m['python']}, "
        f"inspect-ai {m['inspect_ai']}; load average before {m['load_before'][0]:.2f}, "
        f"after {m['load_after'][0]:.2f}; total {res['wall_s'] / 60:.1f} min.\n",
    ]


def overhead_figure(o: dict[str, Any]) -> str:
    """The median ratio, its spread, the CPU-time ratio and, when Inspect's
    distribution lookup was slow (a checkout that is not the installed
    package), the ratio without it."""
    lookup = median(o.get("lookup_s", []))
    without = f"; {o['ratio_excluding_lookup']:.2f} without the slow package lookup" if lookup > 0.05 else ""
    realtime = "; no realtime buffer" if o.get("eval_options", {}).get("log_realtime") is False else ""
    return (
        f"{o['ratio']:.2f} (runs {min(o['ratios']):.2f}-{max(o['ratios']):.2f}; "
        f"CPU {o['cpu_ratio']:.2f}{without}{realtime}; "
        f"{o['navigate_ms_per_call']:.1f} vs {o['bare_ms_per_call']:.1f} ms/call; against the loop keeping its "
        f"messages {o['ratio_vs_kept']:.2f}, runs {min(o['ratios_vs_kept']):.2f}-{max(o['ratios_vs_kept']):.2f})"
    )


def summary_overhead(res: dict[str, Any]) -> list[str]:
    quick = " (quick run: too short to judge; run without --quick)" if res["quick"] else ""
    out = []
    for o in res["overhead"]:
        out.append(
            f"| harness overhead ratio, {o['modality']} (navigate / bare Inspect loop, {o['generate_calls']} calls) "
            f"| {overhead_figure(o)} | <= {TARGET_RATIO} | {yes(o['ratio'] <= TARGET_RATIO)}{quick} |"
        )
    return out


def summary_tokens(res: dict[str, Any]) -> list[str]:
    nf = next(r for r in res["tokens"]["by_strategy"] if r["strategy"] == "no_filter" and r["modality"] == "text")
    det = {r["batch_size"]: r for r in res["detect"]}
    lin = {r["strategy"]: r for r in res["tokens"]["linear"]}
    spread = max(r["within_episode_spread_pct_max"] for r in lin.values())
    return [
        f"| tokens per navigation decision (L2 text, no_filter) | {nf['decision_in']:.0f} prompt + "
        f"{nf['decision_out']:.0f} completion | - | - |",
        "| tokens per detection instance, B = 1 / 10 / 20 (paper 18.7k / 3.1k / 2.2k) | "
        + " / ".join(k(det[b]["total"]) for b in (1, 10, 20))
        + " | - | - |",
        "| tokens per episode linear in steps (history=0): fit R^2 no_memory / no_filter / omcd; "
        "largest change of a decision's prompt within an episode | "
        + " / ".join(f"{lin[s]['r2']:.4f}" for s in ("no_memory", "no_filter", "omcd"))
        + f"; {spread:.1f} % | linear | "
        + yes(all(r["within_episode_spread_pct_max"] <= 1.0 for r in lin.values()))
        + " |",
    ]


def summary_memory_logs(res: dict[str, Any]) -> list[str]:
    mem = res["memory"]["full"]
    logs = {(r["agent"], r["modality"]): r for r in res["logs"]["runs"]}
    wt, wi = logs[("perfbench/wander", "text")], logs[("perfbench/wander", "image")]
    oi = logs[("spatialstale/observer", "image")]
    out = [
        f"| peak RSS, 50-seed text navigate ({mem['epochs']} epoch{'s' if mem['epochs'] > 1 else ''}, "
        f"{mem['episodes']} episodes) | {mem['peak_rss_mb']:.0f} MB "
        f"(one episode: {res['memory']['single_episode']['peak_rss_mb']:.0f} MB) | - | - |",
        f"| .eval bytes per 50-step episode, text | {wt['bytes_per_episode'] / KB:.1f} KB "
        f"| <= {TARGET_TEXT_KB} KB | {yes(wt['bytes_per_episode'] / KB <= TARGET_TEXT_KB)} |",
        f"| .eval bytes per 50-step episode, image | {wi['bytes_per_episode'] / KB:.1f} KB "
        f"| <= {TARGET_IMAGE_KB} KB | {yes(wi['bytes_per_episode'] / KB <= TARGET_IMAGE_KB)} |",
        f"| read_eval_log, 50-seed image log (observer, {oi['file_bytes'] / 1e6:.1f} MB) "
        f"| {oi['read_eval_log_s']:.2f} s | - | - |",
    ]
    if "read_eval_log_s" in wi:
        out.append(
            f"| read_eval_log, 50-seed image log (50-step episodes, {wi['file_bytes'] / 1e6:.1f} MB) "
            f"| {wi['read_eval_log_s']:.2f} s | - | - |"
        )
    return out


def summary_section(res: dict[str, Any]) -> list[str]:
    return [
        "### Summary\n",
        *table("| figure | value | target | met |"),
        *summary_overhead(res),
        *summary_tokens(res),
        *summary_memory_logs(res),
        "",
    ]


def overhead_section(res: dict[str, Any]) -> list[str]:
    out = ["### Harness overhead\n"]
    out += table(
        "| modality | episodes | generate calls | prompt tokens / call (navigate, bare) | navigate s | bare s "
        "| ratio (median; all) | CPU-time ratio (median; all) | agent ms / call (replay; observer) "
        "| ratio without agent time | package lookup s (ratio without it) | log events / call (navigate, bare) |"
    )
    for o in res["overhead"]:
        lookup = median(o.get("lookup_s", []))
        out.append(
            f"| {o['modality']} | {o['episodes']} | {o['generate_calls']} "
            f"| {o['prompt_tokens_navigate']:.0f}, {o['prompt_tokens_bare']:.0f} "
            f"| {median(o['navigate_s']):.2f} | {median(o['bare_s']):.2f} "
            f"| {o['ratio']:.2f} ({', '.join(f'{r:.2f}' for r in o['ratios'])}) "
            f"| {o['cpu_ratio']:.2f} ({', '.join(f'{r:.2f}' for r in o['cpu_ratios'])}) "
            f"| {o['policy_ms_per_call']:.3f}; {o['observer_policy_ms_per_call']:.2f} "
            f"| {o['ratio_excluding_policy']:.2f} "
            f"| {lookup:.2f} ({o.get('ratio_excluding_lookup', o['ratio']):.2f}) "
            f"| {o['events_per_call_navigate']:.1f}, {o['events_per_call_bare']:.1f} |"
        )
    out.append("")
    for p in res["profile"]:
        n = next(o["generate_calls"] for o in res["overhead"] if o["modality"] == p["modality"])
        out += profile_lines(p, n)
    return out


def profile_lines(p: dict[str, Any], calls: int) -> list[str]:
    """One modality's cProfile: key calls, areas, this package's top functions."""
    out = [
        f"cProfile, {p['modality']} (profiled totals: navigate {p['navigate_total_s']:.2f} s, "
        f"bare {p['bare_total_s']:.2f} s): cumulative time of the main calls (they nest), then own time "
        "by code area, largest excess over the bare loop first:\n"
    ]
    out += table("| call (cumulative, outermost) | navigate s | bare s | navigate ms / decision |")
    for c in p["key_calls"]:
        out.append(
            f"| {c['call']} | {c['navigate_s']:.3f} | {c['bare_s']:.3f} | {c['navigate_s'] / calls * 1000:.2f} |"
        )
    out += ["", *table("| area | navigate s | bare s | extra s |")]
    for a in p["areas"]:
        out.append(f"| {a['area']} | {a['navigate_s']:.3f} | {a['bare_s']:.3f} | {a['extra_s']:+.3f} |")
    out += ["", "Top functions of this package in the navigate run (own time, cumulative):\n"]
    out += table("| function | tottime s | cumtime s |")
    for f in p["own_functions"][:8]:
        out.append(f"| {f['function']} | {f['tottime_s']:.3f} | {f['cumtime_s']:.3f} |")
    out.append("")
    return out


def tokens_section(res: dict[str, Any]) -> list[str]:
    out = ["### Tokens per navigation decision and per episode (L2, observer)\n"]
    out += table(
        "| strategy | modality | episodes | steps | prompt / decision | completion / decision "
        "| navigator prompt / episode | navigator completion / episode | audit calls | audit prompt / episode "
        "| audit completion / episode | total / episode |"
    )
    for r in res["tokens"]["by_strategy"]:
        out.append(
            f"| {r['strategy']} | {r['modality']} | {r['episodes']} | {r['steps']:.1f} | {r['decision_in']:.0f} "
            f"| {r['decision_out']:.0f} | {k(r['nav_in'])} | {r['nav_out']:.0f} | {r['audit_calls']:.1f} "
            f"| {k(r['audit_in'])} | {k(r['audit_out'])} | {k(r['total'])} |"
        )
    out += ["", "Tokens per episode = a * steps + b at history=0 (episodes of observer, memory and random, L2 text):\n"]
    out += table(
        "| strategy | episodes | steps range | a (tokens/step) | b | R^2 | prompt tokens / decision, episode means "
        "(min-max) | largest spread within one episode |"
    )
    for r in res["tokens"]["linear"]:
        out.append(
            f"| {r['strategy']} | {r['episodes']} | {r['steps_min']}-{r['steps_max']} | {r['a']:.1f} | {r['b']:.0f} "
            f"| {r['r2']:.5f} | {r['prompt_per_step_min']:.0f}-{r['prompt_per_step_max']:.0f} "
            f"| {r['within_episode_spread_max']} tokens ({r['within_episode_spread_pct_max']:.1f} %) |"
        )
    out += [
        "",
        "A decision's prompt is constant within an episode (last column: only the step counter's digits change), "
        "so an episode's tokens are exactly linear in its steps. The pooled omcd fit is looser because each "
        "episode keeps the view its own audit left (random's coin-flip audit removes about half the entries), "
        "so slopes differ between episodes; its intercept is the audit's tokens.\n",
    ]
    return out


def detect_section(res: dict[str, Any]) -> list[str]:
    out = ["### Tokens per detection instance (L1, text, observer; counted by runs/cost.py)\n"]
    out += table(
        "| B | instances | calls / instance | prompt / instance | completion / instance | total / instance "
        "| paper calls | paper tokens |"
    )
    for r in res["detect"]:
        out.append(
            f"| {r['batch_size']} | {r['instances']} | {r['calls']:.1f} | {k(r['input'])} | {k(r['output'])} "
            f"| {k(r['total'])} | {r['paper_calls'] or '-'} "
            f"| {k(r['paper_tokens']) if r['paper_tokens'] else '-'} |"
        )
    out.append("")
    return out


def memory_section(res: dict[str, Any]) -> list[str]:
    one, mem = res["memory"]["single_episode"], res["memory"]["full"]
    return [
        "### Memory\n",
        *table("| run | episodes | wall s | peak RSS |"),
        f"| one episode (import + Inspect + 1 sample) | {one['episodes']} | {one['seconds']:.1f} "
        f"| {one['peak_rss_mb']:.0f} MB |",
        f"| 50 seeds x {mem['epochs']} epochs, L2 text omcd, observer | {mem['episodes']} "
        f"| {mem['seconds']:.1f} | {mem['peak_rss_mb']:.0f} MB |",
        "",
    ]


def logs_section(res: dict[str, Any]) -> list[str]:
    out = ["### Logs (L2, no_filter)\n"]
    out += table(
        "| agent | modality | episodes | steps | .eval bytes / episode | sample entry (compressed) "
        "| bytes / step | images stored / episode | distinct observations / episode | read_eval_log |"
    )
    for r in res["logs"]["runs"]:
        read = f"{r['read_eval_log_s']:.2f} s" if "read_eval_log_s" in r else "-"
        imgs = f"{r['image_attachments']:.1f}" if r["modality"] == "image" else "-"
        out.append(
            f"| {r['agent']} | {r['modality']} | {r['episodes']} | {r['steps']:.1f} "
            f"| {r['bytes_per_episode'] / KB:.1f} KB | {r['sample_entry_bytes'] / KB:.1f} KB "
            f"| {r['bytes_per_step']:.0f} | {imgs} | {r['distinct_observations']:.1f} | {read} |"
        )
    out.append("")
    return out


def scaling_section(res: dict[str, Any]) -> list[str]:
    out = ["### Scaling (L2 navigate no_filter and L1 detect B=10, observer, first seed)\n"]
    out += table(
        "| grid | entries | budget | generate ms / instance | render_png ms (new grid / next step) | PNG KB "
        "| nav prompt tokens, text "
        "| nav prompt tokens, image | step prompt build ms, text | step prompt build ms, image "
        "| audit call prompt (B=10) | audit calls | detect tokens / instance |"
    )
    for r in res["scaling"]:
        out.append(
            f"| {r['size']} | {r['entries']} | {r['max_steps']} | {r['generate_ms_per_instance']:.1f} "
            f"| {r['render_cold_ms']:.1f} / {r['render_ms']:.1f} | {r['png_kb']:.1f} "
            f"| {k(r['nav_prompt_text'])} | {k(r['nav_prompt_image'])} "
            f"| {r['prompt_build_ms_text']:.2f} | {r['prompt_build_ms_image']:.1f} "
            f"| {k(r['audit_prompt_b10'])} | {r['audit_calls']} | {k(r['detect_tokens_per_instance'])} |"
        )
    out += [
        "",
        "Image tokens are the scripted provider's flat 255 per image; a provider that bills by 512 px "
        "tiles (OpenAI high detail: 85 + 170 per tile after scaling the short side to 768 px) would "
        "charge 255 at 8x8 and 765 at 16x16 and 32x32.",
    ]
    return out


SECTIONS = (
    summary_section,
    overhead_section,
    tokens_section,
    detect_section,
    memory_section,
    logs_section,
    scaling_section,
)


def render_report(res: dict[str, Any]) -> str:
    """The whole report; ``res`` must hold every measurement."""
    out = header_lines(res)
    for section in SECTIONS:
        out += section(res)
    return "\n".join(out)
