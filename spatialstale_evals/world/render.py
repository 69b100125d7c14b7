"""The image observation (docs/specification.md#observations): a colour-coded
grid as PNG bytes, drawn in one of the rendering styles
(docs/specification.md#how-the-grid-is-drawn).

The default style is the paper's: 48 px cells (an 8x8 grid is the paper's
384x384 image; larger grids grow instead of shrinking their labels below
legibility), its palette, coordinate labels and a red triangle for the agent.
A ``RenderStyle`` varies one axis at a time: the palette (``PALETTES``:
``paper``, ``high_contrast``, ``grayscale``), the labels, the cell size and
the agent marker (``triangle`` or ``letter``). Labels use Pillow's built-in
bitmap font, the same on every machine, so a grid always renders to the same
pixels (the PNG bytes depend on the zlib build Pillow uses).

``decode_grid`` reads any style back from the pixels alone (cell size from the
grid lines, types from the fill colours of every palette): the scripted
vision agents see what a model sees.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, get_args

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from spatialstale_evals.world.grid import UNSEEN, Cell

RGB = tuple[int, int, int]
PaletteName = Literal["paper", "high_contrast", "grayscale"]
Marker = Literal["triangle", "letter"]
MARKERS: tuple[Marker, ...] = get_args(Marker)

CELL_PX = 48
#: The 1 px line on the left and top of every cell: white in every palette
#: (no palette fills a cell with it, so the lines give the cell size back).
LINE_COLOUR: RGB = (255, 255, 255)
#: The bitmap font's line height, and where labels start in a cell.
LABEL_LINE_PX, LABEL_X, LABEL_Y = 11, 3, 2
#: Below this a cell has no room for the marker and a clear sample point.
MIN_CELL_PX = 12
#: The longest side a rendered grid may have (``image_cell_px`` times the longer
#: grid side): a bound on the memory one image takes (about 50 MB at 4096 x 4096 RGB).
MAX_IMAGE_SIDE_PX = 4096
#: What the ``letter`` marker writes.
MARKER_LETTER = "A"


@dataclass(frozen=True)
class Palette:
    """The colours of one palette and the words the image captions use for
    them (a palette and its words change together, here). ``type_letters``:
    each label has a second line with the cell's type letter (a palette
    whose fills are told apart by brightness alone relies on it)."""

    fills: dict[str, RGB]
    ink: dict[str, RGB]
    agent: RGB
    agent_ink: RGB
    names: dict[str, str]
    agent_name: str
    agent_outline: RGB | None = None
    type_letters: bool = False

    @property
    def colours(self) -> tuple[RGB, ...]:
        """Every colour of an image without unseen cells, in palette-index
        order; with unseen cells the fog colour is appended, so the indices
        (and the paper's bytes) do not move."""
        seen = [k for k in self.fills if k != UNSEEN]
        outline = [self.agent_outline] if self.agent_outline else []
        return tuple(
            dict.fromkeys(
                [
                    LINE_COLOUR,
                    *(self.fills[k] for k in seen),
                    *(self.ink[k] for k in seen),
                    self.agent,
                    self.agent_ink,
                    *outline,
                ]
            )
        )

    @property
    def fog_colours(self) -> tuple[RGB, ...]:
        return tuple(dict.fromkeys([*self.colours, self.fills[UNSEEN], self.ink[UNSEEN]]))


def _grey(v: int) -> RGB:
    return (v, v, v)


BLACK, WHITE, RED = (0, 0, 0), (255, 255, 255), (255, 0, 0)
PALETTES: dict[str, Palette] = {
    # The paper's palette (docs/specification.md#observations): F #A8C8E8, H #202020, S #2E8B57, G #DAA520.
    "paper": Palette(
        fills={
            "F": (0xA8, 0xC8, 0xE8),
            "H": (0x20, 0x20, 0x20),
            "S": (0x2E, 0x8B, 0x57),
            "G": (0xDA, 0xA5, 0x20),
            UNSEEN: _grey(0x80),
        },
        ink={"F": BLACK, "G": BLACK, "H": WHITE, "S": WHITE, UNSEEN: BLACK},
        agent=RED,
        agent_ink=WHITE,
        names={"F": "light blue", "H": "near-black", "S": "green", "G": "gold", UNSEEN: "grey"},
        agent_name="red",
    ),
    # Saturated, far-apart colours: the paper's hole/ice contrast made large.
    "high_contrast": Palette(
        fills={"F": (255, 255, 0), "H": BLACK, "S": (0, 0, 255), "G": (0, 200, 0), UNSEEN: _grey(0x80)},
        ink={"F": BLACK, "G": BLACK, "H": WHITE, "S": WHITE, UNSEEN: BLACK},
        agent=RED,
        agent_ink=WHITE,
        names={"F": "yellow", "H": "black", "S": "blue", "G": "green", UNSEEN: "grey"},
        agent_name="red",
    ),
    # Brightness only: five greys a model must tell apart, each cell's type
    # also written under its coordinates.
    "grayscale": Palette(
        fills={"F": _grey(0xE0), "H": _grey(0x10), "S": _grey(0x50), "G": _grey(0xB0), UNSEEN: _grey(0x80)},
        ink={"F": BLACK, "G": BLACK, "H": WHITE, "S": WHITE, UNSEEN: BLACK},
        agent=WHITE,
        agent_ink=BLACK,
        agent_outline=BLACK,
        names={"F": "very light grey", "H": "black", "S": "dark grey", "G": "light grey", UNSEEN: "mid grey"},
        agent_name="white",
        type_letters=True,
    ),
}
#: Every fill colour of every palette -> the cell type it means: one colour
#: never means two types, so a render decodes without knowing its palette.
FILL_KINDS: dict[RGB, str] = {rgb: k for p in PALETTES.values() for k, rgb in p.fills.items()}
if len(FILL_KINDS) != len({(rgb, k) for p in PALETTES.values() for k, rgb in p.fills.items()}) or (
    LINE_COLOUR in FILL_KINDS
):
    raise AssertionError("a fill colour means two cell types, or is the line colour")


@dataclass(frozen=True)
class RenderStyle:
    """How the grid is drawn (docs/specification.md#how-the-grid-is-drawn); the default is the paper's."""

    palette: PaletteName = "paper"
    labels: bool = True
    cell_px: int = CELL_PX
    marker: Marker = "triangle"

    @property
    def colours(self) -> Palette:
        return PALETTES[self.palette]

    @property
    def marker_words(self) -> str:
        """The marker as the image captions name it (the paper's ``red triangle``)."""
        return f"{self.colours.agent_name} {MARKER_SHAPES[self.marker].noun}"

    def validate(self, height: int, width: int) -> None:
        """Raise ``ValueError`` for a style that cannot draw a ``height`` x ``width`` grid legibly."""
        if self.palette not in PALETTES:
            raise ValueError(f"image_palette must be one of {', '.join(PALETTES)}; got {self.palette!r}")
        if self.colours.type_letters and not self.labels:
            raise ValueError(
                f"image_palette={self.palette} tells cell types apart by the letter in each label; "
                "it needs image_labels=true"
            )
        most = MAX_IMAGE_SIDE_PX // max(height, width)
        if self.cell_px > most:
            raise ValueError(
                f"image_cell_px={self.cell_px} draws a grid of {height}x{width} cells "
                f"{self.cell_px * max(height, width):,} px wide; images are at most {MAX_IMAGE_SIDE_PX} px a side, "
                f"so image_cell_px is at most {most} at this size"
            )
        need = min_cell_px(height, width, self)
        if self.cell_px < need:
            what = "the labels of" if self.labels else "the marker of"
            raise ValueError(
                f"image_cell_px={self.cell_px} is too small for {what} a grid of {height}x{width} cells: "
                f"the minimum is {need}"
            )


PAPER = RenderStyle()


@lru_cache(maxsize=1)
def _font() -> ImageFont.ImageFont:
    return ImageFont.load_default_imagefont()


def label_lines(cell: Cell, kind: str, style: RenderStyle) -> list[str]:
    """The label of one cell: its coordinates, and its type letter when the palette writes it."""
    return [f"({cell[0]},{cell[1]})", *([kind] if style.colours.type_letters else [])]


def min_cell_px(height: int, width: int, style: RenderStyle = PAPER) -> int:
    """The smallest cell that holds every label inside the cell and above the
    marker's tip (a third of the way down) and the sample row (half way), and
    the marker itself."""
    widest = max(int(_font().getbbox(f"({r},{c})")[2]) for r in range(height) for c in range(width))
    lines = len(label_lines((0, 0), "F", style))

    def fits(px: int) -> bool:
        labels = (
            LABEL_X + widest < px and LABEL_Y + LABEL_LINE_PX <= px // 3 and LABEL_Y + lines * LABEL_LINE_PX <= px // 2
        )
        marker = px - px // 8 - px // 3 > MARKER_SHAPES[style.marker].inner_px
        return (labels or not style.labels) and marker

    px = MIN_CELL_PX
    while not fits(px):
        px += 1
    return px


def image_size(height: int, width: int, style: RenderStyle = PAPER) -> tuple[int, int]:
    """(width_px, height_px) of the rendered grid."""
    return width * style.cell_px, height * style.cell_px


@dataclass(frozen=True)
class MarkerBox:
    """Where the marker goes in the agent's cell, and its palette indices."""

    cx: int
    upper: int
    lower: int
    half: int
    fill: int
    ink: int
    outline: int | None


def _triangle(img: Image.Image, draw: ImageDraw.ImageDraw, b: MarkerBox) -> None:
    draw.polygon([(b.cx, b.upper), (b.cx - b.half, b.lower), (b.cx + b.half, b.lower)], fill=b.fill, outline=b.outline)


def _letter(img: Image.Image, draw: ImageDraw.ImageDraw, b: MarkerBox) -> None:
    """A square with the letter scaled up (nearest: still only palette colours) to fill it."""
    draw.rectangle([b.cx - b.half, b.upper, b.cx + b.half, b.lower], fill=b.fill, outline=b.outline)
    scale = max(1, (b.lower - b.upper) // (LABEL_LINE_PX + 1))
    glyph = Image.new("1", (6, LABEL_LINE_PX), 0)
    ImageDraw.Draw(glyph).text((0, 0), MARKER_LETTER, fill=1, font=_font())
    glyph = glyph.resize((6 * scale, LABEL_LINE_PX * scale), Image.Resampling.NEAREST)
    x, y = b.cx - 3 * scale, (b.upper + b.lower) // 2 - LABEL_LINE_PX * scale // 2
    img.paste(b.ink, (x, y, x + glyph.width, y + glyph.height), glyph)


@dataclass(frozen=True)
class MarkerShape:
    """One agent marker: the caption's noun (after the colour), how it is drawn,
    and the height it needs inside itself (the letter's line)."""

    noun: str
    draw: Callable[[Image.Image, ImageDraw.ImageDraw, MarkerBox], None]
    inner_px: int = 0


MARKER_SHAPES: dict[str, MarkerShape] = {
    "triangle": MarkerShape("triangle", _triangle),
    "letter": MarkerShape(f"square marked {MARKER_LETTER}", _letter, inner_px=LABEL_LINE_PX),
}


def _draw_marker(img: Image.Image, draw: ImageDraw.ImageDraw, agent: Cell, style: RenderStyle, index: dict) -> None:
    """The agent in the lower middle of its cell, leaving the label and the
    cell's right-hand side (the sample point) showing the cell's type."""
    px, palette = style.cell_px, style.colours
    ar, ac = agent
    top = ar * px
    box = MarkerBox(
        cx=ac * px + px // 2,
        upper=top + px // 3,
        lower=top + px - px // 8,
        half=px * 10 // 48,
        fill=index[palette.agent],
        ink=index[palette.agent_ink],
        outline=index[palette.agent_outline] if palette.agent_outline else None,
    )
    MARKER_SHAPES[style.marker].draw(img, draw, box)


def _palette_index(grid: Sequence[str], style: RenderStyle) -> tuple[tuple[RGB, ...], dict[RGB, int]]:
    """The image's colours in palette order, and each colour's index."""
    palette = style.colours
    colours = palette.fog_colours if any(UNSEEN in row for row in grid) else palette.colours
    return colours, {colour: i for i, colour in enumerate(colours)}


def _draw_cells(grid: tuple[str, ...], style: RenderStyle) -> Image.Image:
    """The grid without the agent: every cell's fill and label."""
    height, width, px, palette = len(grid), len(grid[0]), style.cell_px, style.colours
    colours, index = _palette_index(grid, style)
    img = Image.new("P", image_size(height, width, style), index[LINE_COLOUR])
    img.putpalette([v for colour in colours for v in colour])
    draw = ImageDraw.Draw(img)
    font = _font()
    for r, row in enumerate(grid):
        for c, kind in enumerate(row):
            x0, y0 = c * px, r * px
            # 1 px line on the left/top of every cell (and the image border).
            draw.rectangle([x0 + 1, y0 + 1, x0 + px - 1, y0 + px - 1], fill=index[palette.fills[kind]])
            if style.labels:
                for k, line in enumerate(label_lines((r, c), kind, style)):
                    ink = index[palette.ink[kind]]
                    draw.text((x0 + LABEL_X, y0 + LABEL_Y + k * LABEL_LINE_PX), line, fill=ink, font=font)
    return img


class CellsCache:
    """Grids drawn without the agent, least recently used dropped first beyond
    a byte budget (one byte per pixel).

    An episode draws the same grid with the agent elsewhere at every step (it
    changes only on an L3 event or, with a view radius, as the agent moves),
    and Inspect runs many episodes at once whose steps interleave, so the
    budget holds one grid per episode in flight: 64 MB is 455 grids at 8x8,
    113 at 16x16. The marker is drawn last, so a copy of the cached cells plus
    the marker is the same picture pixel for pixel; the cached images are
    never drawn on (``render_palette`` draws on a copy)."""

    def __init__(self, budget_bytes: int = 64 * 2**20) -> None:
        self.budget, self.hits, self.misses = budget_bytes, 0, 0
        self._images: OrderedDict[tuple[tuple[str, ...], RenderStyle], Image.Image] = OrderedDict()
        self._bytes = 0

    def get(self, grid: tuple[str, ...], style: RenderStyle) -> Image.Image:
        key = (grid, style)
        img = self._images.get(key)
        if img is not None:
            self.hits += 1
            self._images.move_to_end(key)
            return img
        self.misses += 1
        img = self._images[key] = _draw_cells(grid, style)
        self._bytes += img.width * img.height
        while self._bytes > self.budget and len(self._images) > 1:
            _, old = self._images.popitem(last=False)
            self._bytes -= old.width * old.height
        return img

    def clear(self) -> None:
        self._images.clear()
        self._bytes = self.hits = self.misses = 0


#: The renderer's cache of grids drawn without the agent.
CELLS = CellsCache()


def render_palette(grid: Sequence[str], agent: Cell | None, style: RenderStyle = PAPER) -> Image.Image:
    """The observation as a palette ("P") image. Drawing straight into a
    palette image is exact because the bitmap font is not anti-aliased: the
    picture has only the palette's colours, so nothing needs quantising."""
    img = CELLS.get(tuple(grid), style).copy()
    if agent is not None:
        _draw_marker(img, ImageDraw.Draw(img), agent, style, _palette_index(grid, style)[1])
    return img


def render_image(grid: Sequence[str], agent: Cell | None, style: RenderStyle = PAPER) -> Image.Image:
    """The observation as an RGB image (the env's ``rgb_array``)."""
    return render_palette(grid, agent, style).convert("RGB")


def render_png(grid: Sequence[str], agent: Cell | None, style: RenderStyle = PAPER) -> bytes:
    buffer = io.BytesIO()
    # A palette PNG is several times smaller than RGB (it keeps image-mode
    # logs small). zlib level 6 encodes 8x faster than 9 for a few % more
    # bytes (0.6 vs 4.9 ms on 8x8): encoding was the image-mode harness's
    # largest cost.
    render_palette(grid, agent, style).save(buffer, format="PNG", optimize=False, compress_level=6)
    return buffer.getvalue()


def sample_point(cell: Cell, px: int = CELL_PX) -> tuple[int, int]:
    """(x, y) of the cell's centre-right: clear of label, marker and grid lines."""
    r, c = cell
    return c * px + px - max(3, px // 8), r * px + px // 2


def sample_cell_colour(img: Image.Image, cell: Cell, px: int = CELL_PX) -> RGB:
    rgb = img if img.mode == "RGB" else img.convert("RGB")
    return rgb.getpixel(sample_point(cell, px))  # type: ignore[return-value]


def cell_px_of(img: Image.Image) -> int:
    """The cell size of a render, from its grid lines: the columns that are
    line colour from top to bottom are exactly the cells' left edges."""
    lines = np.all(np.asarray(img.convert("RGB")) == LINE_COLOUR, axis=2).all(axis=0)
    columns = np.flatnonzero(lines)
    return int(columns[1] - columns[0]) if len(columns) > 1 else img.width


def _nearest_kind(px: RGB) -> str:
    return FILL_KINDS[min(FILL_KINDS, key=lambda rgb: sum((a - b) ** 2 for a, b in zip(rgb, px)))]


def decode_grid(png: bytes, height: int | None = None, width: int | None = None) -> tuple[str, ...]:
    """Read cell types back from a rendered PNG of any style by the nearest
    fill colour at each cell's sample point (for scripted vision agents and
    tests); fog reads as ``?``. Without ``height`` and ``width`` the cell size
    is read off the grid lines."""
    img = Image.open(io.BytesIO(png)).convert("RGB")
    px = img.width // width if width else cell_px_of(img)
    rows, cols = height or img.height // px, width or img.width // px
    return tuple("".join(_nearest_kind(sample_cell_colour(img, (r, c), px)) for c in range(cols)) for r in range(rows))
