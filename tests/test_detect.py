"""End-to-end tests of the ``detect`` task (specification.md#detect), run offline through
``inspect_ai.eval`` with ``mockllm/model`` and scripted auditors written here.

The auditors read only what a model sees (the last user message: its text
parts and its image parts) and parse it with the specification's exact formats; the
expected numbers are computed independently from the dataset JSONL files,
never from the project's own ground-truth code.
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
import sys
from pathlib import Path

import pytest
from _warm import WarmPython
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatMessageUser,
    ContentImage,
    ContentText,
    ModelOutput,
    ModelUsage,
    get_model,
)
from PIL import Image

from spatialstale_evals.detect import detect
from spatialstale_evals.detection.windows import audit_windows
from spatialstale_evals.harness.samples import InstanceSet
from spatialstale_evals.runs.cost import task_settings

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "spatialstale_evals" / "data" / "spatialstale-v1"

# specification.md#observations (exact): "Row 0: (0,0)=S (0,1)=F ..." then "Agent at (r,c). Goal at (r,c)."
ROW_LINE = re.compile(r"^Row (\d+): (.*)$", re.MULTILINE)
OBS_CELL = re.compile(r"\((\d+),(\d+)\)=([SFHG])")
AGENT_LINE = re.compile(r"Agent at \((\d+),(\d+)\)\. Goal at \((\d+),(\d+)\)\.")
# specification.md#memory (exact): "[mem_021] SAFE at (2,5): Frozen ice - safe to walk"
ENTRY_LINE = re.compile(r"^\[(mem_\d+)\] (SAFE|DANGER) at \((\d+),(\d+)\): .+$", re.MULTILINE)

# The image colours of specification.md#observations.
CELL_PX = 48
PAPER_COLOURS = {
    (0xA8, 0xC8, 0xE8): "F",
    (0x20, 0x20, 0x20): "H",
    (0x2E, 0x8B, 0x57): "S",
    (0xDA, 0xA5, 0x20): "G",
}
USAGE = dict(input_tokens=100, output_tokens=20, total_tokens=120)


# ----------------------------------------------------------------- helpers


def load_jsonl(regime: str) -> list[dict]:
    lines = (DATASET / f"{regime}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def entry_id(r: int, c: int, width: int, n: int) -> str:
    return f"mem_{r * width + c:0{max(3, len(str(n - 1)))}d}"


def flip(grid: list[str], cells) -> list[str]:
    rows = [list(row) for row in grid]
    for r, c in cells:
        rows[r][c] = {"F": "H", "H": "F"}[rows[r][c]]
    return ["".join(row) for row in rows]


def truth_windows(inst: dict) -> list[dict]:
    """Independent ground truth per detection window (specification.md#change-regimes and #detect):
    L1/L2: one window on the changed grid; L3: one after each event of the
    schedule, the grid cumulative against g0. Stale iff g_t != g0."""
    g0, h, w = inst["g0"], inst["height"], inst["width"]
    if inst["regime"] == "L3":
        grids, grid = [], list(inst["grid"])
        for event in inst["events"]:
            grid = flip(grid, event["cells"])
            grids.append(grid)
    else:
        grids = [inst["grid"]]
    windows = []
    for grid in grids:
        thaw, freeze = set(), set()
        for r in range(h):
            for c in range(w):
                if g0[r][c] != grid[r][c]:
                    eid = entry_id(r, c, w, h * w)
                    (thaw if g0[r][c] == "F" else freeze).add(eid)
                    assert {g0[r][c], grid[r][c]} == {"F", "H"}
        windows.append({"grid": grid, "thaw": thaw, "freeze": freeze, "stale": thaw | freeze})
    return windows


def prompt_of(messages) -> tuple[str, list[str]]:
    """Text and image data URIs of the last user message (what the model reads)."""
    user = [m for m in messages if isinstance(m, ChatMessageUser)][-1]
    if isinstance(user.content, str):
        return user.content, []
    text = "\n".join(p.text for p in user.content if isinstance(p, ContentText))
    images = [p.image for p in user.content if isinstance(p, ContentImage)]
    return text, images


def entries_of(text: str) -> list[tuple[str, str, int, int]]:
    return [(m[0], m[1], int(m[2]), int(m[3])) for m in ENTRY_LINE.findall(text)]


def grid_from_text(text: str) -> dict[tuple[int, int], str]:
    cells = {}
    for row_match in ROW_LINE.finditer(text):
        r = int(row_match.group(1))
        for cr, cc, kind in OBS_CELL.findall(row_match.group(2)):
            assert int(cr) == r
            cells[(r, int(cc))] = kind
    return cells


def image_of(data_uri: str) -> Image.Image:
    assert data_uri.startswith("data:image/png;base64,"), data_uri[:40]
    png = base64.b64decode(data_uri.split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return Image.open(io.BytesIO(png)).convert("RGB")


def grid_from_image(img: Image.Image) -> dict[tuple[int, int], str]:
    """Read each cell's colour: a 3x3 patch on the cell's right-hand side, clear
    of the top-left coordinate label and the centred agent triangle."""
    width_px, height_px = img.size
    assert width_px % CELL_PX == 0 and height_px % CELL_PX == 0, img.size
    cells = {}
    for r in range(height_px // CELL_PX):
        for c in range(width_px // CELL_PX):
            x0, y0 = c * CELL_PX, r * CELL_PX
            patch = {img.getpixel((x0 + 41 + dx, y0 + 27 + dy)) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
            assert len(patch) == 1, f"cell ({r},{c}) not uniform: {patch}"
            colour = patch.pop()
            assert colour in PAPER_COLOURS, f"cell ({r},{c}) has non-paper colour {colour}"
            cells[(r, c)] = PAPER_COLOURS[colour]
    return cells


def reply(text: str, stop_reason: str = "stop") -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", text, stop_reason=stop_reason)  # type: ignore[arg-type]
    out.usage = ModelUsage(**USAGE)
    return out


def correct_verdict(claim: str, kind: str) -> bool:
    """specification.md#the-world: stale iff the claimed hazard differs from the observed hazard."""
    return (claim == "DANGER") != (kind == "H")


class Auditor:
    """A scripted model: records every call's prompt and answers via ``decide``."""

    def __init__(self, decide):
        self.decide = decide
        self.calls: list[dict] = []

    def __call__(self, messages, tools, tool_choice, config):
        text, images = prompt_of(messages)
        entries = entries_of(text)
        self.calls.append({"text": text, "images": images, "ids": [e[0] for e in entries]})
        return self.decide(text, images, entries)

    def model(self):
        return get_model("mockllm/model", custom_outputs=self, memoize=False)


def text_perfect(text, images, entries):
    grid = grid_from_text(text)
    assert not images
    assert len(grid) == 64 and AGENT_LINE.search(text), "prompt lacks the exact text observation"
    items = [
        {"memory_id": eid, "is_stale": correct_verdict(claim, grid[(r, c)]), "confidence": 1.0, "reasoning": "r"}
        for eid, claim, r, c in entries
    ]
    return reply(json.dumps(items))


def image_perfect(text, images, entries):
    assert len(images) == 1
    assert not ROW_LINE.search(text), "image mode must not leak the text observation"
    grid = grid_from_image(image_of(images[0]))
    items = [
        {"memory_id": eid, "is_stale": correct_verdict(claim, grid[(r, c)]), "confidence": 1.0, "reasoning": "r"}
        for eid, claim, r, c in entries
    ]
    return reply(json.dumps(items))


def constant(value):
    def decide(text, images, entries):
        return reply(json.dumps([{"memory_id": e[0], "is_stale": value, "confidence": 0.5} for e in entries]))

    return decide


def run(task, model, **kwargs):
    kwargs.setdefault("display", "none")
    kwargs.setdefault("log_realtime", False)
    logs = inspect_eval(task, model=model, **kwargs)
    assert len(logs) == 1
    log = logs[0]
    assert log.status == "success", log.error
    return log


def metric(log, name: str) -> float:
    return log.results.scores[0].metrics[name].value


def sample_scores(log) -> dict[str, dict]:
    return {s.id: next(iter(s.scores.values())).metadata["counts"] for s in log.samples}


def model_events(sample) -> list:
    return [e for e in sample.events if e.event == "model"]


# ----------------------------------------------------------- perfect audits


@pytest.mark.parametrize("regime,limit", [("L1", 20), ("L2", 12), ("L3", 5)])
def test_perfect_text_auditor_scores_f1_one(tmp_path, regime, limit):
    auditor = Auditor(text_perfect)
    log = run(detect(regime=regime), auditor.model(), log_dir=str(tmp_path), limit=limit)
    instances = load_jsonl(regime)[: limit or None]
    assert len(log.samples) == len(instances)
    assert metric(log, "f1") == 1.0
    assert metric(log, "precision") == 1.0
    assert metric(log, "recall") == 1.0
    assert metric(log, "f1_mean") == 1.0
    assert metric(log, "thaw_recall") == 1.0
    assert metric(log, "freeze_recall") == 1.0
    assert metric(log, "flag_rate_valid_safe") == 0.0
    assert metric(log, "parse_failure_rate") == 0.0
    # Per-sample counts, pooled over windows, against the independent truth.
    scores = sample_scores(log)
    for inst in instances:
        windows = truth_windows(inst)
        value = scores[inst["id"]]
        stale = sum(len(w["stale"]) for w in windows)
        assert stale > 0
        assert (value["tp"], value["fp"], value["fn"]) == (stale, 0, 0)
        assert value["tn"] == 64 * len(windows) - stale
        assert value["stale_thaw"] == sum(len(w["thaw"]) for w in windows)
        assert value["stale_freeze"] == sum(len(w["freeze"]) for w in windows)
    # Every call showed the exact text observation of a real grid and <= B entries.
    assert all(0 < len(call["ids"]) <= 10 for call in auditor.calls)
    assert sum(math.ceil(64 / 10) * len(truth_windows(i)) for i in instances) == len(auditor.calls)


def test_text_prompt_shows_the_window_grid(tmp_path):
    """The observation in each L3 window is the cumulative grid after that event."""
    auditor = Auditor(text_perfect)
    run(detect(regime="L3"), auditor.model(), log_dir=str(tmp_path), limit=1)
    inst = load_jsonl("L3")[0]
    windows = truth_windows(inst)
    per_window = math.ceil(64 / 10)
    assert len(auditor.calls) == per_window * len(windows)
    for i, window in enumerate(windows):
        for call in auditor.calls[i * per_window : (i + 1) * per_window]:
            grid = grid_from_text(call["text"])
            assert grid == {(r, c): window["grid"][r][c] for r in range(8) for c in range(8)}
            assert AGENT_LINE.search(call["text"]).groups() == ("0", "0", "7", "7")
    # Memory is the g0 snapshot: every entry line is true of g0.
    for call in auditor.calls:
        for eid, claim, r, c in entries_of(call["text"]):
            assert eid == entry_id(r, c, 8, 64)
            assert claim == ("DANGER" if inst["g0"][r][c] == "H" else "SAFE")


def test_perfect_image_auditor_scores_f1_one(tmp_path):
    auditor = Auditor(image_perfect)
    log = run(detect(regime="L1", modality="image"), auditor.model(), log_dir=str(tmp_path), limit=12)
    assert len(log.samples) == 12
    assert metric(log, "f1") == 1.0
    assert metric(log, "parse_failure_rate") == 0.0
    assert all(len(call["images"]) == 1 for call in auditor.calls)
    img = image_of(auditor.calls[0]["images"][0])
    assert img.size == (384, 384)
    # The agent (at (0,0), stated in the caption) is a red triangle overlay.
    assert AGENT_LINE.search(auditor.calls[0]["text"]).groups() == ("0", "0", "7", "7")
    assert any(img.getpixel((x, y)) == (255, 0, 0) for x in range(48) for y in range(48))
    # The decoded image is the instance's current grid.
    inst = load_jsonl("L1")[0]
    assert grid_from_image(img) == {(r, c): inst["grid"][r][c] for r in range(8) for c in range(8)}


def test_image_mode_l3_windows_show_cumulative_grid(tmp_path):
    """L3 image audits: one call per window at B=64, each showing the grid
    after that event (cumulative against g0)."""
    auditor = Auditor(image_perfect)
    log = run(detect(regime="L3", modality="image", batch_size=64), auditor.model(), log_dir=str(tmp_path), limit=1)
    assert metric(log, "f1") == 1.0
    windows = truth_windows(load_jsonl("L3")[0])
    assert len(auditor.calls) == len(windows)
    for call, window in zip(auditor.calls, windows):
        assert len(call["ids"]) == 64
        decoded = grid_from_image(image_of(call["images"][0]))
        assert decoded == {(r, c): window["grid"][r][c] for r in range(8) for c in range(8)}


# ------------------------------------------------------ degenerate auditors


def test_everything_valid_gives_recall_zero(tmp_path):
    log = run(detect(regime="L1"), Auditor(constant(False)).model(), log_dir=str(tmp_path), limit=10)
    assert metric(log, "recall") == 0.0
    assert metric(log, "f1") == 0.0
    assert metric(log, "thaw_recall") == 0.0
    assert metric(log, "freeze_recall") == 0.0
    assert metric(log, "flag_rate_valid_safe") == 0.0
    assert metric(log, "parse_failure_rate") == 0.0
    for value in sample_scores(log).values():
        assert value["tp"] == value["fp"] == 0


def test_everything_stale_gives_recall_one_and_precision_stale_ratio(tmp_path):
    log = run(detect(regime="L1"), Auditor(constant(True)).model(), log_dir=str(tmp_path))
    instances = load_jsonl("L1")
    assert len(log.samples) == len(instances) == 50
    stale = sum(
        1
        for inst in instances
        for r, row in enumerate(inst["g0"])
        for c, kind in enumerate(row)
        if kind != inst["grid"][r][c]
    )
    entries = sum(len(inst["memory"]) for inst in instances)
    assert entries == 50 * 64
    ratio = stale / entries
    assert 0.05 < ratio < 0.15  # specification.md#change-regimes: L1 mean about 0.094
    assert metric(log, "recall") == 1.0
    assert metric(log, "precision") == pytest.approx(ratio, abs=1e-12)
    assert metric(log, "f1") == pytest.approx(2 * ratio / (ratio + 1), abs=1e-12)
    assert metric(log, "flag_rate_valid_safe") == 1.0
    # Per sample: every stale entry is a TP, every valid one an FP.
    scores = sample_scores(log)
    for inst in instances:
        n_stale = len(truth_windows(inst)[0]["stale"])
        assert (scores[inst["id"]]["tp"], scores[inst["id"]]["fp"]) == (n_stale, 64 - n_stale)
        assert scores[inst["id"]]["fn"] == scores[inst["id"]]["tn"] == 0


def test_flag_every_safe_claim_separates_thaw_and_freeze(tmp_path):
    """Flagging exactly the SAFE claims catches every thaw (F->H) and no freeze."""

    def decide(text, images, entries):
        return reply(json.dumps([{"memory_id": e[0], "is_stale": e[1] == "SAFE"} for e in entries]))

    log = run(detect(regime="L2"), Auditor(decide).model(), log_dir=str(tmp_path), limit=10)
    instances = load_jsonl("L2")[:10]
    thaw = freeze = safe_claims = 0
    for inst in instances:
        window = truth_windows(inst)[0]
        thaw, freeze = thaw + len(window["thaw"]), freeze + len(window["freeze"])
        safe_claims += sum(1 for row in inst["g0"] for kind in row if kind != "H")
    assert thaw > 0 and freeze > 0
    assert metric(log, "thaw_recall") == 1.0
    assert metric(log, "freeze_recall") == 0.0
    assert metric(log, "flag_rate_valid_safe") == 1.0
    assert metric(log, "recall") == pytest.approx(thaw / (thaw + freeze))
    assert metric(log, "precision") == pytest.approx(thaw / safe_claims)


def test_valid_safe_control_counts_frozen_cells_only(tmp_path):
    """S and G are SAFE claims that can never go stale: the control (the flag
    rate on still-valid SAFE entries) leaves them out, so flagging only them
    scores two false positives per window and a control of 0."""
    ends = {"mem_000", "mem_063"}  # (0,0) and (7,7): specification.md#memory, id = r*8 + c

    def decide(text, images, entries):
        return reply(json.dumps([{"memory_id": e[0], "is_stale": e[0] in ends} for e in entries]))

    log = run(detect(regime="L2"), Auditor(decide).model(), log_dir=str(tmp_path), limit=5)
    assert metric(log, "flag_rate_valid_safe") == 0.0
    scores = sample_scores(log)
    for inst in load_jsonl("L2")[:5]:
        frozen_valid = sum(
            1 for r, row in enumerate(inst["g0"]) for c, kind in enumerate(row) if kind == "F" == inst["grid"][r][c]
        )
        assert scores[inst["id"]]["valid_safe"] == frozen_valid
        assert scores[inst["id"]]["valid_safe_flagged"] == 0
        assert scores[inst["id"]]["fp"] == 2


# ------------------------------------------------------- malformed replies


def _mixed_malformed(text, images, entries):
    """B=10 on 8x8: batch k holds mem_{10k}..mem_{10k+9}; each batch gets a
    different kind of bad reply."""
    grid = grid_from_text(text)
    batch = int(entries[0][0][4:]) // 10

    def item(e, eid=None):
        return {"memory_id": eid or e[0], "is_stale": correct_verdict(e[1], grid[(e[2], e[3])]), "confidence": 0.8}

    if batch == 0:  # prose, no JSON at all
        return reply("Looking at the grid, most of these entries look fine to me; mem_003 might be off.")
    if batch == 1:  # first half judged correctly, then cut off mid-object
        body = json.dumps([item(e) for e in entries[:5]])[:-1]
        return reply(body + ', {"memory_id": "' + entries[5][0] + '", "is_st')
    if batch == 2:  # 6 correct (one with a short id), 4 with wrong ids
        good = [item(e) for e in entries[:6]]
        good[1]["memory_id"] = "mem_" + str(int(entries[1][0][4:]))  # mem_21 -> mem_021
        wrong = [item(e, eid) for e, eid in zip(entries[6:], ["mem_999", "foo", "mem_050", "entry 7"])]
        return reply("```json\n" + json.dumps(good + wrong) + "\n```")
    if batch == 3:
        return reply("null")
    if batch == 4:
        return reply("")
    if batch == 5:
        return reply("I'm sorry, I can't help with that.")
    return reply(json.dumps([item(e) for e in entries]))  # batch 6: 4 entries, all fine


def test_malformed_replies_are_counted_and_never_fail(tmp_path):
    log = run(detect(regime="L1"), Auditor(_mixed_malformed).model(), log_dir=str(tmp_path), limit=6)
    assert len(log.samples) == 6
    assert all(s.error is None and s.scores for s in log.samples)
    # Failures per sample: 10 (prose) + 5 (truncated) + 4 (wrong ids) + 10 (null)
    # + 10 (empty) + 10 (refusal) + 0 = 49 of 64 entries.
    assert metric(log, "parse_failure_rate") == pytest.approx(49 / 64)
    scores = sample_scores(log)
    judged_tp = judged_fn = 0
    for inst in load_jsonl("L1")[:6]:
        stale = truth_windows(inst)[0]["stale"]
        judged = {f"mem_{i:03d}" for i in [*range(10, 15), *range(20, 26), *range(60, 64)]}
        value = scores[inst["id"]]
        tp = len(stale & judged)
        assert value["parse_failures"] == 49
        assert value["refusals"] == 1
        assert (value["tp"], value["fp"], value["fn"]) == (tp, 0, len(stale) - tp)
        assert value["tn"] == 64 - len(stale)
        judged_tp, judged_fn = judged_tp + tp, judged_fn + len(stale) - tp
    assert judged_tp > 0 and judged_fn > 0
    assert metric(log, "recall") == pytest.approx(judged_tp / (judged_tp + judged_fn))
    assert metric(log, "precision") == 1.0


BAD_REPLIES = [
    "prose: every entry seems valid to me.",
    '[{"memory_id": "mem_000", "is_stale": tr',
    "null",
    "",
    "I'm sorry, I can't help with that.",
    '{"memory_id": "mem_999", "is_stale": true}',
    "[]",
    '[{"memory_id": "mem_000", "is_stale": "perhaps"}]',
]


def test_every_reply_bad_still_scores_every_sample(tmp_path):
    """Each call gets the next bad reply in turn (every kind is used several times)."""
    served = []

    def decide(text, images, entries):
        served.append(BAD_REPLIES[len(served) % len(BAD_REPLIES)])
        return reply(served[-1])

    log = run(detect(regime="L2"), Auditor(decide).model(), log_dir=str(tmp_path), limit=4)
    assert set(served) == set(BAD_REPLIES) and len(served) == 4 * 7
    assert [s.id for s in log.samples] == ["L2-000", "L2-001", "L2-002", "L2-003"]
    assert all(s.error is None and s.scores for s in log.samples)
    assert metric(log, "parse_failure_rate") == 1.0
    assert metric(log, "recall") == 0.0 and metric(log, "f1") == 0.0
    for value in sample_scores(log).values():
        assert value["parse_failures"] == 64 and value["tp"] == value["fp"] == 0


def test_provider_refusal_is_counted(tmp_path):
    auditor = Auditor(lambda text, images, entries: reply("", stop_reason="content_filter"))
    log = run(detect(regime="L1"), auditor.model(), log_dir=str(tmp_path), limit=1)
    value = sample_scores(log)["L1-000"]
    assert value["refusals"] == 7
    assert value["parse_failures"] == 64
    assert metric(log, "parse_failure_rate") == 1.0


def test_duplicate_ids_are_parse_failures_scored_not_flagged(tmp_path):
    """An entry the reply repeats is counted as a parse failure and scored as not
    flagged (specification.md#detect). Here every stale
    entry is returned twice with contradicting verdicts; all other entries are
    judged once, correctly."""

    def decide(text, images, entries):
        grid = grid_from_text(text)
        items = []
        for eid, claim, r, c in entries:
            verdict = correct_verdict(claim, grid[(r, c)])
            items.append({"memory_id": eid, "is_stale": verdict})
            if verdict:
                items.append({"memory_id": eid, "is_stale": False})
        return reply(json.dumps(items))

    log = run(detect(regime="L1"), Auditor(decide).model(), log_dir=str(tmp_path), limit=3)
    instances = load_jsonl("L1")[:3]
    scores = sample_scores(log)
    for inst in instances:
        stale = len(truth_windows(inst)[0]["stale"])
        value = scores[inst["id"]]
        assert value["duplicate_ids"] == stale
        assert value["parse_failures"] == stale
        assert (value["tp"], value["fn"]) == (0, stale)
    total_stale = sum(len(truth_windows(i)[0]["stale"]) for i in instances)
    assert metric(log, "parse_failure_rate") == pytest.approx(total_stale / (3 * 64))


# ------------------------------------------------------------- batch sizes


@pytest.mark.parametrize("batch_size,limit", [(1, 1), (10, 2), (20, 2), (64, 2)])
def test_batch_size_sets_calls_per_window(tmp_path, batch_size, limit):
    auditor = Auditor(text_perfect)
    log = run(detect(regime="L1", batch_size=batch_size), auditor.model(), log_dir=str(tmp_path), limit=limit)
    per_window = math.ceil(64 / batch_size)
    assert len(auditor.calls) == per_window * limit
    for sample in log.samples:
        assert len(model_events(sample)) == per_window
    per_sample = [batch_size] * (64 // batch_size) + ([64 % batch_size] if 64 % batch_size else [])
    assert sorted(len(call["ids"]) for call in auditor.calls) == sorted(per_sample * limit)
    # Together the batches of a window cover every entry exactly once.
    ids = sorted(eid for call in auditor.calls for eid in call["ids"])
    assert ids == sorted(f"mem_{i:03d}" for i in range(64) for _ in range(limit))
    assert metric(log, "f1") == 1.0


def test_l3_calls_per_window_times_events(tmp_path):
    auditor = Auditor(text_perfect)
    log = run(detect(regime="L3", batch_size=20), auditor.model(), log_dir=str(tmp_path), limit=3)
    by_id = {inst["id"]: inst for inst in load_jsonl("L3")[:3]}
    for sample in log.samples:
        events = len(by_id[sample.id]["events"])
        assert events >= 1
        assert len(model_events(sample)) == math.ceil(64 / 20) * events
        assert sample_scores(log)[sample.id]["entries"] == 64 * events
    assert len(auditor.calls) == sum(4 * len(i["events"]) for i in by_id.values())
    assert metric(log, "f1") == 1.0


# ---------------------------------------------------------- continuous mode

STALE_SCORES = (0.7, 0.71, 1.0)
VALID_SCORES = (0.69, 0.0, 0.3)


def _continuous(text, images, entries):
    assert '"staleness"' in text and '"is_stale"' not in text
    grid = grid_from_text(text)
    items = []
    for eid, claim, r, c in entries:
        pick = STALE_SCORES if correct_verdict(claim, grid[(r, c)]) else VALID_SCORES
        items.append({"memory_id": eid, "staleness": pick[int(eid[4:]) % 3], "reasoning": "x"})
    return reply(json.dumps(items))


@pytest.mark.parametrize("threshold", [0.7, 0.71, 0.69])
def test_continuous_threshold_is_inclusive(tmp_path, threshold):
    log = run(
        detect(regime="L2", output="continuous", threshold=threshold),
        Auditor(_continuous).model(),
        log_dir=str(tmp_path),
        limit=6,
    )
    tp = fp = fn = 0
    for inst in load_jsonl("L2")[:6]:
        stale = truth_windows(inst)[0]["stale"]
        for i in range(64):
            eid = f"mem_{i:03d}"
            score = (STALE_SCORES if eid in stale else VALID_SCORES)[i % 3]
            flagged = score >= threshold
            tp += flagged and eid in stale
            fp += flagged and eid not in stale
            fn += (not flagged) and eid in stale
    if threshold == 0.7:
        assert (fp, fn) == (0, 0)
        assert metric(log, "f1") == 1.0
    elif threshold == 0.71:
        assert fn > 0 and fp == 0  # the 0.7 stale scores fall below tau
    else:
        assert fp > 0 and fn == 0  # the 0.69 valid scores reach tau
    assert metric(log, "precision") == pytest.approx(tp / (tp + fp))
    assert metric(log, "recall") == pytest.approx(tp / (tp + fn))
    assert metric(log, "f1") == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert metric(log, "parse_failure_rate") == 0.0


# ------------------------------------------------------------------ epochs


def _imperfect(text, images, entries):
    """Deterministic and wrong on every 7th entry."""
    grid = grid_from_text(text)
    return reply(
        json.dumps(
            [
                {"memory_id": eid, "is_stale": correct_verdict(claim, grid[(r, c)]) != (int(eid[4:]) % 7 == 0)}
                for eid, claim, r, c in entries
            ]
        )
    )


def test_metrics_unchanged_under_epochs(tmp_path):
    one = run(detect(regime="L1"), Auditor(_imperfect).model(), log_dir=str(tmp_path / "a"), limit=5)
    auditor = Auditor(_imperfect)
    two = run(detect(regime="L1"), auditor.model(), log_dir=str(tmp_path / "b"), limit=5, epochs=2)
    assert len(auditor.calls) == 2 * 5 * 7
    tp = fp = fn = 0
    for inst in load_jsonl("L1")[:5]:
        stale = truth_windows(inst)[0]["stale"]
        for i in range(64):
            eid = f"mem_{i:03d}"
            flagged = (eid in stale) != (i % 7 == 0)
            tp += flagged and eid in stale
            fp += flagged and eid not in stale
            fn += (not flagged) and eid in stale
    expected = {"precision": tp / (tp + fp), "recall": tp / (tp + fn), "f1": 2 * tp / (2 * tp + fp + fn)}
    assert 0 < expected["f1"] < 1
    for name, value in expected.items():
        assert metric(one, name) == pytest.approx(value)
        assert metric(two, name) == pytest.approx(value)
    assert metric(two, "parse_failure_rate") == 0.0


# --------------------------------------------------------- samples, errors


def test_sample_ids_and_metadata(tmp_path):
    log = run(detect(regime="L2", modality="text"), Auditor(text_perfect).model(), log_dir=str(tmp_path), limit=8)
    instances = load_jsonl("L2")[:8]
    assert [s.id for s in log.samples] == [f"L2-{i:03d}" for i in range(8)]
    assert "L2-007" in {s.id for s in log.samples}
    for sample, inst in zip(log.samples, instances):
        assert sample.metadata["instance_id"] == inst["id"] == sample.id
        assert sample.metadata["regime"] == "L2"
        assert sample.metadata["seed"] == inst["seed"]
        assert sample.metadata["modality"] == "text"
    task = detect(regime="L3", modality="image")
    first = task.dataset[0]
    assert first.id == "L3-000"
    assert first.metadata["modality"] == "image" and first.metadata["regime"] == "L3"
    assert len(task.dataset) == 50


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"regime": "L4"}, "L4"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": -3}, "batch_size"),
        ({"modality": "audio"}, "audio"),
        ({"output": "maybe"}, "maybe"),
        ({"dataset": "/nonexistent/spatialstale-dataset"}, "/nonexistent/spatialstale-dataset"),
    ],
)
def test_bad_parameters_raise_before_any_model_call(tmp_path, kwargs, needle):
    with pytest.raises(ValueError) as exc:
        detect(**kwargs)
    assert needle in str(exc.value)
    # Through eval() with task_args, the error surfaces before the model is called.
    auditor = Auditor(text_perfect)
    with pytest.raises(ValueError) as exc2:
        inspect_eval(
            detect,
            task_args=kwargs,
            model=auditor.model(),
            log_dir=str(tmp_path),
            display="none",
            limit=1,
        )
    assert needle in str(exc2.value)
    assert auditor.calls == []
    assert not list(tmp_path.glob("*.eval"))


def test_missing_dataset_folder_in_tmp(tmp_path):
    missing = tmp_path / "no-such-set"
    with pytest.raises(ValueError, match="not found"):
        detect(dataset=str(missing))


def test_custom_dataset_folder(tmp_path):
    """A folder laid out like the canonical set (manifest + JSONL) is accepted."""
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(DATASET, folder)
    log = run(detect(regime="L1", dataset=str(folder)), Auditor(text_perfect).model(), log_dir=str(tmp_path), limit=2)
    assert metric(log, "f1") == 1.0


# ---------------------------------------------------------------- registry

REGISTRY_SCRIPT = r"""
import json, os, sys
from inspect_ai import eval
out = {}
log = eval("spatialstale_evals/detect", model="spatialstale/observer", limit=2,
           log_dir=sys.argv[1], display="none", log_realtime=False)[0]
out["registry"] = [log.status, log.eval.task, [s.id for s in log.samples],
                   log.results.scores[0].metrics["f1"].value]
os.chdir(sys.argv[2])
log = eval("spatialstale_evals/detect.py", task_args={"regime": "L2", "modality": "image"},
           model="spatialstale/observer", limit=1, log_dir=sys.argv[1], display="none",
           log_realtime=False)[0]
out["file"] = [log.status, log.eval.task, [s.id for s in log.samples],
               log.results.scores[0].metrics["f1"].value]
os.chdir(sys.argv[3])
(log,) = eval("spatialstale_evals/navigate", task_args={"regime": "L1", "strategy": "no_memory"},
              model="spatialstale/observer", limit=1, epochs=1, log_dir=sys.argv[1], display="none",
              log_realtime=False)
out["navigate"] = [log.status, log.eval.task, [s.id for s in log.samples],
                   log.samples[0].scores["navigation_scorer"].value["success"]]
print("RESULT " + json.dumps(out))
"""


def test_registry_entry_point_and_task_file(tmp_path: Path, warm_python: WarmPython) -> None:
    """``spatialstale_evals/detect`` resolves through the installed entry point,
    and ``spatialstale_evals/detect.py`` as a task file, and both log the one
    name ``spatialstale_evals/detect`` (``metadata.task_name``); so does
    ``spatialstale_evals/navigate`` by its registry name (the same fresh
    interpreter, back outside the checkout; forked from the session's warm one,
    which imported nothing of the package). Run outside the checkout, as a
    user would (inside the checkout the cwd's ``*.egg-info`` hides the
    editable install from Inspect's package-name lookup). The wheel's entry
    point: ``tests/test_packaging.py``."""
    work = tmp_path / "elsewhere"
    work.mkdir()
    proc = warm_python.run(
        [sys.executable, "-c", REGISTRY_SCRIPT, str(tmp_path / "logs"), str(ROOT), str(work)], cwd=work, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    status, name, ids, f1 = result["registry"]
    assert status == "success" and name == "spatialstale_evals/detect"
    assert ids == ["L1-000", "L1-001"]
    assert f1 == 1.0  # the observer policy audits perfectly
    status, name, ids, f1 = result["file"]
    assert status == "success" and name == "spatialstale_evals/detect"  # one name however it is started
    assert ids == ["L2-000"] and f1 == 1.0
    status, name, ids, success = result["navigate"]
    assert status == "success" and name == "spatialstale_evals/navigate"
    assert ids == ["L1-000"] and success == 1  # the observer reaches the goal


def test_audit_windows_solver_leaves_one_record_per_window(tmp_path):
    """``audit_windows`` alone (no scorer): one store record per detection
    window, at the L3 event steps, each a full audit of all 64 entries."""
    auditor = Auditor(text_perfect)
    instances = InstanceSet.load(None, "L3")
    task = Task(
        dataset=detect(regime="L3").dataset, solver=audit_windows(instances, task_settings("detect", batch_size=64))
    )
    log = run(task, auditor.model(), log_dir=str(tmp_path), limit=3)
    by_id = {inst["id"]: inst for inst in load_jsonl("L3")[:3]}
    assert len(auditor.calls) == sum(len(i["events"]) for i in by_id.values())
    for sample in log.samples:
        records = sample.store["DetectionState:windows"]
        assert [r["step"] for r in records] == [e["step"] for e in by_id[sample.id]["events"]]
        for r in records:
            assert r["calls"] == 1 and r["entries"] == 64
            assert r["fp"] == r["fn"] == 0 and r["tp"] == len(r["flagged"])
        assert sample.store["SampleState:episode"] == [sample.id, 1]
        assert json.loads(sample.store["SampleState:instance_json"]) == instances.by_id[sample.id].to_json()
        assert "instance" not in sample.metadata


def test_the_answer_names_the_entries_flagged(tmp_path: Path) -> None:
    """``inspect view``'s ANSWER column: the entries the audit flagged. The
    observer flags exactly the stale entries, read here from the dataset's truth."""
    from spatialstale_evals.world import dataset

    (log,) = inspect_eval(detect(regime="L1"), model="spatialstale/observer", limit=1, log_dir=str(tmp_path),
                          display="none")  # fmt: skip
    (sample,) = log.samples
    (score,) = sample.scores.values()
    (window,) = dataset.load(None, "L1")[0].windows
    stale = sorted(eid for eid, kind in window.labels.items() if kind)
    assert stale and score.answer.startswith("flagged ")
    assert sorted(score.answer.removeprefix("flagged ").split(", ")) == stale
