"""The public ``move(direction)`` tool, as offered to the model: navigation's
one action a step, and the one move the implicit probe asks for.

The navigation loop applies the first call itself (``Episode.step``) rather
than through Inspect's ``execute_tools``: that logs a tool event and two span
events per step, the largest part of the harness's own cost (README,
Performance). The environment's answer is still the ``ChatMessageTool`` in
the sample's messages, and the call itself is in each model event's output.
Replies are read by ``harness.parsing.parse_move``.
"""

from __future__ import annotations

from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from spatialstale_evals.harness import prompts
from spatialstale_evals.world.grid import MOVE_ORDER

MOVE_TOOL = ToolInfo(
    name="move",
    description=prompts.MOVE_TOOL_DESCRIPTION,
    parameters=ToolParams(
        properties={
            "direction": ToolParam(type="string", enum=list(MOVE_ORDER), description=prompts.MOVE_DIRECTION_DESCRIPTION)
        },
        required=["direction"],
    ),
)
