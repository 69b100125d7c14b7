"""The built-in scripted policies (``harness/belief.py``) in ``probe``: a JSON
answer to an ``explicit`` or ``premise`` question from the policy's belief,
and the implicit probe's ``move`` call on its route."""

from __future__ import annotations

import json

from inspect_ai.model import ModelOutput

from spatialstale_evals.harness.belief import believed_safe
from spatialstale_evals.harness.observe import Prompt
from spatialstale_evals.harness.prompts import template_pattern
from spatialstale_evals.harness.scripted_turn import ScriptedTurn, move
from spatialstale_evals.probing.prompts import PROBE_EXPLICIT, PROBE_PREMISE
from spatialstale_evals.world.memory import DANGER, SAFE

#: The probe questions, read with the patterns of their templates.
_EXPLICIT = template_pattern(PROBE_EXPLICIT.split("\n", 1)[0])
_PREMISES = {claim: template_pattern(text) for claim, text in PROBE_PREMISE.items()}


def probe_reply(policy: str, prompt: Prompt, seed: int = 0, salt: object = None) -> str | None:
    """The policy's JSON answer to an ``explicit`` or ``premise`` probe; None
    for a prompt that asks neither. A premise holds when the cell is what the
    policy believes the claim says (so ``memory`` accepts every premise)."""
    asked, claim = _EXPLICIT.search(prompt.text), None
    for premise, pattern in _PREMISES.items():
        if asked is None and (found := pattern.search(prompt.text)):
            asked, claim = found, premise
    if asked is None:
        return None
    cell = (int(asked["row"]), int(asked["col"]))
    safe = believed_safe(policy, prompt, cell, seed, salt)
    reason = f"({cell[0]},{cell[1]}) looks {'safe' if safe else 'like a hole'}"
    if claim is None:
        return json.dumps({"cell": list(cell), "state": SAFE if safe else DANGER, "reason": reason})
    return json.dumps({"premise_holds": safe == (claim == SAFE), "step_on": safe, "reason": reason})


def scripted_reply(turn: ScriptedTurn) -> ModelOutput | str | None:
    """The implicit probe's move, an explicit or premise question's answer; None for any other turn."""
    if turn.moving:
        return move(turn)
    return None if turn.tools else probe_reply(turn.policy, turn.prompt, turn.seed, turn.salt)
