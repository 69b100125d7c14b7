"""What a model is shown of the world: the text observation or the PNG as an
image content part (a data URI, so the log embeds it and ``inspect view``
shows it)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from functools import lru_cache

from inspect_ai.model import ChatMessageUser, Content, ContentImage, ContentText

from spatialstale_evals.world.grid import Cell
from spatialstale_evals.world.observation import text_observation
from spatialstale_evals.world.render import render_png

MODALITIES = ("text", "image")
TEXT_HEADER = "Current observation:\n"


@lru_cache(maxsize=4096)
def png_data_uri(grid: tuple[str, ...], agent: Cell) -> str:
    """Rendered once per distinct (grid, agent): episodes revisit states often."""
    return "data:image/png;base64," + base64.b64encode(render_png(grid, agent)).decode("ascii")


def observation_parts(grid: Sequence[str], agent: Cell, modality: str, image_caption: str) -> list[Content]:
    """Content parts that show the current grid in ``modality``.

    Text mode gives the exact SPEC text observation; image mode gives the
    caption (colour key) and the rendered PNG. Position and goal travel as
    text in both modes (the paper's prompt states them).
    """
    if modality == "image":
        return [ContentText(text=image_caption), ContentImage(image=png_data_uri(tuple(grid), agent))]
    return [ContentText(text=TEXT_HEADER + text_observation(grid, agent))]


def user_message(parts: list[Content]) -> ChatMessageUser:
    """A user turn; text-only content is sent as one string, which every
    provider and chat template handles (some local servers mangle part lists)."""
    if all(isinstance(p, ContentText) for p in parts):
        return ChatMessageUser(content="\n".join(p.text for p in parts))  # type: ignore[union-attr]
    return ChatMessageUser(content=parts)
