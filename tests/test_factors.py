"""The factorial knobs (specification.md#how-memory-is-written-and-framed and
#how-the-grid-is-drawn): how memory is written and framed, the distractor
notes and how the grid is drawn, each checked against strings, replays and
pixels written here from the specification and the dataset files.

That ``memory_framing="warn"`` sends the reference prompts of the fingerprints
byte for byte is ``tests/test_determinism.py``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, resolve_sample_attachments
from inspect_ai.model import modelapi
from PIL import Image

from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.detect import detect
from spatialstale_evals.harness.counts import ConfusionCounts
from spatialstale_evals.harness.memory_text import suffix, system_prompt, written
from spatialstale_evals.harness.params import defaults
from spatialstale_evals.navigate import navigate
from spatialstale_evals.runs.cost import estimate_cost
from spatialstale_evals.scripted.api import ScriptedAPI, text_output
from spatialstale_evals.world import dataset
from spatialstale_evals.world.render import RenderStyle, decode_grid, render_png

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "spatialstale_evals" / "data" / "spatialstale-v1"
MOVES = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}

#: The navigator's system message with the ``warn`` line, copied from the fingerprints' reference code.
OLD_SYSTEM = """\
You control an agent on a frozen lake, a grid of cells addressed as (row, col), row 0 at the top.
Cell types: S = start, F = frozen ice (safe), H = hole (stepping in ends the episode: you lose),
G = goal (reach it to win). UP decreases the row, DOWN increases it, LEFT decreases the column,
RIGHT increases it; a move off the grid leaves you in place and still costs a step.
The lake can change over time, and memory notes written in the past may be out of date.
Each turn, choose exactly one move by calling the tool `move` once with direction UP, DOWN,
LEFT or RIGHT."""
WARN = "The lake can change over time, and memory notes written in the past may be out of date.\n"
PREFER = "If a memory note conflicts with what you observe now, trust the observation.\n"


def rows(regime: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / f"{regime}.jsonl").read_text(encoding="utf-8").splitlines()]


def replay_walks(row: dict) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """specification.md#memory: 20 uniform random walks from S on g0, each ending on H, G or
    after 50 steps; numpy's generator seeded [seed, 1] (the memory stream)."""
    g0, rng = row["g0"], np.random.default_rng([row["seed"], 1])
    h, w = len(g0), len(g0[0])
    visits: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for walk in range(1, 21):
        r, c = 0, 0
        visits.setdefault((r, c), []).append((walk, 0))
        for step in range(1, 51):
            dr, dc = MOVES[("UP", "DOWN", "LEFT", "RIGHT")[int(rng.integers(4))]]
            if 0 <= r + dr < h and 0 <= c + dc < w:
                r, c = r + dr, c + dc
            visits.setdefault((r, c), []).append((walk, step))
            if g0[r][c] in "HG":
                break
    return visits


def run(tmp_path: Path, task, model, limit: int = 2, **kwargs) -> EvalLog:
    kwargs.setdefault("log_realtime", False)  # read when finished: no live-viewing buffer
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), limit=limit, display="none", **kwargs)
    assert log.status == "success", log.error
    return log


def model_inputs(log: EvalLog) -> list[list]:
    samples = [resolve_sample_attachments(s, "full") for s in log.samples]
    return [e.input for s in samples for e in s.events if e.event == "model"]


def totals(log: EvalLog) -> dict[str, float]:
    keys = log.samples[0].scores["detection_scorer"].metadata["counts"]
    return {k: sum(s.scores["detection_scorer"].metadata["counts"][k] for s in log.samples) for k in keys if k != "f1"}


def metric(log: EvalLog, name: str) -> float:
    return next(m.value for s in log.results.scores for n, m in s.metrics.items() if n == name)


# -- how memory is written and framed ---------------------------------------------


def test_framings_are_exact_and_the_default_has_no_memory_line() -> None:
    assert system_prompt("warn") == OLD_SYSTEM
    assert system_prompt("none") == OLD_SYSTEM.replace(WARN, "")
    assert system_prompt("prefer_current") == OLD_SYSTEM.replace(WARN, PREFER)
    fixed = defaults(navigate)
    assert (fixed["memory_style"], fixed["memory_framing"], fixed["memory_position"], fixed["distractors"]) == (
        "plain",
        "none",
        "before",
        0,
    )
    assert defaults(detect)["memory_style"] == "plain" and defaults(detect)["distractors"] == 0
    inst = dataset.load(None, "L2")[0]
    assert written(inst) is inst, "plain with no notes is the instance as stored"


def test_detailed_and_confident_agree_with_a_replay_of_the_walks() -> None:
    for row, inst in zip(rows("L2")[:8], dataset.load(None, "L2")[:8]):
        visits = replay_walks(row)
        walked = {(e["row"], e["col"]) for e in row["memory"] if e["source"] == "walk"}
        assert set(visits) == walked, "the replay is the exploration the dataset's memory came from"
        detailed, confident = written(inst, "detailed"), written(inst, "confident")
        for plain, d, c in zip(row["memory"], detailed.memory, confident.memory):
            seen = visits.get((plain["row"], plain["col"]), [])
            walks = len({w for w, _ in seen})
            if seen:
                walk, step = seen[0]
                extra = f" (explored: seen {len(seen)} times on {walks} of the 20 walks, " + (
                    f"first on walk {walk} at step {step})"
                )
                sure = f" (certain: confirmed by {walks} of the 20 walks)"
            else:
                extra, sure = " (explored: never visited; filled in without a visit)", " (certain)"
            assert d.text == plain["text"] + extra and c.text == plain["text"] + sure
            assert (
                (d.id, d.claim, d.cell)
                == (c.id, c.claim, c.cell)
                == (plain["id"], plain["claim"], (plain["row"], plain["col"]))
            )


def test_memory_position_puts_the_notes_after_the_observation(tmp_path: Path) -> None:
    def step_text(position: str) -> str:
        task = navigate(regime="L2", strategy="no_filter", epochs=1, max_steps=1, memory_position=position)
        (first, *_) = model_inputs(run(tmp_path / position, task, "spatialstale/memory", limit=1))
        return first[-1].text

    before, after = step_text("before"), step_text("after")
    assert before.index("Memory notes (") < before.index("Current observation:") < before.index("Your position:")
    assert after.index("Current observation:") < after.index("Memory notes (") < after.index("Your position:")
    assert sorted(before.splitlines()) == sorted(after.splitlines()), "the same lines, reordered"


def test_styles_change_only_the_texts_and_the_navigator_sees_them(tmp_path: Path) -> None:
    log = run(
        tmp_path, navigate(regime="L2", strategy="no_filter", epochs=1, memory_style="confident"), "spatialstale/memory"
    )
    plain = run(tmp_path / "plain", navigate(regime="L2", strategy="no_filter", epochs=1), "spatialstale/memory")
    first = model_inputs(log)[0][-1].text
    assert first.count(" (certain") == 64
    # the memory agent reads the claims only: the same walks, step for step
    assert [s.scores["navigation_scorer"].metadata["trajectory"] for s in log.samples] == [
        s.scores["navigation_scorer"].metadata["trajectory"] for s in plain.samples
    ]


# -- distractor notes --------------------------------------------------------------

#: L1-000's three notes: where they sit in the store and what they say. Pinned,
#: so a change of numpy's generator or of the draw shows up on any machine.
L1_000_NOTES = [
    (12, "[note_00] Note: The morning light made the ice glare; looking twice helped."),
    (53, "[note_01] Note: The lake is a rectangular grid of cells."),
    (60, "[note_02] Note: Frozen ice is safe to stand on; holes are not."),
]


def test_the_notes_of_a_seed_are_pinned() -> None:
    store = dataset.load(None, "L1")[0].with_notes(3).memory
    assert [(i, e.text) for i, e in enumerate(store) if e.is_note] == L1_000_NOTES
    assert len(store) == 64 + 3


def test_distractors_are_seeded_never_stale_and_name_no_cell() -> None:
    a, b = dataset.load(None, "L3")[:2]
    notes = [e for e in a.with_notes(6).memory if e.is_note]
    assert a.with_notes(6) == a.with_notes(6)
    assert [e.id for e in notes] == [f"note_{k:02d}" for k in range(6)]
    assert [e for e in a.with_notes(6).memory if not e.is_note] == list(a.memory), "the entries keep their order"
    draws = {
        tuple((i, e.text) for i, e in enumerate(inst.with_notes(6).memory) if e.is_note)
        for inst in dataset.load(None, "L3")[:10]
    }
    assert len(draws) == 10, "each seed draws its own notes and places"
    for e in notes:
        assert re.fullmatch(r"\[note_\d\d\] Note: [^()]+", e.text) and not re.search(r"\d+\s*,\s*\d+", e.text)
    for window in a.with_notes(6).windows:
        assert all(window.labels[e.id] is None for e in notes)
    assert written(a, "detailed", 6).memory[0].text != a.memory[0].text
    assert all(w.text == n.text for w, n in zip([e for e in written(a, "detailed", 6).memory if e.is_note], notes))


class FlagNotes(ScriptedAPI):
    """The observer auditor, but every distractor note is flagged stale."""

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        output = await super().generate(input, tools, tool_choice, config)
        if tools:
            return output
        items = json.loads(output.completion)
        for item in items:
            item["is_stale"] = item["is_stale"] or item["memory_id"].startswith("note_")
        return text_output(self.model_name, json.dumps(items), output.usage.input_tokens)


@modelapi(name="flagnotes")
def _flag_notes() -> type[FlagNotes]:
    return FlagNotes


def flag_notes() -> str:
    return "flagnotes/observer"


def test_detect_counts_note_flags_apart_and_as_false_positives(tmp_path: Path) -> None:
    k, limit = 5, 3
    base = run(tmp_path / "base", detect(regime="L3"), "spatialstale/observer", limit=limit)
    clean = run(tmp_path / "clean", detect(regime="L3", distractors=k), "spatialstale/observer", limit=limit)
    flagging = run(tmp_path / "flag", detect(regime="L3", distractors=k), flag_notes(), limit=limit)
    b, c, f = totals(base), totals(clean), totals(flagging)
    windows = b["windows"]
    assert c["distractors"] == f["distractors"] == k * windows and f["distractors_flagged"] == k * windows
    assert c["distractors_flagged"] == 0 and c["entries"] == b["entries"] + k * windows
    assert metric(clean, "distractor_flag_rate") == 0.0 and metric(flagging, "distractor_flag_rate") == 1.0
    # every count over cell entries: the confusion's fields but those a note adds to
    note_keys = {"n", "fp", "tn", "distractors", "distractors_flagged"}
    cell_keys = [f.name for f in dataclasses.fields(ConfusionCounts) if f.name not in note_keys]
    assert "tp" in cell_keys and "valid_safe_flagged" in cell_keys
    for key in cell_keys:
        assert b[key] == c[key] == f[key], key
    assert f["fp"] == b["fp"] + k * windows and f["tn"] == b["tn"]
    for name in ("recall", "thaw_recall", "freeze_recall", "flag_rate_valid_safe"):
        assert metric(flagging, name) == metric(base, name), name
    assert metric(flagging, "precision") == pytest.approx(b["tp"] / (b["tp"] + b["fp"] + k * windows))
    calls = sum(1 for s in clean.samples for e in s.events if e.event == "model")
    assert calls == windows * math.ceil((64 + k) / 10), "the notes are audited in the batches"
    # the report's direction table shows the notes' flag rate, from the same counts
    direction = build_report(tmp_path, tmp_path / "report").tables["direction"].set_index(["model", "config"])
    assert direction.loc[("spatialstale/observer", ""), "distractor_n"] == 0
    assert math.isnan(direction.loc[("spatialstale/observer", ""), "distractor_flag_rate"])
    assert direction.loc[("spatialstale/observer", f"distractors={k}"), "distractor_n"] == k * windows
    assert direction.loc[("spatialstale/observer", f"distractors={k}"), "distractor_flag_rate"] == 0.0
    assert direction.loc[(flag_notes(), f"distractors={k}"), "distractor_flag_rate"] == 1.0


def test_navigation_shows_audits_and_resolves_the_notes(tmp_path: Path) -> None:
    k = 3
    shown = run(
        tmp_path / "nf", navigate(regime="L2", strategy="no_filter", epochs=1, distractors=k), "spatialstale/memory"
    )
    assert (
        model_inputs(shown)[0][-1].text.count("] Note: ") == k
        and f"Memory notes ({64 + k}):" in model_inputs(shown)[0][-1].text
    )
    marked = run(
        tmp_path / "mark",
        navigate(regime="L2", strategy="omcd", epochs=1, distractors=k, filter_mode="mark"),
        flag_notes(),
    )
    for sample in (resolve_sample_attachments(s, "full") for s in marked.samples):
        nav = [e.input[-1].text for e in sample.events if e.event == "model" and e.tools]
        audits = [e for e in sample.events if e.event == "model" and not e.tools]
        assert len(audits) == math.ceil((64 + k) / 10)
        assert all(f"[note_{i:02d}] UNKNOWN: this note was found out of date" in nav[0] for i in range(k))
        first = sample.scores["navigation_scorer"].metadata["audits"][0]
        assert first["distractors_flagged"] == k and first["judged"] == 64 + k
    resolved = run(
        tmp_path / "res", navigate(regime="L2", strategy="resolve", epochs=1, distractors=k), "spatialstale/mixed"
    )
    text = model_inputs(resolved)[0][-1].text
    notes = [line for line in text.splitlines() if "] Note: " in line]
    assert len(notes) == k and not any("unverified" in line or "out of date" in line for line in notes)


# -- how the grid is drawn -----------------------------------------------------------

#: The palettes as docs/memory.md documents them (hex), and each one's fog.
PALETTES = {
    "paper": {"F": "A8C8E8", "H": "202020", "S": "2E8B57", "G": "DAA520", "?": "808080"},
    "high_contrast": {"F": "FFFF00", "H": "000000", "S": "0000FF", "G": "00C800", "?": "808080"},
    "grayscale": {"F": "E0E0E0", "H": "101010", "S": "505050", "G": "B0B0B0", "?": "808080"},
}


def rgb(hex_: str) -> tuple[int, ...]:
    return tuple(int(hex_[i : i + 2], 16) for i in (0, 2, 4))


def pixels(style: RenderStyle, grid, agent) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(render_png(grid, agent, style))).convert("RGB"))


@pytest.mark.parametrize("palette", list(PALETTES))
def test_every_palette_fills_every_cell_type_with_its_colour(palette: str) -> None:
    inst = dataset.load(None, "L2")[1]
    grid = [row[:4] + "?" * 4 for row in inst.grid]  # the right half out of view
    arr = pixels(RenderStyle(palette=palette), grid, (2, 1))
    for r in range(8):
        for c in range(8):
            assert tuple(arr[r * 48 + 24, c * 48 + 42]) == rgb(PALETTES[palette][grid[r][c]]), (palette, r, c)
            assert tuple(arr[r * 48 + 30, c * 48]) == (255, 255, 255), "white grid line"


def test_labels_off_leave_cells_plain_and_grayscale_writes_type_letters() -> None:
    grid = dataset.load(None, "L2")[2].grid
    off = pixels(RenderStyle(labels=False), grid, None)
    on = pixels(RenderStyle(), grid, None)
    gray = pixels(RenderStyle(palette="grayscale"), grid, None)
    for r in range(8):
        for c in range(8):
            fill = rgb(PALETTES["paper"][grid[r][c]])
            cell = off[r * 48 + 1 : r * 48 + 48, c * 48 + 1 : c * 48 + 48]
            assert np.all(cell == fill), "no label ink"
            label = on[r * 48 + 2 : r * 48 + 13, c * 48 + 3 : c * 48 + 46]
            assert np.any(label != fill), "a coordinate label"
            assert np.all(on[r * 48 + 13 : r * 48 + 24, c * 48 + 3 : c * 48 + 10] == fill), "no second line"
            letter = gray[r * 48 + 13 : r * 48 + 24, c * 48 + 3 : c * 48 + 10]
            assert np.any(letter != rgb(PALETTES["grayscale"][grid[r][c]])), "a type letter"
    # the letters differ between types: F and H cells carry different glyphs
    f = next((r, c) for r in range(8) for c in range(8) if grid[r][c] == "F")
    h = next((r, c) for r in range(8) for c in range(8) if grid[r][c] == "H")

    def glyph(cell):
        block = gray[cell[0] * 48 + 13 : cell[0] * 48 + 24, cell[1] * 48 + 3 : cell[1] * 48 + 10]
        return np.any(block != block[0, -1], axis=-1)

    assert not np.array_equal(glyph(f), glyph(h))


@pytest.mark.parametrize("px", [16, 48, 64])
def test_cell_size_sets_the_image_and_the_lines(px: int) -> None:
    grid = dataset.load(None, "L2")[3].grid
    arr = pixels(RenderStyle(cell_px=px, labels=px >= 39), grid, (4, 4))
    assert arr.shape == (8 * px, 8 * px, 3)
    white_columns = [x for x in range(8 * px) if np.all(arr[:, x] == (255, 255, 255))]
    assert white_columns == [c * px for c in range(8)]


def test_letter_marker_is_a_square_marked_a_in_the_agent_cell_only() -> None:
    grid = dataset.load(None, "L2")[4].grid
    for agent in ((0, 0), (5, 3)):
        arr = pixels(RenderStyle(marker="letter"), grid, agent)
        red = np.all(arr == (255, 0, 0), axis=-1)
        r, c = agent
        inside = red[r * 48 : (r + 1) * 48, c * 48 : (c + 1) * 48]
        assert red.sum() == inside.sum() > 300
        ys, xs = np.nonzero(inside)
        box = arr[r * 48 + ys.min() : r * 48 + ys.max() + 1, c * 48 + xs.min() : c * 48 + xs.max() + 1]
        white = np.all(box == (255, 255, 255), axis=-1)
        assert white.sum() > 20 and np.all(red[r * 48 + ys.min() : r * 48 + ys.max() + 1, c * 48 + xs.min()])


STYLES = [
    RenderStyle(),
    RenderStyle(palette="high_contrast"),
    RenderStyle(palette="grayscale"),
    RenderStyle(labels=False),
    RenderStyle(cell_px=24, labels=False),
    RenderStyle(cell_px=96),
    RenderStyle(marker="letter"),
    RenderStyle(palette="grayscale", marker="letter", cell_px=64),
]


@pytest.mark.parametrize("style", STYLES, ids=str)
def test_every_variant_decodes_from_its_pixels(style: RenderStyle) -> None:
    for inst in dataset.load(None, "L3")[:4]:
        for agent in ((0, 0), (3, 6), (7, 7)):
            assert decode_grid(render_png(inst.grid, agent, style)) == inst.grid
        fog = tuple(row[:3] + "?" * 5 for row in inst.grid)
        assert decode_grid(render_png(fog, (1, 1), style)) == fog


def test_the_observer_audits_every_variant_perfectly(tmp_path: Path) -> None:
    variants = [
        {"image_palette": "high_contrast"},
        {"image_palette": "grayscale", "image_marker": "letter"},
        {"image_labels": False, "image_cell_px": 20},
        {"image_cell_px": 96},
        {"image_marker": "letter"},
    ]
    tasks = [detect(regime="L1", modality="image", **v) for v in variants]
    logs = inspect_eval(tasks, model="spatialstale/observer", log_dir=str(tmp_path), limit=2, display="none")
    for variant, log in zip(variants, logs):
        assert log.status == "success" and metric(log, "f1") == 1.0, variant
        caption = next(p.text for p in model_inputs(log)[0][-1].content if p.type == "text")
        if variant.get("image_labels") is False:
            assert "Cells are not labelled" in caption
        if variant.get("image_palette") == "grayscale":
            assert "black = hole" in caption and "white square marked A" in caption


def test_the_observer_navigates_every_variant_without_a_death(tmp_path: Path) -> None:
    """The navigator's image (with the agent marker on its cell) decodes in every
    variant: the observer plans on it alone and reaches the goal every time."""
    variants = [{"image_palette": "grayscale", "image_marker": "letter"}, {"image_labels": False, "image_cell_px": 16}]
    # one epoch: the observer is deterministic, so the task's default five would replay the first
    tasks = [navigate(regime="L2", modality="image", strategy="no_memory", epochs=1, **v) for v in variants]
    logs = inspect_eval(tasks, model="spatialstale/observer", log_dir=str(tmp_path), limit=2, display="none")
    for variant, log in zip(variants, logs):
        assert log.status == "success" and metric(log, "success_rate") == 1.0, variant


# -- bad input, before any model call --------------------------------------------------


@pytest.mark.parametrize(
    ("task", "args", "message"),
    [
        (detect, {"memory_style": "verbose"}, "memory_style must be one of plain, detailed, confident"),
        (navigate, {"memory_framing": "shout"}, "memory_framing must be one of none, warn, prefer_current"),
        (navigate, {"memory_position": "middle"}, "memory_position must be one of before, after"),
        (detect, {"distractors": -1}, "distractors must be a non-negative integer"),
        (navigate, {"distractors": 17}, "at most 16"),
        (detect, {"modality": "image", "image_palette": "sepia"}, "image_palette must be one of"),
        (detect, {"modality": "image", "image_marker": "star"}, "image_marker must be one of triangle, letter"),
        (detect, {"modality": "image", "image_labels": "no"}, "image_labels must be true or false"),
        (
            detect,
            {"modality": "image", "image_cell_px": 30},
            "too small for the labels of a grid of 8x8 cells: the minimum is 39",
        ),
        (navigate, {"modality": "image", "image_cell_px": 8, "image_labels": False}, "the minimum is 12"),
        (detect, {"modality": "image", "image_palette": "grayscale", "image_labels": False}, "needs image_labels=true"),
        (navigate, {"image_palette": "grayscale"}, "need modality=image"),
        (detect, {"image_cell_px": 30}, "need modality=image"),  # not applicable, before the size
    ],
)
def test_bad_factor_values_fail_before_any_call(task, args, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        task(**args)


# -- what it costs ---------------------------------------------------------------------


def test_the_detect_estimate_prices_styles_and_notes_exactly(tmp_path: Path) -> None:
    args = {"regime": "L3", "memory_style": "detailed", "distractors": 4}
    log = run(tmp_path, detect(**args), "spatialstale/observer", limit=2)
    tokens = sum(u.input_tokens for s in log.samples for u in s.model_usage.values())
    instances = dataset.load(None, "L3")[:2]
    estimate = estimate_cost("detect", instances, modality="text", batch_size=10, **args)[1]
    plain = estimate_cost("detect", instances, modality="text", batch_size=10)[1]
    assert estimate.input_tokens == tokens and estimate.input_tokens > plain.input_tokens
    assert suffix(instances[0].memory[0], [], "plain") == ""
