"""Image and text observations (specification.md#observations)."""

from __future__ import annotations

import hashlib
import io
import random

import numpy as np
from PIL import Image

from spatialstale_evals.world import dataset, generate_instance
from spatialstale_evals.world.observation import parse_text_observation, text_observation
from spatialstale_evals.world.render import decode_grid, render_image, render_png

# specification.md#observations colours, hardcoded.
HEX = {"F": "#A8C8E8", "H": "#202020", "S": "#2E8B57", "G": "#DAA520"}
RGB = {k: tuple(int(v[i : i + 2], 16) for i in (1, 3, 5)) for k, v in HEX.items()}
RED = (255, 0, 0)
WHITE = (255, 255, 255)
PX = 48


def png_array(png: bytes) -> np.ndarray:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def canonical_grids():
    return [inst.grid for inst in dataset.load(None, "L1")]


def test_png_sizes():
    grid = canonical_grids()[0]
    img = Image.open(io.BytesIO(render_png(grid, (0, 0))))
    assert img.size == (384, 384)
    big = generate_instance(5, "L1", 0, 16, 16).grid
    img16 = Image.open(io.BytesIO(render_png(big, (3, 9))))
    assert img16.size == (768, 768)
    assert render_image(grid, None).size == (384, 384)
    assert render_image(grid, None).mode == "RGB"


def test_cell_colours_exact_at_centre_right():
    grids = canonical_grids()[:5] + [generate_instance(5, "L2", 0, 16, 16).grid]
    for n, grid in enumerate(grids):
        h, w = len(grid), len(grid[0])
        agent = (n % h, (3 * n) % w)
        arr = png_array(render_png(grid, agent))
        for r in range(h):
            for c in range(w):
                px = tuple(int(v) for v in arr[r * PX + 24, c * PX + 42])
                assert px == RGB[grid[r][c]], (n, (r, c), px)


def test_agent_marker_red_only_inside_agent_cell():
    grid = canonical_grids()[1]
    for agent in [(0, 0), (3, 5), (7, 7), (6, 1)]:
        arr = png_array(render_png(grid, agent))
        red = np.all(arr == RED, axis=-1)
        r, c = agent
        inside = red[r * PX : (r + 1) * PX, c * PX : (c + 1) * PX]
        assert inside.sum() > 20, agent
        assert red.sum() == inside.sum(), f"red pixels outside the agent cell {agent}"
    none = png_array(render_png(grid, None))
    assert not np.all(none == RED, axis=-1).any()


def test_white_grid_lines():
    grid = canonical_grids()[2]
    arr = png_array(render_png(grid, (4, 4)))
    for r in range(8):
        for c in range(8):
            # vertical line at the left edge of the cell, within the cell's rows
            for y in (r * PX + 10, r * PX + 24, r * PX + 40):
                assert tuple(arr[y, c * PX]) == WHITE, (r, c, y)
            # horizontal line at its top edge
            for x in (c * PX + 10, c * PX + 40):
                assert tuple(arr[r * PX, x]) == WHITE, (r, c, x)
            # the line is 1 px: the next column/row is the cell colour
            assert tuple(arr[r * PX + 24, c * PX + 1]) != WHITE
            assert tuple(arr[r * PX + 1, c * PX + 40]) != WHITE


def test_coordinate_labels_in_top_left():
    grid = canonical_grids()[3]
    arr = png_array(render_png(grid, None))
    for r in range(8):
        for c in range(8):
            colour = np.array(RGB[grid[r][c]])
            region = arr[r * PX + 1 : r * PX + 18, c * PX + 1 : c * PX + 30]
            ink = np.any(region != colour, axis=-1)
            assert ink.sum() >= 10, f"no label ink in cell ({r},{c})"
            # Bottom-right corner of the cell carries no label.
            corner = arr[r * PX + 36 : r * PX + 47, c * PX + 36 : c * PX + 47]
            assert np.all(corner == colour)
    # Labels differ between cells (they carry the coordinates).
    a = arr[1:18, 1:30]
    b = arr[1:18, PX + 1 : PX + 30]
    ga, gb = RGB[grid[0][0]], RGB[grid[0][1]]
    assert not np.array_equal(np.any(a != ga, axis=-1), np.any(b != gb, axis=-1))


def test_render_deterministic_bytes():
    grid = canonical_grids()[4]
    assert render_png(grid, (2, 3)) == render_png(grid, (2, 3))
    assert render_png(grid, (2, 3)) != render_png(grid, (2, 4))


def test_decode_grid_round_trip():
    rng = random.Random(0)
    for grid in canonical_grids():
        agent = (rng.randrange(8), rng.randrange(8))
        assert decode_grid(render_png(grid, agent), 8, 8) == grid
    big = generate_instance(8, "L3", 0, 16, 16).g0
    assert decode_grid(render_png(big, (15, 0)), 16, 16) == big


# ---------------------------------------------------------------- text


def test_text_observation_exact_format():
    grid = ("SFH", "FHF", "FFG")
    assert text_observation(grid, (1, 1)) == (
        "Row 0: (0,0)=S (0,1)=F (0,2)=H\n"
        "Row 1: (1,0)=F (1,1)=H (1,2)=F\n"
        "Row 2: (2,0)=F (2,1)=F (2,2)=G\n"
        "Agent at (1,1). Goal at (2,2)."
    )
    assert text_observation(("SF", "HG"), (0, 1)) == (
        "Row 0: (0,0)=S (0,1)=F\nRow 1: (1,0)=H (1,1)=G\nAgent at (0,1). Goal at (1,1)."
    )


def test_text_observation_8x8_first_row_and_footer():
    grid = canonical_grids()[0]
    lines = text_observation(grid, (2, 6)).split("\n")
    assert len(lines) == 9
    assert lines[0] == "Row 0: " + " ".join(f"(0,{c})={grid[0][c]}" for c in range(8))
    assert lines[7] == "Row 7: " + " ".join(f"(7,{c})={grid[7][c]}" for c in range(8))
    assert lines[8] == "Agent at (2,6). Goal at (7,7)."


def test_parse_text_observation_round_trip_all_l1():
    rng = random.Random(1)
    for inst in dataset.load(None, "L1"):
        for grid in (inst.g0, inst.grid):
            agent = (rng.randrange(8), rng.randrange(8))
            text = "Current observation:\n" + text_observation(grid, agent) + "\nChoose a move."
            assert parse_text_observation(text) == (grid, agent, (7, 7))


def test_rendered_pixels_are_pinned():
    """What a model sees is fixed: the decoded pixels of 15 canonical renders
    hash to the value the first palette-drawn release produced (identical to
    the earlier RGB-then-quantise renderer). The PNG bytes are not pinned:
    they depend on the zlib build behind Pillow."""
    digest = hashlib.sha256()
    for inst in dataset.load(None, "L2")[:5]:
        for agent in ((0, 0), (3, 4), None):
            digest.update(png_array(render_png(inst.grid, agent)).tobytes())
    assert digest.hexdigest() == "68d691d9a4c05e8858f43a6700e3302c931e8feae83ef20ff2e14ac9fd4869f6"
