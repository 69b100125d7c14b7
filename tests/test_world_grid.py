"""Invariants of every committed instance, checked against the specification
(specification.md#the-world, #change-regimes, #memory).

Everything here is recomputed independently in the test (own BFS, own flips,
own regex from the specification's exact entry format) instead of calling the world's
helpers on their own output.
"""

from __future__ import annotations

import re

import pytest
from _reference import bfs_path_exists, flip

from spatialstale_evals.world import dataset
from spatialstale_evals.world.instance import step_budget

REGIMES = ("L1", "L2", "L3")

# specification.md#memory (exact): `[mem_021] SAFE at (2,5): Frozen ice - safe to walk`
#                         `[mem_039] DANGER at (4,7): Hole - dangerous, do not step`
F_TEXT = "Frozen ice - safe to walk"
H_TEXT = "Hole - dangerous, do not step"
ENTRY_RE = re.compile(r"^\[(mem_(\d+))\] (SAFE|DANGER) at \((\d+),(\d+)\): ([^\n]+)$")


def diff_cells(a, b):
    return [(r, c) for r in range(len(a)) for c in range(len(a[0])) if a[r][c] != b[r][c]]


@pytest.fixture(scope="module")
def sets():
    return {regime: dataset.load(None, regime) for regime in REGIMES}


def all_instances(sets):
    return [inst for regime in REGIMES for inst in sets[regime]]


# ---------------------------------------------------------------- ids / counts


def test_fifty_instances_per_regime_with_ids(sets):
    for regime in REGIMES:
        insts = sets[regime]
        assert len(insts) == 50
        assert [i.id for i in insts] == [f"{regime}-{k:03d}" for k in range(50)]
        for inst in insts:
            assert re.fullmatch(rf"{regime}-\d{{3}}", inst.id)
            assert inst.regime == regime
            assert (inst.height, inst.width) == (8, 8)
            assert inst.max_steps == 50  # specification.md#the-world: 50 for 8x8


def test_same_index_shares_seed_g0_memory_across_regimes(sets):
    for k in range(50):
        l1, l2, l3 = (sets[r][k] for r in REGIMES)
        assert l1.seed == l2.seed == l3.seed
        assert l1.g0 == l2.g0 == l3.g0
        assert l1.memory == l2.memory == l3.memory
    seeds = [inst.seed for inst in sets["L1"]]
    assert len(set(seeds)) == 50


# ---------------------------------------------------------------- grid shape


def test_grids_shape_alphabet_and_fixed_start_goal(sets):
    for inst in all_instances(sets):
        for grid in (inst.g0, inst.grid):
            assert len(grid) == inst.height
            assert all(len(row) == inst.width for row in grid)
            assert set("".join(grid)) <= set("SFHG")
            assert grid[0][0] == "S"
            assert grid[inst.height - 1][inst.width - 1] == "G"
            assert "".join(grid).count("S") == 1
            assert "".join(grid).count("G") == 1


def test_path_in_g0_and_after_pregame_changes(sets):
    for inst in all_instances(sets):
        assert bfs_path_exists(inst.g0), inst.id
        assert bfs_path_exists(inst.grid), inst.id


def test_l3_path_and_fixed_start_goal_after_every_event(sets):
    for inst in sets["L3"]:
        grid = inst.grid
        for event in inst.events:
            grid = flip(grid, event.cells)
            assert bfs_path_exists(grid), (inst.id, event.step)
            assert grid[0][0] == "S" and grid[-1][-1] == "G"
        # The instance's own view of the world agrees with the cumulative flips.
        assert inst.final_grid() == grid


def test_g0_hole_fraction_roughly_a_quarter(sets):
    # specification.md#the-world: every non-S/G cell is H with probability 0.25 (then
    # rejection-sampled for a path, which pushes it slightly down).
    g0s = [inst.g0 for inst in sets["L1"]]
    holes = sum("".join(g).count("H") for g in g0s)
    cells = sum(len(g) * len(g[0]) - 2 for g in g0s)
    assert 0.15 < holes / cells < 0.30


# ---------------------------------------------------------------- regimes


def test_l1_l2_have_no_events_and_l3_starts_unchanged(sets):
    for regime in ("L1", "L2"):
        for inst in sets[regime]:
            assert inst.events == ()
            assert inst.grid != inst.g0
    for inst in sets["L3"]:
        assert inst.grid == inst.g0


def test_l1_changes_five_to_seven_cells(sets):
    for inst in sets["L1"]:
        changed = diff_cells(inst.g0, inst.grid)
        assert 5 <= len(changed) <= 7, (inst.id, changed)
        for r, c in changed:
            assert {inst.g0[r][c], inst.grid[r][c]} == {"F", "H"}
            assert (r, c) not in ((0, 0), (7, 7))


def test_l2_changes_are_clustered_within_radius_two(sets):
    for inst in sets["L2"]:
        changed = diff_cells(inst.g0, inst.grid)
        assert 1 <= len(changed) <= 16, inst.id
        for r, c in changed:
            assert {inst.g0[r][c], inst.grid[r][c]} == {"F", "H"}
        # specification.md#change-regimes: cells from the radius-2 Manhattan neighbourhood of a centre.
        centres = [
            (r0, c0) for r0 in range(8) for c0 in range(8) if all(abs(r - r0) + abs(c - c0) <= 2 for r, c in changed)
        ]
        assert centres, (inst.id, changed)


def test_l3_events_schedule(sets):
    for inst in sets["L3"]:
        assert inst.events, f"{inst.id}: an L3 instance with no event at all"
        steps = [e.step for e in inst.events]
        assert steps == sorted(set(steps)), inst.id  # at most one event per trigger
        for event in inst.events:
            assert event.step % 5 == 0 and 0 < event.step < inst.max_steps, (inst.id, event)
            assert len(event.cells) == 2
            assert len(set(event.cells)) == 2, (inst.id, event)
            for r, c in event.cells:
                assert 0 <= r < inst.height and 0 <= c < inst.width
                assert (r, c) not in ((0, 0), (inst.height - 1, inst.width - 1))


def test_l3_fire_rate_near_seventy_percent(sets):
    # 0.7 per trigger (specification.md#change-regimes); the count of triggers depends on the
    # documented schedule window, so bound the rate loosely.
    n_events = sum(len(inst.events) for inst in sets["L3"])
    max_triggers = 50 * (50 // 5)
    triggers_used = {e.step for inst in sets["L3"] for e in inst.events}
    n_triggers = 50 * len(triggers_used)
    assert n_triggers <= max_triggers
    assert 0.55 < n_events / n_triggers < 0.85


def test_grid_at_matches_own_cumulative_flips(sets):
    for inst in sets["L3"][:10]:
        for step in range(inst.max_steps + 1):
            expected = flip(inst.g0, [c for e in inst.events if e.step <= step for c in e.cells])
            assert inst.grid_at(step) == expected


# ---------------------------------------------------------------- memory


def test_memory_one_entry_per_cell_matching_g0(sets):
    for inst in all_instances(sets):
        h, w = inst.height, inst.width
        assert len(inst.memory) == h * w
        cells = [(m.row, m.col) for m in inst.memory]
        assert sorted(cells) == [(r, c) for r in range(h) for c in range(w)]
        for m in inst.memory:
            kind = inst.g0[m.row][m.col]
            assert m.id == f"mem_{m.row * w + m.col:03d}"
            assert m.claim == ("DANGER" if kind == "H" else "SAFE")
            match = ENTRY_RE.match(m.text)
            assert match, m.text
            eid, num, claim, row, col, desc = match.groups()
            assert eid == m.id and len(num) == 3
            assert int(num) == m.row * w + m.col
            assert claim == m.claim
            assert (int(row), int(col)) == (m.row, m.col)
            if kind == "F":
                assert desc == F_TEXT
            elif kind == "H":
                assert desc == H_TEXT
            else:
                # S and G are SAFE "with their own description".
                assert claim == "SAFE"
                assert desc not in (F_TEXT, H_TEXT)


def test_memory_examples_from_spec_are_produced_verbatim(sets):
    # Find any instance where (2,5) is F and (4,7) is H and compare literally.
    texts = set()
    for inst in sets["L1"]:
        by_id = {m.id: m.text for m in inst.memory}
        if inst.g0[2][5] == "F":
            texts.add(by_id["mem_021"])
        if inst.g0[4][7] == "H":
            texts.add(by_id["mem_039"])
    assert "[mem_021] SAFE at (2,5): Frozen ice - safe to walk" in texts
    assert "[mem_039] DANGER at (4,7): Hole - dangerous, do not step" in texts


def test_memory_sources_consistent_with_random_walks(sets):
    # Walks start at S, move one 4-neighbour per step and stop on H or G, so S
    # is always walked and every other walked cell was entered from a walked
    # cell that is not H or G.
    for inst in sets["L1"]:
        src = {(m.row, m.col): m.source for m in inst.memory}
        assert set(src.values()) <= {"walk", "synthetic"}
        assert src[(0, 0)] == "walk"
        for (r, c), s in src.items():
            if s != "walk" or (r, c) == (0, 0):
                continue
            preds = [
                (nr, nc)
                for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
                if (nr, nc) in src and src[(nr, nc)] == "walk" and inst.g0[nr][nc] in "SF"
            ]
            assert preds, (inst.id, (r, c))


def test_step_budget_rule():
    assert step_budget(8, 8) == 50
    b16, b32 = step_budget(16, 16), step_budget(32, 32)
    assert 50 < b16 < b32
    # The budget must at least allow the shortest possible route S->G.
    for side in (2, 4, 8, 16, 32):
        assert step_budget(side, side) >= 2 * side - 2


def test_moves_are_considered_up_down_left_right():
    """The harness's move order (neighbours, shortest-path ties) is UP, DOWN,
    LEFT, RIGHT, whatever ids the env gives the actions: prompts and scores
    depend on it."""
    from spatialstale_evals.world.grid import MOVE_ORDER, neighbours, shortest_path

    assert MOVE_ORDER == ("UP", "DOWN", "LEFT", "RIGHT")
    lake = ("SFF", "FFF", "FFG")
    assert neighbours(lake, (1, 1)) == [(0, 1), (2, 1), (1, 0), (1, 2)]  # up, down, left, right
    # Both 2-step routes across an open 2x2 lake tie; DOWN is tried before RIGHT.
    assert shortest_path(("SF", "FG"), (0, 0), (1, 1)) == [(0, 0), (1, 0), (1, 1)]
    # From the bottom-right corner UP is tried before LEFT.
    assert shortest_path(("SF", "FG"), (1, 1), (0, 0)) == [(1, 1), (0, 1), (0, 0)]


def test_cheapest_path_prices_unknown_cells_and_avoids_holes():
    """The one Dijkstra both families' scripted agents plan with: a step onto
    ``?`` costs ``unknown_cost`` (default 3), holes are never entered."""
    from spatialstale_evals.world.grid import cheapest_path, first_move

    lake = ("S?G", "FHF", "FFF")
    through = [(0, 0), (0, 1), (0, 2)]  # cost unknown_cost + 1
    around = [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2), (1, 2), (0, 2)]  # cost 6, the hole at (1,1) skirted
    assert cheapest_path(lake, (0, 0), (0, 2)) == through  # 4 < 6
    assert cheapest_path(lake, (0, 0), (0, 2), unknown_cost=4) == through  # 5 < 6
    assert cheapest_path(lake, (0, 0), (0, 2), unknown_cost=6) == around  # 7 > 6
    assert cheapest_path(("SH", "HG"), (0, 0), (1, 1)) is None
    assert first_move(through) == "RIGHT" and first_move(around) == "DOWN"
    assert first_move([(2, 2)]) is None and first_move(None) is None
