"""What a model is shown of the world: one entry per observation option.

An observation option (the tasks' ``modality``) writes the current grid (as
the agent sees it: cells out of view are ``?``: partial observation) as prompt content
parts (the exact text observation, or the rendered PNG as a
data URI, so the log embeds it and ``inspect view`` shows it, with a caption
naming the renderer's own colours) and reads it back from a prompt, which is
how the scripted agents see what a model sees: through the module that wrote
it. Adding a modality or a rendering option is the renderer plus one entry in
``OBSERVATIONS``; a rendering style (``world.render.RenderStyle``, the tasks'
``image_*`` parameters) configures an option (``observation``).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Literal, Protocol

from inspect_ai.model import ChatMessageUser, Content, ContentImage, ContentText

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.params import NotApplicable, check_bool, check_choice, check_positive_int
from spatialstale_evals.world.grid import UNSEEN, Cell, Grid, goal_of
from spatialstale_evals.world.observation import parse_text_observation, position_line, text_observation
from spatialstale_evals.world.render import MARKERS, PALETTES, PAPER, RenderStyle, decode_grid, render_png

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

    def configured(self, style: RenderStyle) -> Observation:
        """This option drawing in ``style`` (``NotApplicable`` for a style that
        is not the default on an option that draws nothing)."""
        ...


class TextObservation:
    """The exact text observation (docs/specification.md#observations): one line per row, then the position line."""

    name = "text"
    unseen = "show ?"

    def parts(self, grid: Sequence[str], agent: Cell, role: Role) -> list[Content]:
        return [ContentText(text=prompts.TEXT_OBSERVATION.format(observation=text_observation(grid, agent)))]

    def read(self, prompt: Prompt) -> Grid | None:
        try:
            return parse_text_observation(prompt.text)[0]
        except ValueError:
            return None

    def configured(self, style: RenderStyle) -> Observation:
        if style != PAPER:
            raise NotApplicable("the image_* options need modality=image; the text observation draws nothing")
        return self


@dataclass(frozen=True)
class ImageObservation:
    """The rendered PNG (docs/specification.md#observations), drawn in ``style``, after
    a caption that gives its colour key, marker and labels in the style's own
    words. Position and goal travel as text (the navigator's step line; the
    audit caption's position line)."""

    style: RenderStyle = PAPER
    name = "image"

    @property
    def unseen(self) -> str:
        return f"are painted {self.style.colours.names[UNSEEN]}"

    def caption(self, grid: Sequence[str], agent: Cell, role: Role) -> str:
        """The colour key (fog only when some cell is out of view), the marker,
        the labels, and for an audit the agent/goal line."""
        partial = any(UNSEEN in row for row in grid)
        names = self.style.colours.names
        kinds = [k for k in prompts.CELL_MEANINGS if k != UNSEEN or partial]
        colours = ", ".join(f"{names[k]} = {prompts.CELL_MEANINGS[k]}" for k in kinds)
        labels = prompts.IMAGE_LABELS[
            "none" if not self.style.labels else "type_letters" if self.style.colours.type_letters else "coordinates"
        ]
        words = {"colours": colours, "marker": self.style.marker_words, "labels": labels}
        if role == "audit":
            return prompts.AUDIT_OBSERVATION_IMAGE.format(**words, position=position_line(agent, goal_of(grid)))
        return prompts.NAVIGATE_OBSERVATION_IMAGE.format(**words)

    def parts(self, grid: Sequence[str], agent: Cell, role: Role) -> list[Content]:
        image = png_data_uri(tuple(grid), agent, self.style)
        return [ContentText(text=self.caption(grid, agent, role)), ContentImage(image=image)]

    def read(self, prompt: Prompt) -> Grid | None:
        """The grid from the pixels alone, whatever the style (``decode_grid``)."""
        if not prompt.images:
            return None
        return decoded_grid(prompt.images[0])

    def configured(self, style: RenderStyle) -> Observation:
        return ImageObservation(style)


OBSERVATIONS: dict[str, Observation] = {obs.name: obs for obs in (TextObservation(), ImageObservation())}


def observation(modality: str | Observation, style: RenderStyle = PAPER) -> Observation:
    """The observation option ``modality`` (a name, or an option already
    configured) drawing in ``style``; the tasks build theirs once from their
    parameters (``NotApplicable`` for image options on text)."""
    if not isinstance(modality, str):
        return modality
    return OBSERVATIONS[modality].configured(style)


#: The tasks' rendering parameters and the ``RenderStyle`` fields they set.
IMAGE_PARAMS = {
    "image_labels": "labels",
    "image_palette": "palette",
    "image_cell_px": "cell_px",
    "image_marker": "marker",
}


_IMAGE_FIELDS = {param: next(f for f in fields(RenderStyle) if f.name == name) for param, name in IMAGE_PARAMS.items()}


def style_of(args: Mapping[str, Any]) -> RenderStyle:
    """The rendering style named by task arguments (``image_*``; absent ones at their defaults), unchecked."""
    return RenderStyle(**{field: args[param] for param, field in IMAGE_PARAMS.items() if param in args})


def image_args_of(style: RenderStyle) -> dict[str, Any]:
    """The ``image_*`` task arguments that name ``style`` (``style_of``'s inverse)."""
    return {param: getattr(style, field) for param, field in IMAGE_PARAMS.items()}


class Observed:
    """A grid task's settings (a frozen dataclass its task builds from its
    checked arguments, and its family's ``cost.settings_of`` from a matrix
    plan's) that name a ``modality`` and a ``render`` style: the observation
    they configure, and the task parameters they hold."""

    modality: str
    render: RenderStyle

    @property
    def observation(self) -> Observation:
        return observation(self.modality, self.render)

    def parameters(self) -> dict[str, Any]:
        """The task's parameters these settings hold, as its samples' metadata
        names them: every field in the order declared, ``render`` as the
        ``image_*`` parameters, a tuple as a list."""
        named: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, RenderStyle):
                named |= image_args_of(value)
            else:
                named[f.name] = list(value) if isinstance(value, tuple) else value
        return named


def check_render(modality: str, args: Mapping[str, Any], height: int, width: int) -> RenderStyle:
    """The rendering style of a task's ``image_*`` arguments, checked: a clear
    error for a bad value or a style that cannot draw a ``height`` x ``width``
    grid (with the minimum cell size), ``NotApplicable`` for a style on text."""
    check_choice("modality", modality, OBSERVATIONS)
    labels, palette, cell_px, marker = (args.get(p, f.default) for p, f in _IMAGE_FIELDS.items())
    check_bool("image_labels", labels)
    check_choice("image_palette", palette, PALETTES)
    check_choice("image_marker", marker, MARKERS)
    check_positive_int("image_cell_px", cell_px)
    style = style_of(args)
    observation(modality, style)  # NotApplicable on text first: a matrix skips it, whatever the size
    style.validate(height, width)
    return style


@lru_cache(maxsize=4096)
def png_data_uri(grid: tuple[str, ...], agent: Cell, style: RenderStyle = PAPER) -> str:
    """Rendered once per distinct (grid, agent, style): episodes revisit states often."""
    return "data:image/png;base64," + base64.b64encode(render_png(grid, agent, style)).decode("ascii")


@lru_cache(maxsize=256)
def decoded_grid(data_uri: str) -> Grid:
    """The grid a rendered data URI shows, decoded once per distinct image:
    the scripted vision agents read the same picture in every batch of an
    audit window (7 at B = 10) and on every revisit, and decoding one (about
    5 ms at 8x8) was their whole cost per call."""
    return decode_grid(base64.b64decode(data_uri.split(",", 1)[1]))


def observation_parts(grid: Sequence[str], agent: Cell, modality: str | Observation, role: Role) -> list[Content]:
    """The parts that show the current grid in ``modality`` to ``role``."""
    return observation(modality).parts(grid, agent, role)


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
    provider and chat template handles (some local servers mangle part lists).
    With an image, each run of adjacent text parts is sent as one part joined
    by newlines, as text-only content is: providers, chat templates and
    ``inspect view`` join adjacent parts with nothing between them ("...safe to
    walkCurrent observation:")."""
    if all(isinstance(p, ContentText) for p in parts):
        return ChatMessageUser(content="\n".join(p.text for p in parts))  # type: ignore[union-attr]
    merged: list[Content] = []
    for part in parts:
        if isinstance(part, ContentText) and merged and isinstance(merged[-1], ContentText):
            merged[-1] = ContentText(text=f"{merged[-1].text}\n{part.text}")
        else:
            merged.append(part)
    return ChatMessageUser(content=merged)
