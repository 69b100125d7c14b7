"""Where the overhead goes: a cProfile of one navigate run and one bare run.

Part of the overhead measurement (it replays that measurement's moves and
sizes), kept apart because attributing profiler time to code areas is a job
of its own. The figures are profiled times, slower than the timed runs; they
are for comparing areas, not for the ratio. The profiled runs are not under
the policy timer, so its wrapper adds no frames to them.
"""

from __future__ import annotations

import cProfile
import gc
import pstats
from collections import defaultdict
from pathlib import Path
from typing import Any

from . import providers
from .overhead import bare_task, clear_render_caches, nav_task
from .runner import run_eval

#: (path suffix, function name) -> label: where a navigate decision's time goes.
KEY_CALLS = {
    ("spatialstale_evals/navigation/loop.py", "solve"): "navigation loop (everything in the solver)",
    ("inspect_ai/model/_model.py", "generate"): "Inspect Model.generate (incl. provider)",
    ("spatialstale_evals/scripted/api.py", "generate"): "scripted provider generate",
    ("benchmarks/perfbench/providers.py", "generate"): "perfbench provider generate",
    ("inspect_ai/model/_call_tools.py", "execute_tools"): "Inspect execute_tools (move tool)",
    ("spatialstale_evals/navigation/loop.py", "step_message"): "prompt building (step_message)",
    ("spatialstale_evals/world/render.py", "render_png"): "render_png",
    ("spatialstale_evals/navigation/episode.py", "step"): "world step (Episode.step)",
    ("spatialstale_evals/harness/parsing.py", "parse_move"): "move parsing",
    ("inspect_ai/_eval/task/log.py", "log_sample_event"): "Inspect per-event sample buffer",
    ("inspect_ai/_eval/task/run.py", "log_sample"): "Inspect sample logging",
}


def area_of(filename: str) -> str:
    """The code area a profiled function's file belongs to: a module of this
    package, a two-level inspect_ai subpackage, a third-party distribution,
    a stdlib module, or builtins."""
    path = filename.replace("\\", "/")
    if "/spatialstale_evals/" in path:
        rest = path.split("/spatialstale_evals/", 1)[1]
        return "spatialstale_evals/" + rest.removesuffix(".py")
    if "/inspect_ai/" in path:
        parts = path.split("/inspect_ai/", 1)[1].split("/")
        return "inspect_ai/" + "/".join(p.removesuffix(".py") for p in parts[:2])
    if path.startswith("~") or path.startswith("<"):
        return "builtins"
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1].split("/")[0].removesuffix(".py")
    if "/lib/python" in path:
        return "stdlib/" + path.split("/lib/python", 1)[1].split("/")[1].removesuffix(".py")
    return path


def profile_areas(prof: cProfile.Profile) -> tuple[dict[str, float], list[tuple[str, float, float]]]:
    """Own time by code area (builtins by name), and every function as
    (label, own time, cumulative time), largest own time first."""
    stats = pstats.Stats(prof)
    areas: dict[str, float] = defaultdict(float)
    funcs = []
    for (filename, line, name), (_, _, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        area = area_of(filename)
        if area == "builtins":
            area = "builtins: " + name.split(" of ")[0].strip("<>{}").replace("built-in method ", "")[:40]
        areas[area] += tt
        funcs.append((f"{area_of(filename)}:{line}({name})", tt, ct))
    return dict(areas), sorted(funcs, key=lambda f: -f[1])


def key_calls(prof: cProfile.Profile) -> dict[str, float]:
    """Cumulative time of each ``KEY_CALLS`` function present in the profile."""
    stats = pstats.Stats(prof)
    out: dict[str, float] = defaultdict(float)
    for (filename, _, name), (_, _, _, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        path = filename.replace("\\", "/")
        for (suffix, func), label in KEY_CALLS.items():
            if name == func and path.endswith(suffix):
                out[label] = max(out[label], ct)  # nested same-name helpers: keep the outermost
    return dict(out)


def profiled(task: Any, model: str, log_dir: Path, **kwargs: Any) -> cProfile.Profile:
    """One run under cProfile, started on a clean heap."""
    gc.collect()
    prof = cProfile.Profile()
    prof.enable()
    run_eval(task, model, log_dir, collect=False, **kwargs)
    prof.disable()
    return prof


def profile_overhead(result: dict[str, Any], limit: int, tmp: Path, top: int = 12) -> dict[str, Any]:
    """Profile one run of each side of ``result`` (a ``measure_overhead``
    result); key calls, areas by excess over the bare loop, top functions."""
    modality = result["modality"]
    system_chars, user_chars, images = result["_sizes"]
    clear_render_caches()
    providers.use_replay(result["_moves"])
    options = result["eval_options"]
    prof_nav = profiled(nav_task(modality), "perfbench/replay", tmp / f"profile-{modality}-nav", limit=limit, **options)
    bare = bare_task(result["_calls"], system_chars, user_chars, images)
    prof_bare = profiled(bare, "perfbench/fixed", tmp / f"profile-{modality}-bare", **options)
    nav_keys, bare_keys = key_calls(prof_nav), key_calls(prof_bare)
    nav_areas, nav_funcs = profile_areas(prof_nav)
    bare_areas, _ = profile_areas(prof_bare)
    rows = [(a, nav_areas.get(a, 0.0), bare_areas.get(a, 0.0)) for a in set(nav_areas) | set(bare_areas)]
    rows.sort(key=lambda r: -(r[1] - r[2]))
    return {
        "modality": modality,
        "navigate_total_s": sum(nav_areas.values()),
        "bare_total_s": sum(bare_areas.values()),
        "key_calls": [
            {"call": label, "navigate_s": nav_keys.get(label, 0.0), "bare_s": bare_keys.get(label, 0.0)}
            for label in KEY_CALLS.values()
            if label in nav_keys or label in bare_keys
        ],
        "areas": [{"area": a, "navigate_s": n, "bare_s": b, "extra_s": n - b} for a, n, b in rows[:top]],
        "functions": [{"function": f, "tottime_s": tt, "cumtime_s": ct} for f, tt, ct in nav_funcs[:top]],
        "own_functions": [
            {"function": f, "tottime_s": tt, "cumtime_s": ct}
            for f, tt, ct in nav_funcs
            if f.startswith("spatialstale_evals/")
        ][:top],
    }
