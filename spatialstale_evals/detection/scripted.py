"""The built-in scripted policies (``harness/belief.py``) in ``detect``: each
audit request answered with the policy's JSON verdicts (``harness/scripted_turn.audit``)."""

from __future__ import annotations

from spatialstale_evals.harness.scripted_turn import ScriptedTurn, audit


def scripted_reply(turn: ScriptedTurn) -> str | None:
    """The policy's audit of the prompt's entries; None for a turn that is not an audit."""
    return audit(turn) if turn.auditing else None
