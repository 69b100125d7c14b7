"""The built-in scripted policies (``harness/belief.py``) in ``navigate``: a
``move`` call on the policy's route at each step (with ``memory_access=tool``
the policies that use memory first view the lake file, ``LAKE_FILE``, and read
its entries in the tool's answer; ``-M read_memory=false`` makes them never
read), and the strategies' audits answered as in ``detect``."""

from __future__ import annotations

from inspect_ai.model import ModelOutput

from spatialstale_evals.harness.scripted_turn import ScriptedTurn, audit, move
from spatialstale_evals.navigation.memory_access import LAKE_FILE


def scripted_reply(turn: ScriptedTurn) -> ModelOutput | str | None:
    """A step's move (or the read before it), an audit's verdicts; None for any other turn."""
    if turn.moving:
        return move(turn, LAKE_FILE)
    return audit(turn) if turn.auditing else None
