"""What a model is shown of the world: one entry per observation option.

An observation option (the tasks' ``modality``) writes the current grid (as
the agent sees it: cells out of view are ``?``, SPEC 8.1) as prompt content
parts (the SPEC's text observation, or the rendered PNG as a
data URI, so the log embeds it and ``inspect view`` shows it, with a caption
naming the renderer's own colours) and reads it back from a prompt, which is
how the scripted agents see what a model sees: through the module that wrote
it. Adding a modality or a rendering option is the renderer plus one entry in
``OBSERVATIONS``.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Protocol

from inspect_ai.model import ChatMessageUser, Content, ContentImage, ContentText
from PIL import Image

from spatialstale_evals.harness import prompts
from spatialstale_evals.world.grid import UNSEEN, Cell, Grid, goal_of
from spatialstale_evals.world.observation import parse_text_observation, position_line, text_observation
from spatialstale_evals.world.render import AGENT_MARKER, CELL_PX, COLOUR_NAMES, decode_grid, render_png

#: The built-in observation options, the vocabulary of the tasks' ``modality``.
Modality = Literal["text", "image"]
#: Who looks at the observation: the auditor or the navigator (their captions differ).
Role = Literal["audit", "navigate"]


@dataclass(frozen=True)
class Prompt:
    """The parts of a prompt a reader (a scripted agent) sees: its text and images."""

    text: str
    images: tuple[str, ...] = ()  # data URIs


class Observation(Protocol):
    name: str
    #: How cells out of view look, for the partial-observability line of a step.
    unseen: str

    def parts(self, grid: Sequence[str], agent: Cell, role: Role) -> list[Content]:
        """Content parts that show ``grid`` with the agent at ``agent``."""
        ...

    def read(self, prompt: Prompt) -> Grid | None:
        """The grid this option wrote into ``prompt``, or None if it wrote none."""
        ...


class TextObservation:
    """The SPEC's exact text observation: one line per row, then the position line."""

    name = "text"
    unseen = "show ?"

    def parts(self, grid: Sequence[str], agent: Cell, role: Role) -> list[Content]:
        return [ContentText(text=prompts.TEXT_OBSERVATION.format(observation=text_observation(grid, agent)))]

    def read(self, prompt: Prompt) -> Grid | None:
        try:
            return parse_text_observation(prompt.text)[0]
        except ValueError:
            return None


class ImageObservation:
    """The rendered PNG (SPEC section 4) after a caption that gives its colour key.
    Position and goal travel as text (the navigator's step line; the audit
    caption's position line)."""

    name = "image"
    unseen = "are painted grey"

    def caption(self, grid: Sequence[str], agent: Cell, role: Role) -> str:
        """The colour key (fog grey only when some cell is out of view), the
        marker, and for an audit the agent/goal line."""
        partial = any(UNSEEN in row for row in grid)
        kinds = [k for k in prompts.CELL_MEANINGS if k != UNSEEN or partial]
        colours = ", ".join(f"{COLOUR_NAMES[k]} = {prompts.CELL_MEANINGS[k]}" for k in kinds)
        goal = goal_of(grid)
        if role == "audit":
            template = prompts.AUDIT_OBSERVATION_IMAGE
            return template.format(colours=colours, marker=AGENT_MARKER, position=position_line(agent, goal))
        return prompts.NAVIGATE_OBSERVATION_IMAGE.format(colours=colours, marker=AGENT_MARKER)

    def parts(self, grid: Sequence[str], agent: Cell, role: Role) -> list[Content]:
        return [ContentText(text=self.caption(grid, agent, role)), ContentImage(image=png_data_uri(tuple(grid), agent))]

    def read(self, prompt: Prompt) -> Grid | None:
        if not prompt.images:
            return None
        png = base64.b64decode(prompt.images[0].split(",", 1)[1])
        img = Image.open(io.BytesIO(png))
        return decode_grid(png, img.height // CELL_PX, img.width // CELL_PX)


OBSERVATIONS: dict[str, Observation] = {obs.name: obs for obs in (TextObservation(), ImageObservation())}


@lru_cache(maxsize=4096)
def png_data_uri(grid: tuple[str, ...], agent: Cell) -> str:
    """Rendered once per distinct (grid, agent): episodes revisit states often."""
    return "data:image/png;base64," + base64.b64encode(render_png(grid, agent)).decode("ascii")


def observation_parts(grid: Sequence[str], agent: Cell, modality: str, role: Role) -> list[Content]:
    """The parts that show the current grid in ``modality`` to ``role``."""
    return OBSERVATIONS[modality].parts(grid, agent, role)


def read_grid(prompt: Prompt) -> Grid:
    """The grid the observation option that wrote ``prompt`` reads back from it
    (each option recognises only its own format)."""
    for obs in OBSERVATIONS.values():
        grid = obs.read(prompt)
        if grid is not None:
            return grid
    raise ValueError("the prompt holds no observation")


def user_message(parts: list[Content]) -> ChatMessageUser:
    """A user turn; text-only content is sent as one string, which every
    provider and chat template handles (some local servers mangle part lists)."""
    if all(isinstance(p, ContentText) for p in parts):
        return ChatMessageUser(content="\n".join(p.text for p in parts))  # type: ignore[union-attr]
    return ChatMessageUser(content=parts)
