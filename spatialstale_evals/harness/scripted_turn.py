"""One request to a built-in scripted policy (``harness/belief.py``), as a
family's ``TaskFamily.scripted_reply`` sees it, and the replies two families
share: the audit (detect's windows, navigate's strategies) and the move
(navigate's steps, probe's implicit probe, lifelong's steps), with the read
of the notes file before it when the memory tool is offered.

The scripted provider (``scripted/api.py``) asks each registered family in
turn; a family answers the turns it recognises as its own and None to the
rest. Turns two families share in form (a move, an audit) get the same reply
from either, so the order of asking changes no reply.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ModelOutput
from inspect_ai.tool import ToolInfo

from spatialstale_evals.harness.audit import REQUESTS
from spatialstale_evals.harness.belief import audit_reply, move_choice
from spatialstale_evals.harness.memory_tool import TOOL_NAME
from spatialstale_evals.harness.move import MOVE_TOOL
from spatialstale_evals.harness.observe import Prompt
from spatialstale_evals.harness.prompts import template_pattern

#: What a built-in policy replies to a turn whose tools it does not use (it keeps no notes).
NO_NOTES = "Nothing to note."
#: The first line of every audit request (``harness/audit.REQUESTS``), read with its template's pattern.
_AUDIT_REQUESTS = [template_pattern(text.split("\n", 1)[0]) for text in dict.fromkeys(REQUESTS.values())]


@dataclass(frozen=True)
class ScriptedTurn:
    """One request to the built-in policy ``policy``.

    Attributes:
        policy: ``observer``, ``memory``, ``mixed`` or ``random``.
        model: The model name its replies carry.
        messages: Every message sent.
        tools: The tools offered.
        prompt: The last user message's text and images (what the policy reads).
        seed: The provider's ``-M seed`` (``random``'s draws).
        salt: (sample id, epoch) of the episode served, or None.
        read_memory: Whether the policy reads notes behind the memory tool
            (a policy that uses memory, unless ``-M read_memory=false``).
    """

    policy: str
    model: str
    messages: Sequence[ChatMessage]
    tools: Sequence[ToolInfo]
    prompt: Prompt
    seed: int = 0
    salt: object = None
    read_memory: bool = False

    def offers(self, name: str) -> bool:
        """Whether the tool ``name`` is offered."""
        return any(t.name == name for t in self.tools)

    @property
    def moving(self) -> bool:
        """A turn that offers the ``move`` tool."""
        return self.offers(MOVE_TOOL.name)

    @property
    def auditing(self) -> bool:
        """An audit request (no tools; an audit request's first line in the prompt)."""
        return not self.tools and any(p.search(self.prompt.text) for p in _AUDIT_REQUESTS)


def audit(turn: ScriptedTurn) -> str:
    """The policy's JSON audit of the entries in the prompt (``belief.audit_reply``)."""
    return audit_reply(turn.policy, turn.prompt, turn.seed, turn.salt)


def read_answer(messages: Sequence[ChatMessage], path: str) -> str | None:
    """The text of the latest answer to a read of the file ``path`` in ``messages``; None before any."""
    paths = {
        c.id: (c.arguments or {}).get("path")
        for m in messages
        if isinstance(m, ChatMessageAssistant)
        for c in m.tool_calls or []
        if c.function == TOOL_NAME
    }
    answers = [m for m in messages if isinstance(m, ChatMessageTool) and paths.get(m.tool_call_id) == path]
    return answers[-1].text if answers and answers[-1].error is None else None


def fetch_or_read(turn: ScriptedTurn, path: str) -> ModelOutput | str | None:
    """For a policy that uses its memory, when the memory tool is offered: a
    view of ``path`` while the request holds no answer to one (so once per
    step at ``history=0``, once per episode when the turns are kept), else that
    answer's text, for the policy to read its entries in; None without the tool."""
    if not turn.read_memory or not turn.offers(TOOL_NAME):
        return None
    found = read_answer(turn.messages, path)
    if found is not None:
        return found
    call = f"read_{len(turn.messages)}"
    return ModelOutput.for_tool_call(turn.model, TOOL_NAME, {"command": "view", "path": path}, tool_call_id=call)


def move(turn: ScriptedTurn, notes: str | None = None) -> ModelOutput:
    """One ``move(direction)`` call on the policy's route; first, with the memory
    tool offered, a view of the notes file ``notes`` (and its answer read with the prompt)."""
    fetched = fetch_or_read(turn, notes) if notes is not None else None
    if isinstance(fetched, ModelOutput):
        return fetched
    prompt = Prompt(f"{turn.prompt.text}\n{fetched}", turn.prompt.images) if fetched else turn.prompt
    direction = move_choice(turn.policy, prompt, turn.seed, turn.salt)
    call_id = "call_" + hashlib.sha256(prompt.text.encode()).hexdigest()[:12]
    arguments = {"direction": direction}
    return ModelOutput.for_tool_call(turn.model, MOVE_TOOL.name, arguments, tool_call_id=call_id, content="")


def unclaimed(turn: ScriptedTurn) -> str:
    """The reply to a turn no family claims (a built-in policy in a task whose
    turns it was not written for, as ``stale``'s): a turn of tools it does not
    use ends with ``NO_NOTES``; any other is read as an audit (of no entries: ``[]``)."""
    return NO_NOTES if turn.tools else audit(turn)
