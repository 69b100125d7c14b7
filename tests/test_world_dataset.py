"""Determinism, byte-exact regeneration, larger grids and the stats command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from _builtins import BUILTIN_REGIMES, regime_files
from _reference import bfs_path_exists, flip

from spatialstale_evals import cli
from spatialstale_evals.world import dataset, generate_instance
from spatialstale_evals.world.instance import step_budget
from spatialstale_evals.world.regimes import REGIMES as REGISTRY

CANON = dataset.CANONICAL_DIR
REGIMES = ("L1", "L2", "L3")
PAPER_MEANS = {"L1": 0.094, "L2": 0.141, "L3": 0.143}


def read_jsonl(regime):
    with open(CANON / f"{regime}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ---------------------------------------------------------------- determinism


def test_manifest_describes_canonical_set():
    manifest = json.loads((CANON / "MANIFEST.json").read_text())
    assert manifest["master_seed"] == 2024  # specification.md#change-regimes
    assert manifest["count"] == 50
    assert (manifest["height"], manifest["width"]) == (8, 8)
    assert sorted(manifest["files"]) == regime_files(BUILTIN_REGIMES)  # one file per regime of the package
    import hashlib

    for name, entry in manifest["files"].items():
        data = (CANON / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert entry["instances"] == len(data.splitlines()) == manifest["count"]


def test_write_reproduces_committed_bytes(tmp_path):
    manifest = json.loads((CANON / "MANIFEST.json").read_text())
    out = dataset.write(
        tmp_path / "regen",
        manifest["master_seed"],
        manifest["count"],
        manifest["height"],
        manifest["width"],
    )
    for name in manifest["files"]:
        assert (out / name).read_bytes() == (CANON / name).read_bytes(), name
    # The canonical manifest is this one plus the sizes its sub-folders hold
    # (their files: tests/test_sizes.py; all of them: `spatialstale datasets verify`),
    # less any regime a test module registered (write() writes every registered one).
    regenerated = json.loads((out / "MANIFEST.json").read_text()) | {"sizes": manifest["sizes"]}
    regenerated["files"] = {n: e for n, e in regenerated["files"].items() if dataset.regime_of(n) in BUILTIN_REGIMES}
    assert dataset.encode_manifest(regenerated) == (CANON / "MANIFEST.json").read_text()


def test_verify_canonical_passes():
    manifest = json.loads((CANON / "MANIFEST.json").read_text())
    assert dataset.verify(None) == {name: manifest["count"] for name in regime_files(BUILTIN_REGIMES)}
    assert cli.main(["datasets", "verify", "--size", "8x8"]) == 0


def test_verify_catches_files_that_do_not_regenerate(tmp_path):
    # Files whose checksums match the manifest but were made from another seed.
    import shutil

    folder = tmp_path / "ds"
    shutil.copytree(CANON, folder)
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    manifest["master_seed"] = 2025
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(dataset.DatasetError, match="regenerate"):
        dataset.verify(folder)


def test_same_seed_same_instance_in_fresh_process():
    committed = {r: read_jsonl(r) for r in REGIMES}
    picks = [(r, k, committed[r][k]["seed"]) for r in REGIMES for k in (0, 17, 49)]
    code = (
        "import json, sys\n"
        "from spatialstale_evals.world import generate_instance\n"
        "picks = json.loads(sys.argv[1])\n"
        "print(json.dumps([generate_instance(s, r, k).to_json() for r, k, s in picks]))\n"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(picks)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=60,
    )
    fresh = json.loads(out.stdout)
    for (regime, k, seed), got in zip(picks, fresh):
        # Same as the committed instance, and as a generation in this process.
        assert got == committed[regime][k], (regime, k)
        assert got == generate_instance(seed, regime, k).to_json()


def test_different_seeds_give_different_worlds():
    g0s = {generate_instance(s, "L1", 0).g0 for s in range(10)}
    assert len(g0s) >= 9


def test_generate_count_and_regimes_subset():
    sets = dataset.generate(master_seed=7, count=3, regimes=["L2"])
    assert list(sets) == ["L2"]
    assert [i.id for i in sets["L2"]] == ["L2-000", "L2-001", "L2-002"]
    # Same master seed, same first seeds regardless of count.
    more = dataset.generate(master_seed=7, count=5, regimes=["L2"])
    assert [i.seed for i in more["L2"][:3]] == [i.seed for i in sets["L2"]]


# ---------------------------------------------------------------- larger grids


@pytest.mark.parametrize("side,width,last_id", [(16, 3, "mem_255"), (32, 4, "mem_1023")])
def test_larger_grids(side, width, last_id):
    for seed in (3, 11):
        for regime in REGIMES:
            inst = generate_instance(seed, regime, 1, side, side)
            assert (inst.height, inst.width) == (side, side)
            assert inst.max_steps == step_budget(side, side)
            for grid in (inst.g0, inst.grid):
                assert len(grid) == side and all(len(row) == side for row in grid)
                assert grid[0][0] == "S" and grid[-1][-1] == "G"
                assert bfs_path_exists(grid)
            grid = inst.grid
            for event in inst.events:
                assert event.step % 5 == 0 and 0 < event.step < inst.max_steps
                # 2k * 8 / T cells, rounded either way (k = area / 64; T = 18 or 38 trigger steps)
                assert len(set(event.cells)) == len(event.cells) in {16: (3, 4), 32: (6, 7)}[side]
                grid = flip(grid, event.cells)
                assert bfs_path_exists(grid)
            assert len(inst.memory) == side * side
            assert inst.memory[-1].id == last_id
            for m in inst.memory:
                assert re.fullmatch(rf"mem_\d{{{width}}}", m.id)
                assert m.id == f"mem_{m.row * side + m.col:0{width}d}"
                assert m.text.startswith(f"[{m.id}] ")
                assert m.claim == ("DANGER" if inst.g0[m.row][m.col] == "H" else "SAFE")
            if regime == "L3":
                assert inst.grid == inst.g0
            else:
                assert inst.grid != inst.g0


def test_write_and_verify_small_16x16_set(tmp_path):
    out = dataset.write(tmp_path / "big", master_seed=99, count=2, height=16, width=16)
    assert dataset.verify(out) == {name: 2 for name in regime_files(list(REGISTRY))}  # every registered regime
    insts = dataset.load(out, "L3")
    assert len(insts) == 2 and all((i.height, i.width) == (16, 16) for i in insts)


# ---------------------------------------------------------------- stats


def own_stale_ratio(record):
    g0 = record["g0"]
    grid = record["grid"]
    for event in record["events"]:
        grid = flip(grid, [tuple(c) for c in event["cells"]])
    h, w = record["height"], record["width"]
    return sum(g0[r][c] != grid[r][c] for r in range(h) for c in range(w)) / (h * w)


@pytest.mark.parametrize("regime", REGIMES)
def test_mean_stale_ratio_matches_paper(regime):
    ratios = [own_stale_ratio(rec) for rec in read_jsonl(regime)]
    assert len(ratios) == 50
    mean = sum(ratios) / len(ratios)
    assert abs(mean - PAPER_MEANS[regime]) <= 0.01, (regime, mean)


def test_stats_command_prints_all_regimes_within_target(capsys):
    assert cli.main(["datasets", "stats", "--size", "8x8"]) == 0
    out = capsys.readouterr().out
    rows = {}
    for line in out.splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols and cols[0] in REGIMES:
            rows[cols[0]] = cols
    assert set(rows) == set(REGIMES)
    for regime, cols in rows.items():
        assert cols[-1] == "yes", (regime, cols)
        # Our mean is printed first and agrees with the independent computation.
        ours = float(cols[1].split("+-")[0])
        ratios = [own_stale_ratio(rec) for rec in read_jsonl(regime)]
        assert abs(ours - sum(ratios) / len(ratios)) < 0.0006
        # The paper's mean is printed beside it.
        assert f"{PAPER_MEANS[regime]:.3f}" in cols[3]
