"""The harness's caches change nothing that is sent or logged.

- ``render.CELLS`` (the grid drawn without the agent, reused across an
  episode's steps, within a byte budget) and ``observe.png_data_uri`` (one data URI per distinct
  state): a cached PNG equals a fresh one byte for byte, the marker of one
  render never leaks into another, the same state gives the same data URI,
  and a changed cell gives a new image showing the change.
- ``observe.decoded_grid`` (the scripted vision agents' reading of an image):
  what the pixels say, once per distinct image.
- The instance a solver logs in the store is its line of the dataset file.
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from PIL import Image

from spatialstale_evals.harness import observe
from spatialstale_evals.harness.samples import INSTANCE_KEY
from spatialstale_evals.navigate import navigate
from spatialstale_evals.world import dataset, render
from spatialstale_evals.world.observation import visible_grid
from spatialstale_evals.world.render import PAPER, RenderStyle, decode_grid, render_png

STYLES = [PAPER, RenderStyle(palette="grayscale"), RenderStyle(palette="high_contrast", marker="letter")]


def clear_caches() -> None:
    render.CELLS.clear()
    observe.png_data_uri.cache_clear()
    observe.decoded_grid.cache_clear()


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def cell_slice(cell: tuple[int, int], px: int) -> tuple[slice, slice]:
    return slice(cell[0] * px, (cell[0] + 1) * px), slice(cell[1] * px, (cell[1] + 1) * px)


@pytest.fixture
def grid() -> tuple[str, ...]:
    return dataset.load(None, "L2")[3].grid


@pytest.mark.parametrize("style", STYLES, ids=lambda s: f"{s.palette}-{s.marker}")
def test_a_cached_png_equals_a_fresh_render(grid: tuple[str, ...], style: RenderStyle) -> None:
    """Rendered with the grid's cells cached from other agent positions, each
    PNG has the same bytes as one rendered on empty caches."""
    agents = [(0, 0), (3, 4), (7, 7), (5, 1), (3, 4)]
    clear_caches()
    warm = [render_png(grid, a, style) for a in agents]
    assert (render.CELLS.misses, render.CELLS.hits) == (1, len(agents) - 1), "the cells were drawn once and reused"
    for agent, png in zip(agents, warm):
        clear_caches()
        assert render_png(grid, agent, style) == png, agent


def test_the_cells_cache_keeps_to_its_budget(monkeypatch) -> None:
    """With room for two 8x8 grids (384 x 384 bytes each), a third drops the
    least recently used; a dropped grid is drawn again, to the same bytes."""
    grids = [inst.grid for inst in dataset.load(None, "L1")[:3]]
    small = render.CellsCache(budget_bytes=2 * 384 * 384)
    monkeypatch.setattr(render, "CELLS", small)
    first = [render_png(g, (1, 1)) for g in grids[:2]]
    render_png(grids[0], (2, 2))  # grids[0] used last: grids[1] is dropped next
    render_png(grids[2], (1, 1))
    assert (small.misses, small.hits) == (3, 1)
    assert render_png(grids[0], (1, 1)) == first[0] and small.hits == 2
    assert render_png(grids[1], (1, 1)) == first[1] and small.misses == 4


def test_one_render_leaves_no_marker_in_the_next(grid: tuple[str, ...]) -> None:
    """The agent marker changes only the agent's own cell: after rendering the
    agent at A, a render with the agent at B equals, in A's cell, the grid
    drawn with no agent (the cached cells were not drawn on)."""
    clear_caches()
    empty = pixels(render_png(grid, None))
    a, b = (2, 2), (6, 5)
    at_a = pixels(render_png(grid, a))
    at_b = pixels(render_png(grid, b))
    differs = np.any(at_a != empty, axis=-1)
    rows, cols = cell_slice(a, PAPER.cell_px)
    assert differs[rows, cols].any() and differs.sum() == differs[rows, cols].sum(), "marker inside A's cell only"
    assert np.array_equal(at_b[rows, cols], empty[rows, cols]), "no trace of A's marker when the agent is at B"
    rows, cols = cell_slice(b, PAPER.cell_px)
    assert not np.array_equal(at_b[rows, cols], empty[rows, cols])


def test_the_same_state_gives_the_same_data_uri(grid: tuple[str, ...]) -> None:
    clear_caches()
    first = observe.png_data_uri(grid, (4, 4))
    assert observe.png_data_uri(tuple(grid), (4, 4)) is first, "served from the cache"
    clear_caches()
    fresh = "data:image/png;base64," + base64.b64encode(render_png(grid, (4, 4))).decode("ascii")
    assert observe.png_data_uri(grid, (4, 4)) == first == fresh


def test_a_changed_cell_gives_a_new_image(grid: tuple[str, ...]) -> None:
    """Flip one cell: a new data URI whose pixels show the flip (read back by
    the independent pixel decoder), for the full grid and a partial view."""
    row, col = 5, 6
    flipped = list(grid)
    flipped[row] = grid[row][:col] + ("H" if grid[row][col] == "F" else "F") + grid[row][col + 1 :]
    flipped_grid = tuple(flipped)
    clear_caches()
    before = observe.png_data_uri(grid, (4, 4))
    after = observe.png_data_uri(flipped_grid, (4, 4))
    assert before != after
    assert decode_grid(base64.b64decode(after.split(",", 1)[1])) == flipped_grid
    assert decode_grid(base64.b64decode(before.split(",", 1)[1])) == tuple(grid)
    seen_before, seen_after = visible_grid(grid, (4, 5), 1), visible_grid(flipped_grid, (4, 5), 1)
    partial = observe.png_data_uri(seen_after, (4, 5))
    assert partial != observe.png_data_uri(seen_before, (4, 5))
    assert decode_grid(base64.b64decode(partial.split(",", 1)[1])) == seen_after


def test_decoded_grid_reads_each_image_once(grid: tuple[str, ...]) -> None:
    clear_caches()
    uri = observe.png_data_uri(grid, (1, 1))
    assert observe.decoded_grid(uri) == decode_grid(render_png(grid, (1, 1))) == tuple(grid)
    observe.decoded_grid(uri)
    assert observe.decoded_grid.cache_info().hits == 1
    prompt = observe.Prompt("", (uri,))
    assert observe.read_grid(prompt) == tuple(grid)


def test_the_logged_instance_is_its_dataset_line(tmp_path) -> None:
    """The store holds the instance as text: the exact line of the canonical
    JSONL file (read here as bytes), which parses to the instance's JSON."""
    (log,) = inspect_eval(
        navigate(regime="L1", strategy="no_memory", epochs=1),
        model="spatialstale/observer",
        limit=2,
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success"
    path = dataset.resolve(None) / "L1.jsonl"
    lines = {json.loads(line)["id"]: line for line in path.read_text(encoding="utf-8").splitlines()}
    for sample in log.samples or []:
        logged = sample.store[INSTANCE_KEY]
        assert isinstance(logged, str) and logged == lines[sample.id]
        assert json.loads(logged) == dataset.load(None, "L1")[int(sample.id.split("-")[1])].to_json()
