"""The image observation (SPEC section 4): a colour-coded grid as PNG bytes.

Cells are always 48 px, so an 8x8 grid is the paper's 384x384 image and larger
grids grow (768 px at 16x16, 1536 px at 32x32) instead of shrinking their
coordinate labels below legibility. Labels use Pillow's built-in bitmap font,
which is the same on every machine, so a grid always renders to the same pixels
(the PNG bytes depend on the zlib build Pillow uses).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

from spatialstale_evals.world.grid import UNSEEN, Cell

CELL_PX = 48
COLOURS: dict[str, tuple[int, int, int]] = {
    "F": (0xA8, 0xC8, 0xE8),
    "H": (0x20, 0x20, 0x20),
    "S": (0x2E, 0x8B, 0x57),
    "G": (0xDA, 0xA5, 0x20),
}
AGENT_COLOUR = (255, 0, 0)
LINE_COLOUR = (255, 255, 255)
#: Label ink per cell type: dark on light cells, light on dark ones.
LABEL_COLOURS = {"F": (0, 0, 0), "G": (0, 0, 0), "H": (255, 255, 255), "S": (255, 255, 255)}
#: Cells out of the agent's view (partial observability, SPEC 8.1): fog grey,
#: labelled like every other cell.
FOG_COLOUR = (0x80, 0x80, 0x80)
FOG_LABEL = (0, 0, 0)
#: What the colours are called in the prompts' image captions (a palette and
#: its words change together, here).
COLOUR_NAMES = {"F": "light blue", "H": "near-black", "S": "green", "G": "gold", UNSEEN: "grey"}
AGENT_MARKER = "red triangle"


@lru_cache(maxsize=1)
def _font() -> ImageFont.ImageFont:
    return ImageFont.load_default_imagefont()


def image_size(height: int, width: int) -> tuple[int, int]:
    """(width_px, height_px) of the rendered grid."""
    return width * CELL_PX, height * CELL_PX


#: Every colour the renderer uses. Drawing straight into a palette image is
#: exact because the bitmap font is not anti-aliased: the picture has only
#: these colours, so nothing needs quantising.
PALETTE: tuple[tuple[int, int, int], ...] = tuple(
    dict.fromkeys([LINE_COLOUR, *COLOURS.values(), *LABEL_COLOURS.values(), AGENT_COLOUR])
)
#: The palette of an image with unseen cells: fog grey appended, so the
#: indices (and the bytes of fully observed images) do not move.
FOG_PALETTE = (*PALETTE, FOG_COLOUR)
_INDEX = {colour: i for i, colour in enumerate(FOG_PALETTE)}
_FILL = {**COLOURS, UNSEEN: FOG_COLOUR}
_INK = {**LABEL_COLOURS, UNSEEN: FOG_LABEL}


def render_palette(grid: Sequence[str], agent: Cell | None) -> Image.Image:
    """The observation as a palette ("P") image, colours indexed in ``PALETTE``."""
    height, width = len(grid), len(grid[0])
    img = Image.new("P", image_size(height, width), _INDEX[LINE_COLOUR])
    palette = FOG_PALETTE if any(UNSEEN in row for row in grid) else PALETTE
    img.putpalette([v for colour in palette for v in colour])
    draw = ImageDraw.Draw(img)
    font = _font()
    for r, row in enumerate(grid):
        for c, kind in enumerate(row):
            x0, y0 = c * CELL_PX, r * CELL_PX
            # 1 px white line on the left/top of every cell (and the image border).
            draw.rectangle([x0 + 1, y0 + 1, x0 + CELL_PX - 1, y0 + CELL_PX - 1], fill=_INDEX[_FILL[kind]])
            draw.text((x0 + 3, y0 + 2), f"({r},{c})", fill=_INDEX[_INK[kind]], font=font)
    if agent is not None:
        ar, ac = agent
        cx, top = ac * CELL_PX + CELL_PX // 2, ar * CELL_PX
        # A narrow upward triangle in the lower middle: it leaves the label and
        # the cell's right-hand side showing the underlying type.
        draw.polygon(
            [(cx, top + 16), (cx - 10, top + CELL_PX - 6), (cx + 10, top + CELL_PX - 6)],
            fill=_INDEX[AGENT_COLOUR],
        )
    return img


def render_image(grid: Sequence[str], agent: Cell | None) -> Image.Image:
    """The observation as an RGB image (the env's ``rgb_array``)."""
    return render_palette(grid, agent).convert("RGB")


def render_png(grid: Sequence[str], agent: Cell | None) -> bytes:
    buffer = io.BytesIO()
    # A palette PNG is several times smaller than RGB (it keeps image-mode
    # logs small). zlib level 6 encodes 8x faster than 9 for a few % more
    # bytes (0.6 vs 4.9 ms on 8x8): encoding was the image-mode harness's
    # largest cost.
    render_palette(grid, agent).save(buffer, format="PNG", optimize=False, compress_level=6)
    return buffer.getvalue()


def sample_cell_colour(img: Image.Image, cell: Cell) -> tuple[int, int, int]:
    """Colour at the cell's centre-right: clear of label, marker and grid lines."""
    r, c = cell
    x = c * CELL_PX + CELL_PX - 6
    y = r * CELL_PX + CELL_PX // 2
    rgb = img if img.mode == "RGB" else img.convert("RGB")
    return rgb.getpixel((x, y))  # type: ignore[return-value]


def decode_grid(png: bytes, height: int, width: int) -> tuple[str, ...]:
    """Read cell types back from a rendered PNG by nearest colour (for scripted
    vision agents and tests); fog reads as ``?``."""
    img = Image.open(io.BytesIO(png)).convert("RGB")
    rows = []
    for r in range(height):
        row = ""
        for c in range(width):
            px = sample_cell_colour(img, (r, c))
            row += min(_FILL, key=lambda k: sum((a - b) ** 2 for a, b in zip(_FILL[k], px)))
        rows.append(row)
    return tuple(rows)
