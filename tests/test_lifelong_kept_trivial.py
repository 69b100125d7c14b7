"""What compaction kept is scored with the notes' yardstick, so no trivial
keeper games it: a summary claiming one constant class for every cell scores
exactly 0.5 where both classes are knowable, a summary with no claim 0
(figures counted here from the grid and the sightings)."""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

from spatialstale_evals.lifetime.compactions import compaction_record

#: The lake now (a hole at (0,1)) and what the agent saw of it, as last seen: all three knowable.
GRID = [["S", "H", "F"], ["F", "F", "G"]]
SIGHTINGS = {(0, 0): "S", (0, 1): "H", (1, 0): "F"}


def _kept(text: str) -> dict:
    before = [ChatMessageUser(content="a long conversation")]
    after = [ChatMessageUser(content="the first prompt"), ChatMessageAssistant(content=text)]
    return compaction_record(before, after, GRID, SIGHTINGS, {}, {})


@pytest.mark.parametrize("kind", ["SAFE", "HOLE"])
def test_a_constant_summary_scores_one_half(kind):
    every = "\n".join(f"{kind} at ({r},{c})" for r in range(2) for c in range(3))
    record = _kept(every)
    # knowable now: SAFE {(0,0), (1,0)}, HOLE {(0,1)}; a constant claim tells one class right, the other wrong
    assert record["note_balanced"] == pytest.approx(0.5)


def test_a_summary_without_claims_scores_zero_and_the_truth_scores_one():
    assert _kept("The agent walked the lake.")["note_balanced"] == 0.0
    assert _kept("SAFE at (0,0)\nHOLE at (0,1)\nSAFE at (1,0)")["note_balanced"] == pytest.approx(1.0)
