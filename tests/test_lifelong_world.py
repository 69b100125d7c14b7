"""The lifelong task's lifetimes: the canonical set regenerates byte for byte,
and each lifetime changes at its regime's rates, checked here from the grids
themselves (independently of how the generator draws them)."""

from __future__ import annotations

import json

import pytest

from spatialstale_evals import cli
from spatialstale_evals.world import dataset, lifetimes
from spatialstale_evals.world.grid import has_path
from spatialstale_evals.world.regimes import REGIMES, grid_after_events

LIFE_DIR = dataset.CANONICAL_DIR / lifetimes.LIFETIME_DIR


def _diff(a, b):
    return {(r, c) for r in range(len(a)) for c in range(len(a[0])) if a[r][c] != b[r][c]}


def test_the_canonical_lifetimes_regenerate_byte_for_byte_and_leave_the_instances_alone():
    manifest = json.loads((LIFE_DIR / "MANIFEST.json").read_text())
    assert manifest["master_seed"] == dataset.MASTER_SEED and manifest["count"] == 50
    made = lifetimes.generate()
    for regime in REGIMES:
        stored = (LIFE_DIR / f"{regime}.jsonl").read_bytes()
        assert lifetimes.encode_jsonl(made[regime]) == stored
        assert len(stored.splitlines()) == 50
    # the instance files are the canonical ones, untouched (their manifest's sha256s still hold)
    top = dataset.read_manifest(dataset.CANONICAL_DIR)
    for name in top["files"]:
        dataset.verify_file(dataset.CANONICAL_DIR, name, top)


@pytest.mark.parametrize("regime", list(REGIMES))
def test_lifetimes_change_by_their_regime_and_stay_solvable(regime):
    instances = {i.id: i for i in dataset.load(None, regime)}
    for life in lifetimes.load(None, regime):
        inst = instances[life.id]
        first = life.episodes[0]
        assert first.grid == inst.grid and first.events == inst.events  # episode 1 is the instance
        assert len(life.episodes) == lifetimes.MAX_EPISODES
        for before, world in zip(life.episodes, life.episodes[1:]):
            end = grid_after_events(before.grid, before.events)
            flipped = _diff(end, world.grid)
            assert flipped == set(world.changes)
            assert has_path(world.grid) and has_path(world.end_grid)
            assert all(world.grid[r][c] in "FH" for r, c in flipped)  # never S or G
            if regime in ("L0", "L3"):
                assert not flipped  # L3 changes inside episodes only
            elif regime == "L1":
                assert 5 <= len(flipped) <= 7
            else:
                assert 7 <= len(flipped) <= 11
                rows = [r for r, _ in flipped]
                cols = [c for _, c in flipped]
                assert max(rows) - min(rows) <= 4 and max(cols) - min(cols) <= 4  # one radius-2 cluster
            assert bool(world.events) <= (regime == "L3")
        if regime == "L0":
            assert all(w.grid == inst.g0 for w in life.episodes)


def test_a_bad_lifetime_file_fails_loudly_and_generate_writes_them(tmp_path, capsys):
    assert cli.main(["datasets", "generate", "--out", str(tmp_path / "mine"), "--count", "2"]) == 0
    assert "lifelong/L3.jsonl: 2 lifetimes" in capsys.readouterr().out
    assert [lt.id for lt in lifetimes.load(tmp_path / "mine", "L2")] == ["L2-000", "L2-001"]
    assert cli.main(["datasets", "verify", str(tmp_path / "mine")]) == 0
    assert "L1.jsonl: OK (2 lifetimes" in capsys.readouterr().out
    path = tmp_path / "mine" / "lifelong" / "L1.jsonl"
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(dataset.DatasetError, match="L1.jsonl: sha256"):
        lifetimes.load(tmp_path / "mine", "L1")
