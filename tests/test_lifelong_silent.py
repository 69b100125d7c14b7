"""An agent that does nothing scores on `lifelong` what the harness's blind
fallback walk scores, computed here from the lifetimes: every step is the
paper's fallback (one step toward the goal on the axis with the larger
distance, rows on a tie, blind to holes), so SPL is 1 where that staircase
happens to be safe and 0 where it crosses a hole, and no note is ever written
(`note_balanced` 0). The outcome a silent agent gets is the harness's, never
more."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage, get_model

from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.world import lifetimes

LIFETIMES, EPISODES = 4, 2


def silent(messages, tools, tool_choice, config) -> ModelOutput:
    message = ChatMessageAssistant(content="I will not move.", model="mockllm/model")
    out = ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(message=message)])
    out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return out


def blind_walk(grid) -> tuple[str, int]:
    """The fallback staircase from the top-left start to the bottom-right goal on a still lake."""
    r, c, goal, steps = 0, 0, (len(grid) - 1, len(grid[0]) - 1), 0
    while (r, c) != goal:
        dr, dc = goal[0] - r, goal[1] - c
        r, c = (r + (1 if dr > 0 else -1), c) if abs(dr) >= abs(dc) else (r, c + (1 if dc > 0 else -1))
        steps += 1
        if grid[r][c] == "H":
            return "death", steps
    return "success", steps


def test_a_silent_agent_scores_what_the_blind_fallback_walk_scores(tmp_path: Path) -> None:
    model = get_model("mockllm/model", custom_outputs=silent, memoize=False)
    [log] = inspect_eval(
        lifelong(regime="L0", episodes=EPISODES), model=model, limit=LIFETIMES, log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success"
    lives = {life.id: life for life in lifetimes.load(None, "L0")}
    walked = 0
    for sample in log.samples:
        score = sample.scores["lifelong_scorer"]
        for record in score.metadata["episodes"]:
            grid = lives[str(sample.id)].episodes[record["episode"] - 1].grid
            outcome, steps = blind_walk(grid)
            assert (record["outcome"], record["steps"]) == (outcome, steps)
            assert len(record["fallbacks"]) == steps  # every step the harness's
            walked += 1
        expected_spl = [1.0 if blind_walk(lives[str(sample.id)].episodes[k].grid)[0] == "success" else 0.0
                        for k in range(EPISODES)]  # fmt: skip
        assert score.value["spl"] == sum(expected_spl) / EPISODES
        assert score.value["note_balanced"] == 0.0  # nothing written: every knowable cell missed
    assert walked == LIFETIMES * EPISODES
