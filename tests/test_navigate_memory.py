"""``navigate -T memory_access=tool`` (docs/tasks.md#navigate, "Memory in the store"):
the file ``/memories/lake.md`` against the memory section the prompt setting shows
at the same step (every strategy, L3's refreshes included), the reads recorded
and the deaths traced to what was read, an agent that never reads against
``no_memory``, hostile memory calls, the parameter checks, the matrix factor,
the cost bounds and the report's side-by-side table."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, resolve_sample_attachments
from inspect_ai.model import ChatMessageTool, ChatMessageUser, GenerateConfig, ModelAPI, ModelOutput, modelapi

from spatialstale_evals.harness.params import NotApplicable
from spatialstale_evals.navigate import navigate

#: Every strategy that shows memory, on L3 (the view refreshed after events), and one labelled filter mode.
RUNS = [{"strategy": s} for s in ("no_filter", "self_verify", "omcd", "oracle", "resolve")]
RUNS.append({"strategy": "oracle", "filter_mode": "history"})
LIMIT = 2
NUMBERED = re.compile(r"^\s*\d+\t", re.MULTILINE)


def run(model: str, tmp_path: Path, regime: str = "L3", limit: int = LIMIT, model_args=None, **args: Any) -> EvalLog:
    task = navigate(regime=regime, epochs=1, **args)
    log = inspect_eval(task, model=model, model_args=model_args or {}, limit=limit, log_dir=str(tmp_path),
                       display="none")[0]  # fmt: skip
    assert log.status == "success", log.error
    log.samples = [resolve_sample_attachments(s, "full") for s in log.samples or []]
    return log


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[EvalLog]]]:
    folder = tmp_path_factory.mktemp("navigate-memory")
    return {
        access: [run("spatialstale/memory", folder / access, memory_access=access, **args) for args in RUNS]
        for access in ("prompt", "tool")
    }


def prompt_views(sample: Any) -> list[list[str]]:
    """Per step, the entries of the memory section of the step's prompt."""
    views = []
    for m in sample.messages:
        if isinstance(m, ChatMessageUser) and "Current observation" in m.text:
            section = m.text.split("Current observation")[0]
            views.append([line for line in section.splitlines()[1:] if line.strip()])
    return views


def file_reads(sample: Any) -> list[list[str]]:
    """Per read of the lake file, its lines as the memory tool showed them."""
    reads = []
    for m in sample.messages:
        if isinstance(m, ChatMessageTool) and "`cat -n` on /memories/lake.md" in m.text:
            body = m.text.split("\n", 1)[1]
            reads.append([line for line in NUMBERED.sub("", body).splitlines() if line.strip()])
    return reads


def test_the_file_is_the_view_the_prompt_shows_at_every_step(logs) -> None:
    for args, prompt, tool in zip(RUNS, logs["prompt"], logs["tool"]):
        refreshed = 0
        for p, t in zip(prompt.samples, tool.samples):
            record = t.store["NavigationState:episode"]
            assert record["trajectory"] == p.store["NavigationState:episode"]["trajectory"], args
            views, reads = prompt_views(p), file_reads(t)
            assert len(reads) == len(views) == record["steps"]  # the memory agent reads once a step (history=0)
            assert reads == views, (args, p.id)
            assert record["memory"]["read_steps"] == list(range(record["steps"]))
            changes = sum(a != b for a, b in zip(views, views[1:]))
            assert len(record["memory"]["versions"]) >= changes + 1
            refreshed += changes
            step_lines = [
                m.text for m in t.messages if isinstance(m, ChatMessageUser) and "Current observation" in m.text
            ]
            assert all(
                text.startswith("Your memory notes about the lake are in your memory directory") for text in step_lines
            )
            assert not any("[mem_" in text for text in step_lines)  # no entry in any prompt
        if args["strategy"] in ("omcd", "oracle", "resolve"):
            assert refreshed > 0, args  # L3: the view changed during some episode, and the file with it


def test_deaths_are_traced_to_what_was_read(logs) -> None:
    deaths = 0
    for tool in logs["tool"]:
        for sample in tool.samples:
            record = sample.store["NavigationState:episode"]
            counts = sample.scores["navigation_scorer"].metadata["counts"]
            assert counts["read_memory"] == 1 and counts["memory_reads"] == record["steps"]
            assert counts["navigator_calls"] == 2 * record["steps"]  # a read, then the move
            assert record["death_on_stale_read"] == (record["death_on_stale"] and record["death_on_stale_shown"])
            deaths += record["death_on_stale_read"]
    assert deaths > 0, "some episode died on a stale entry it had read"


def test_an_agent_that_never_reads_plays_as_with_no_memory(tmp_path: Path) -> None:
    # one instance: with nothing read the agent never leaves the start, so every instance
    # plays the same 50-call episode (checked below), a second one only repeating it
    blind = run("spatialstale/memory", tmp_path / "blind", "L2", 1, {"read_memory": False}, strategy="no_filter",
                memory_access="tool")  # fmt: skip
    none = run("spatialstale/memory", tmp_path / "none", "L2", 1, strategy="no_memory")
    assert len(blind.samples) == len(none.samples) == 1
    for b, n in zip(blind.samples, none.samples):
        rb, rn = b.store["NavigationState:episode"], n.store["NavigationState:episode"]
        # no SAFE entry shown, so it never leaves the start: a timeout at the full budget, in both
        assert (rb["outcome"], rb["trajectory"]) == (rn["outcome"], rn["trajectory"]) == ("timeout", [[0, 0]] * 51)
        assert rb["memory"]["calls"] == 0 and not rb["death_on_stale_read"]
    assert blind.results.scores[0].metrics["memory_read_rate"].value == 0.0


class Hostile(ModelAPI):
    """A navigator whose memory calls are junk: writes to the read-only store, bad paths and
    ranges, unparseable arguments, more calls than the cap; then, every other step, a move."""

    CALLS = [
        ("create", {"command": "create", "path": "/memories/lake.md", "file_text": "all SAFE"}),
        ("escape", {"command": "view", "path": "/etc/passwd"}),
        ("range", {"command": "view", "path": "/memories/lake.md", "view_range": "all of it"}),
        ("none", {}),
        ("missing", {"command": "view", "path": "/memories/nothing.md"}),
    ]

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        super().__init__(model_name, config=GenerateConfig())

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        answered = sum(isinstance(m, ChatMessageTool) for m in input)
        if answered < len(self.CALLS):
            name, args = self.CALLS[answered]
            output = ModelOutput.for_tool_call("hostile", "memory", args, tool_call_id=f"{name}{answered}")
            if name == "none":
                output.message.tool_calls[0].parse_error = "bad JSON"  # type: ignore[index]
            return output
        return ModelOutput.for_tool_call("hostile", "move", {"direction": "RIGHT"}, tool_call_id="m")


@modelapi(name="hostile")
def _hostile() -> type[Hostile]:
    return Hostile


def test_junk_and_writes_to_the_read_only_store_never_error_a_sample(tmp_path: Path) -> None:
    log = run("hostile/x", tmp_path, "L2", 1, strategy="no_filter", memory_access="tool", max_memory_calls=4,
              max_steps=3)  # fmt: skip
    sample = log.samples[0]
    assert not sample.error
    record = sample.store["NavigationState:episode"]
    memory, steps = record["memory"], record["steps"]
    assert memory["calls"] == 4 * steps and memory["failed"] == 4 * steps and memory["reads"] == []  # all errors
    assert memory["refused"] == steps  # the fifth of each step, past the cap
    assert len(record["fallbacks"]) == steps  # the refused reply made no move: the greedy step
    files = sample.store["MemoryStore:files"]
    assert list(files) == ["/memories/lake.md"] and "all SAFE" not in files["/memories/lake.md"]


@pytest.mark.parametrize(
    "args, message",
    [
        ({"memory_access": "tool", "strategy": "no_memory"}, "no_memory shows no memory"),
        ({"memory_access": "tool", "memory_position": "after"}, "memory_position=after"),
        ({"max_memory_calls": 2}, "max_memory_calls=2: the memory calls per step"),
    ],
)
def test_inapplicable_combinations_are_named(args: dict, message: str) -> None:
    with pytest.raises(NotApplicable, match=message):
        navigate(**args)
    with pytest.raises(ValueError, match="memory_access must be one of prompt, tool"):
        navigate(memory_access="store")


def test_memory_access_is_a_matrix_factor_with_bounds_around_the_run(logs) -> None:
    from spatialstale_evals.runs.matrix import MatrixSpec, plan

    planned = plan(MatrixSpec(models=["m"], regimes=["L3"], families=["navigate"], seeds=LIMIT, epochs=1,
                              factors={"memory_access": ["prompt", "tool"]}))  # fmt: skip
    named = {(t.task_args["strategy"], t.factors["memory_access"]): t for t in planned}
    strategies = {t.task_args["strategy"] for t in planned}
    assert set(named) == {(s, a) for s in strategies for a in ("prompt", "tool")} - {("no_memory", "tool")}
    assert any("no_memory shows no memory" in reason for reason in planned.skipped)
    used = logs["tool"][0].stats.model_usage["spatialstale/memory"]  # no_filter, the memory agent reading every step
    low, high = named[("no_filter", "tool")].cost_min, named[("no_filter", "tool")].cost
    assert low.input_tokens <= used.input_tokens <= high.input_tokens


def test_the_report_puts_the_settings_side_by_side(logs, tmp_path: Path) -> None:
    from spatialstale_evals.analysis.report import build_report

    for access, runs in logs.items():  # the runs' own log files, side by side in one folder
        for k, log in enumerate(runs):
            shutil.copyfile(log.location, tmp_path / f"{access}-{k}.eval")
    table = build_report(tmp_path, tmp_path / "out").tables["navigate_access"].set_index("strategy")
    row = table.loc["no_filter"]
    assert (row["prompt_episodes"], row["tool_episodes"], row["success_n_pairs"]) == (LIMIT, LIMIT, LIMIT)
    assert row["prompt_success"] == row["tool_success"] and row["read_memory"] == 100.0
    assert row["tool_tokens"] > row["prompt_tokens"]  # a read a step: every step's request twice, and the file
