"""The canonical 16x16 and 32x32 sets (specification.md#larger-worlds), the tasks' ``size`` parameter,
and images of larger grids.

Expected values come from the specification and docs/dataset.md's scaling rule, computed here
(reference BFS, own flips, own gzip and sha256, own stale ratios), not read
from the package's generators.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from _builtins import BUILTIN_REGIMES, regime_files
from _reference import bfs_path_exists, flip
from inspect_ai import eval as inspect_eval
from PIL import Image, ImageDraw, ImageFont

from spatialstale_evals import cli, paper
from spatialstale_evals.detect import detect
from spatialstale_evals.harness.observe import ImageObservation, Prompt, read_grid
from spatialstale_evals.harness.params import defaults
from spatialstale_evals.harness.samples import InstanceSet
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.runs.matrix import MatrixSpec, format_plan, plan
from spatialstale_evals.world import dataset, generate_instance, regimes
from spatialstale_evals.world.memory import id_width
from spatialstale_evals.world.regimes import change_scale
from spatialstale_evals.world.render import RenderStyle, render_image

CANON = Path(str(dataset.CANONICAL_DIR))
#: The package's regimes: the canonical set holds one file of each, at every size.
REGIMES = BUILTIN_REGIMES
SIZES = dataset.SIZES
LARGER = SIZES[1:]
#: The determinism pin: the sha256 of each size's MANIFEST.json, which records
#: every data file's sha256 (checked against the files below). Regenerating a
#: size, or adding a regime to it, moves its pin; adding a size moves the first
#: one's too (its manifest lists the sizes), and then only its ``sizes`` line may
#: differ: the 8x8 files must not move.
MANIFEST_SHA = {
    "8x8": "1511fb4a8b5cde7f9476b790415abf76a70da699186784885140d899396c1dfa",
    "16x16": "1a2baba7a17d7d14fdd182acda4e5be170315a42d53c790744b268f76ab09427",
    "32x32": "f3f5fcf7f0cb7531da8a5e18bd89c103826be9d97ed026f7deea54fb8ae55c6d",
}
# specification.md#memory (exact) and docs/dataset.md's S/G descriptions.
DESCRIPTIONS = {
    "F": "Frozen ice - safe to walk",
    "H": "Hole - dangerous, do not step",
    "S": "Start tile - safe to walk",
    "G": "Goal tile - safe to walk",
}


def side(size: str) -> int:
    return int(size.split("x")[0])


def folder(size: str) -> Path:
    return CANON if size == "8x8" else CANON / size


@cache
def raw(size: str, regime: str) -> bytes:
    """The JSONL text of a canonical file, decompressed here if it is stored gzipped."""
    plain = folder(size) / f"{regime}.jsonl"
    return plain.read_bytes() if plain.exists() else gzip.decompress((folder(size) / f"{regime}.jsonl.gz").read_bytes())


@cache
def records(size: str, regime: str) -> tuple[dict, ...]:
    return tuple(json.loads(line) for line in raw(size, regime).decode().splitlines())


def final_grid(rec: dict) -> list[str]:
    grid = rec["grid"]
    for event in rec["events"]:
        grid = flip(grid, [tuple(c) for c in event["cells"]])
    return grid


def stale_ratio(rec: dict) -> float:
    g0, grid = rec["g0"], final_grid(rec)
    return sum(a != b for r0, r1 in zip(g0, grid) for a, b in zip(r0, r1)) / (rec["height"] * rec["width"])


def mean_neighbourhood(n: int) -> float:
    """Own count: mean number of non-S/G cells within Manhattan 2 of a non-S/G cell of an n x n grid."""
    ends = {(0, 0), (n - 1, n - 1)}
    cells = [(r, c) for r in range(n) for c in range(n) if (r, c) not in ends]
    return sum(sum(abs(r - a) + abs(c - b) <= 2 for a, b in cells) for r, c in cells) / len(cells)


# ---------------------------------------------------------------- layout


def manifest(size: str) -> dict:
    return json.loads((folder(size) / "MANIFEST.json").read_text())


def test_layout_manifests_and_checksums():
    assert manifest(SIZES[0])["sizes"] == list(SIZES) == dataset.sizes_of(None)
    assert set(MANIFEST_SHA) == set(SIZES)
    for size in SIZES:
        text = (folder(size) / "MANIFEST.json").read_bytes()
        assert hashlib.sha256(text).hexdigest() == MANIFEST_SHA[size], f"{size}: the canonical set moved"
        m = manifest(size)
        # specification.md#change-regimes: 50 seeds from master seed 2024
        assert (m["master_seed"], m["count"]) == (2024, 50)
        assert (m["height"], m["width"]) == (side(size), side(size))
        assert sorted(dataset.regime_of(name) for name in m["files"]) == sorted(REGIMES)  # one file per regime
        for regime in REGIMES:
            data = raw(size, regime)
            # Compressed exactly when the JSONL exceeds 2 MB; the checksum is of the JSONL text.
            name = f"{regime}.jsonl" + (".gz" if len(data) > 2_000_000 else "")
            assert m["files"][name] == {"sha256": hashlib.sha256(data).hexdigest(), "instances": m["count"]}
            assert len(data.splitlines()) == m["count"]
        on_disk = sorted(p.name for p in folder(size).iterdir() if p.is_file() and p.name != "MANIFEST.json")
        assert on_disk == sorted(m["files"])


@pytest.mark.parametrize("size", LARGER)
def test_larger_sets_keep_the_world_rules(size):
    n, count = side(size), manifest(size)["count"]
    cells, budget = n * n, round(50 * (2 * n) / 16)  # specification.md#the-world: the half-perimeter rule
    # specification.md#memory: the row-major index padded to the width of N-1 (at least the paper's 3 digits).
    width = max(3, len(str(cells - 1)))
    sets = {r: records(size, r) for r in REGIMES}
    for regime, recs in sets.items():
        assert [r["id"] for r in recs] == [f"{regime}-{i:03d}" for i in range(count)]
    for i in range(count):
        base = sets["L0"][i]
        for regime in REGIMES:
            rec = sets[regime][i]
            assert (rec["seed"], rec["g0"], rec["memory"]) == (base["seed"], base["g0"], base["memory"])
            assert (rec["height"], rec["width"], rec["max_steps"]) == (n, n, budget)
        g0 = base["g0"]
        assert len(g0) == n and all(len(row) == n for row in g0)
        assert g0[0][0] == "S" and g0[-1][-1] == "G" and bfs_path_exists(g0)
        assert len(base["memory"]) == cells
        assert base["memory"][0]["id"] == "mem_" + "0" * width and base["memory"][-1]["id"] == f"mem_{cells - 1}"
        for k, m in enumerate(base["memory"]):
            r, c = divmod(k, n)
            kind = g0[r][c]
            eid = f"mem_{k:0{width}d}"
            claim = "DANGER" if kind == "H" else "SAFE"
            assert (m["id"], m["row"], m["col"], m["claim"]) == (eid, r, c, claim)
            assert m["text"] == f"[{eid}] {claim} at ({r},{c}): {DESCRIPTIONS[kind]}"
            assert m["source"] in ("walk", "synthetic")
        assert base["memory"][0]["source"] == "walk"
        assert sets["L0"][i]["grid"] == g0 and not sets["L0"][i]["events"]
        for regime in ("L1", "L2"):
            rec = sets[regime][i]
            assert not rec["events"] and bfs_path_exists(rec["grid"]) and rec["grid"] != g0
            assert rec["grid"][0][0] == "S" and rec["grid"][-1][-1] == "G"
        l3 = sets["L3"][i]
        assert l3["grid"] == g0
        grid = g0
        for event in l3["events"]:
            assert event["step"] % 5 == 0 and 5 <= event["step"] < budget - 5
            cells_flipped = [tuple(c) for c in event["cells"]]
            assert len(set(cells_flipped)) == len(cells_flipped)
            grid = flip(grid, cells_flipped)  # own flip: only F/H cells, asserted there
            assert bfs_path_exists(grid), (l3["id"], event["step"])


@pytest.mark.parametrize("size", LARGER)
def test_change_counts_follow_the_scaling_rule(size):
    """docs/dataset.md, Larger worlds: L1 flips round(5k)..round(7k) distinct cells; L2
    ends in 7k..11k stale cells, L3 in 5k..14k; an L3 event flips the floor or
    the ceiling of 2k * 8 / T cells (T: trigger steps 5, 10, ... below budget - 5)."""
    n = side(size)
    k = n * n / 64
    triggers = len(range(5, round(50 * 2 * n / 16) - 5, 5))
    per_event = 2 * k * 8 / triggers

    def stale(rec: dict) -> int:
        return round(stale_ratio(rec) * n * n)

    assert all(round(5 * k) <= stale(r) <= round(7 * k) for r in records(size, "L1"))
    assert all(7 * k <= stale(r) <= 11 * k for r in records(size, "L2"))
    assert all(5 * k <= stale(r) <= 14 * k for r in records(size, "L3"))
    sizes = {len(e["cells"]) for r in records(size, "L3") for e in r["events"]}
    assert sizes == {math.floor(per_event), math.ceil(per_event)}
    scale = change_scale(n, n, round(50 * 2 * n / 16))
    assert scale.l2_centres == pytest.approx(k * mean_neighbourhood(8) / mean_neighbourhood(n))
    assert scale.l3_cells_per_event == pytest.approx(per_event)


def test_the_budget_and_id_width_rules_at_the_specs_sizes():
    """The two rules above, at the sizes the specification works out (16x16: 100 steps, 3 digits; 32x32: 200, 4)."""
    assert [round(50 * (2 * n) / 16) for n in (8, 16, 32)] == [50, 100, 200]
    assert [max(3, len(str(n * n - 1))) for n in (8, 16, 32)] == [3, 3, 4]


def test_the_rule_is_the_paper_calibration_at_8x8():
    s = change_scale(8, 8, 50)
    assert (s.area, s.l1_changes, s.l2_centres, s.l3_cells_per_event) == (1.0, (5, 7), 1.0, 2.0)
    assert (s.l2_band, s.l3_band) == ((7, 11), (5, 14))


def test_id_width_against_the_spec():
    # "zero-padded to the width of N-1", at least the paper's three digits (mem_044 on 8x8)
    assert [id_width(n) for n in (4, 64, 256, 1000, 1001, 1024, 10_000, 10_001)] == [3, 3, 3, 3, 4, 4, 4, 5]


# ---------------------------------------------------------------- regeneration and statistics


def test_16x16_regenerates_byte_for_byte():
    sets = dataset.generate(height=16, width=16, regimes=REGIMES)
    for regime in REGIMES:
        assert dataset.encode_jsonl(sets[regime]) == raw("16x16", regime), regime


@pytest.mark.parametrize("regime", REGIMES)
def test_32x32_instances_regenerate(regime):
    """A few lines of each 32x32 file (the whole set: `spatialstale datasets verify --size 32x32`)."""
    seeds = np.random.default_rng(2024).integers(0, 2**31 - 1, size=50)  # from master seed 2024
    lines = raw("32x32", regime).decode().splitlines()
    for i in (0, 37):
        made = generate_instance(int(seeds[i]), regime, i, 32, 32)
        assert json.dumps(made.to_json(), separators=(",", ":")) == lines[i]


@pytest.mark.parametrize("size", LARGER)
def test_mean_stale_ratio_within_001_of_8x8(size):
    for regime in REGIMES:
        eight = np.mean([stale_ratio(r) for r in records("8x8", regime)])
        ours = np.mean([stale_ratio(r) for r in records(size, regime)])
        assert abs(ours - eight) <= 0.01, (size, regime, ours, eight)


def test_stats_command_prints_larger_sets_beside_8x8(capsys):
    assert cli.main(["datasets", "stats", "--size", ",".join(LARGER)]) == 0
    tables = capsys.readouterr().out.split("Stale ratio per regime")[1:]
    assert len(tables) == len(LARGER)
    for size, table in zip(LARGER, tables):
        assert f"{size}," in table.splitlines()[0]
        rows = [
            [c.strip() for c in line.strip("|").split("|")] for line in table.splitlines() if line.startswith("| L")
        ]
        assert [r[0] for r in rows] == list(REGIMES)
        for regime, mean, _, eight, _, _, verdict in rows:
            assert float(mean.split("+-")[0]) == pytest.approx(
                np.mean([stale_ratio(r) for r in records(size, regime)]), abs=6e-4
            )
            assert float(eight) == pytest.approx(np.mean([stale_ratio(r) for r in records("8x8", regime)]), abs=6e-4)
            assert verdict == "yes"


# ---------------------------------------------------------------- dataset folders


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A small two-size tree like the canonical one (8x8 on top, 16x16 below)."""
    return dataset.write(tmp_path_factory.mktemp("tree") / "mine", count=2, more_sizes=[(16, 16)])


def test_size_picks_the_folder_or_its_sub_folder(tree):
    assert json.loads((tree / "MANIFEST.json").read_text())["sizes"] == ["8x8", "16x16"]
    assert {i.height for i in dataset.load(tree, "L1", "16x16")} == {16}
    assert {i.height for i in dataset.load(tree, "L1", "8x8")} == {8}
    assert {i.height for i in dataset.load(tree / "16x16", "L1", "16x16")} == {16}  # its own size: used directly
    task = detect(dataset=str(tree), size="16x16")
    assert [len(s.metadata["windows"]) for s in task.dataset] == [1, 1]
    assert {s.metadata["size"] for s in task.dataset} == {"16x16"} and task.metadata["size"] == "16x16"
    own = detect(dataset=str(tree / "16x16"))  # a folder of one's own at the default size: read at its own
    assert {s.metadata["size"] for s in own.dataset} == {"16x16"} and "size=16x16" in own.dataset[0].input
    with pytest.raises(ValueError, match=r"no 32x32 set; it holds 8x8, 16x16.*--size 32x32"):
        navigate(dataset=str(tree), size="32x32")


def test_a_set_of_any_size_runs_from_its_folder(tmp_path):
    """A size the tasks do not name (12x12, generated by the user) runs with ``dataset=`` alone."""
    out = dataset.write(tmp_path / "twelve", count=2, height=12, width=12)
    task = detect(dataset=str(out), regime="L2")
    assert {s.metadata["size"] for s in task.dataset} == {"12x12"}
    assert {len(s.metadata["windows"]) for s in task.dataset} == {1}
    with pytest.raises(ValueError, match=r"no 16x16 set; it holds 12x12"):
        detect(dataset=str(out), size="16x16")


@pytest.mark.parametrize("task", [detect, navigate, probe])
def test_the_default_size_is_the_papers_and_the_first(task):
    # InstanceSet.load reads a folder's own size at it
    assert defaults(task)["size"] == SIZES[0] == "x".join(map(str, paper.GRID))


def test_a_missing_sub_folder_fails_verification(tree, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(tree, copy)
    shutil.rmtree(copy / "16x16")
    with pytest.raises(dataset.DatasetError, match="lists the sizes 8x8, 16x16 but the folder holds 8x8"):
        dataset.sizes_of(copy)
    assert cli.main(["datasets", "verify", str(copy)]) == 2


def test_compressed_files_write_load_and_verify(tmp_path, monkeypatch):
    monkeypatch.setattr(dataset, "GZIP_OVER", 1000)  # every file counts as long
    out = dataset.write(tmp_path / "gz", count=2, height=4, width=4)
    registered = list(regimes.REGIMES)  # what write() writes: every regime registered now
    assert sorted(p.name for p in out.iterdir()) == sorted([*regime_files(registered, gz=True), "MANIFEST.json"])
    again = dataset.write(tmp_path / "gz2", count=2, height=4, width=4)
    for name in ("L0.jsonl.gz", "L3.jsonl.gz"):
        data = gzip.decompress((out / name).read_bytes())
        assert (out / name).read_bytes() == (again / name).read_bytes()  # mtime 0: the same bytes each time
        entry = json.loads((out / "MANIFEST.json").read_text())["files"][name]
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert dataset.verify(out) == {f"{r}.jsonl.gz": 2 for r in registered}
    assert [i.id for i in dataset.load(out, "L2")] == ["L2-000", "L2-001"]
    (out / "L1.jsonl.gz").write_bytes((out / "L1.jsonl.gz").read_bytes()[:50])
    with pytest.raises(dataset.DatasetError, match="L1.jsonl.gz"):
        dataset.load(out, "L1")


# ---------------------------------------------------------------- the size parameter


@pytest.mark.parametrize("task", [detect, navigate, probe])
@pytest.mark.parametrize("bad", [f"{2 * side(SIZES[-1])}x{2 * side(SIZES[-1])}", SIZES[1].upper(), "16", 16, None])
def test_unknown_size_is_an_error(task, bad):
    with pytest.raises(ValueError, match=f"size must be one of {', '.join(SIZES)}"):
        task(size=bad)


def test_size_selects_the_canonical_set_and_is_recorded():
    default, big = detect(), detect(regime="L3", size="32x32")
    assert not re.search(r"\bsize=", default.dataset[0].input) and default.dataset[0].metadata["size"] == "8x8"
    assert "size=32x32" in big.dataset[0].input and big.metadata["size"] == "32x32"
    expected = records("32x32", "L3")
    assert [s.id for s in big.dataset] == [r["id"] for r in expected]
    # The truth per window is that of the 32x32 files: 4-digit ids, one window per event.
    first = big.dataset[0].metadata["windows"]
    assert len(first) == len(expected[0]["events"])
    assert all(re.fullmatch(r"mem_\d{4}", eid) for w in first for eid in w["thaw"] + w["freeze"])
    names = {InstanceSet.load(None, "L1", s).name for s in ("8x8", "16x16")}
    assert names == {"spatialstale-v1/L1", "spatialstale-v1/16x16/L1"}  # 8x8 keeps its name (task identity)
    nav = navigate(size="16x16", strategy="oracle", epochs=1)
    assert nav.metadata["max_steps"] == 100 and nav.metadata["size"] == "16x16"


def test_detect_16x16_runs_end_to_end(tmp_path):
    (log,) = inspect_eval(
        detect(size="16x16", modality="image"), model="spatialstale/observer", log_dir=str(tmp_path), limit=1,
        display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    assert log.results.scores[0].metrics["f1"].value == 1.0
    value = log.samples[0].scores["detection_scorer"].metadata["counts"]
    rec = records("16x16", "L1")[0]
    stale = round(stale_ratio(rec) * 256)
    assert (value["tp"], value["fp"], value["fn"]) == (stale, 0, 0)
    assert len([e for e in log.samples[0].events if e.event == "model"]) == math.ceil(256 / 10)


def test_matrix_size_option():
    spec = MatrixSpec(
        models=["spatialstale/observer"], regimes=["L1"], axes={"modalities": ["text"]}, families=["detect"]
    )
    (task,) = plan(MatrixSpec(**{**spec.__dict__, "size": "16x16", "seeds": 1}))
    assert task.task_args["size"] == "16x16" and task.task.metadata["size"] == "16x16"
    assert task.cost.calls == math.ceil(256 / 10)  # one window of 256 entries in batches of 10
    assert "grid size: 16x16" in format_plan(MatrixSpec(**{**spec.__dict__, "size": "16x16"}), [task])
    (default,) = plan(spec, estimate=False)
    assert "size" not in default.task_args  # a default matrix names the tasks it named before
    with pytest.raises(ValueError, match="unknown size 12x12"):
        plan(MatrixSpec(**{**spec.__dict__, "size": "12x12"}))
    with pytest.raises(ValueError, match="matrix's own axes"):
        plan(MatrixSpec(**{**spec.__dict__, "factors": {"size": ["16x16"]}}))
    with pytest.raises(SystemExit):
        cli.main(["matrix", "--model", "x", "--log-dir", "l", "--size", "12x12", "--dry-run"])


# ---------------------------------------------------------------- images of larger grids


def label_mask(text: str) -> np.ndarray:
    """Own rendering of a label with Pillow's bitmap font, cropped to its ink."""
    canvas = Image.new("1", (80, 20), 0)
    ImageDraw.Draw(canvas).text((0, 0), text, fill=1, font=ImageFont.load_default_imagefont())
    ink = np.asarray(canvas, dtype=bool)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    return ink[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


@pytest.mark.parametrize("px", [48, 46])
def test_two_digit_labels_fit_their_cells(px):
    grid = tuple(records("32x32", "L2")[0]["grid"])
    arr = np.asarray(render_image(grid, None, RenderStyle(cell_px=px)))
    assert arr.shape == (32 * px, 32 * px, 3)
    # Every cell's left and top line is intact: no label runs into a neighbour.
    assert (arr[:, ::px] == 255).all() and (arr[::px, :] == 255).all()
    for r, c in [(31, 31), (31, 30), (30, 31), (0, 31), (31, 0), (10, 29), (29, 10), (5, 5)]:
        cell = arr[r * px + 1 : (r + 1) * px, c * px + 1 : (c + 1) * px]
        fill = cell[px // 2, -3]  # centre-right: below the label
        ink = (cell != fill).any(axis=2)
        rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        # The whole label, unclipped and nothing else, in the cell's top third with a column to spare.
        assert np.array_equal(ink[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1], label_mask(f"({r},{c})"))
        assert cols[-1] <= px - 3 and rows[-1] < px // 3, (r, c)


def test_minimum_cell_size_for_two_digit_labels():
    """The rule (label 3 px in, its advance width inside the cell; 2 + 11 px of
    label above the marker's tip at a third) gives 46 px on 32x32, where the
    labels were checked to fit pixel by pixel (above); one less is refused."""
    font = ImageFont.load_default_imagefont()
    widest = max(int(font.getbbox(f"({r},{c})")[2]) for r in range(32) for c in range(32))
    need = next(px for px in range(12, 100) if 3 + widest < px and 2 + 11 <= px // 3)
    assert (widest, need) == (42, 46)
    RenderStyle(cell_px=need).validate(32, 32)
    with pytest.raises(ValueError, match=f"minimum is {need}"):
        detect(size="32x32", modality="image", image_cell_px=need - 1)


@pytest.mark.parametrize("size", LARGER)
@pytest.mark.parametrize("palette", ["paper", "high_contrast", "grayscale"])
def test_the_observer_reads_larger_grids_from_pixels(size, palette):
    obs = ImageObservation(RenderStyle(palette=palette))
    n = side(size)
    for k, rec in enumerate(records(size, "L3")[:3]):
        grid = tuple(final_grid(rec))
        agent = (k * 7 % n, n - 1 - k)
        parts = obs.parts(grid, agent, "audit")
        prompt = Prompt(text=parts[0].text, images=(parts[1].image,))
        assert read_grid(prompt) == grid  # what the scripted observer sees
