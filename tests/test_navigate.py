"""The ``navigate`` task end to end (specification.md#navigate).

Every test drives full offline ``inspect_ai.eval`` runs with scripted models:

- ``spatialstale/observer`` (the project's scripted provider: reads the observation,
  plans a shortest safe path),
- ``spatialstale/memory`` (plans only through cells whose *shown* memory entry says
  SAFE; as an auditor it judges every entry correctly against the observation),
- Inspect's ``mockllm/model`` driven by callables written here.

Expected values come from the specification or from computations in this file on the
dataset JSONL (BFS planner, environment walk, stale sets), never from the
task's own code.
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, resolve_sample_attachments
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall

from spatialstale_evals.navigate import navigate

DATASET = Path(__file__).resolve().parents[1] / "spatialstale_evals" / "data" / "spatialstale-v1"
REGIMES = ("L1", "L2", "L3")
STRATEGIES = ("no_memory", "no_filter", "self_verify", "omcd", "oracle")
DELTAS = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}
ORDER = ("UP", "DOWN", "LEFT", "RIGHT")  # the planner's neighbour order (tie-break)
N_ENTRIES = 64
MAX_STEPS = 50
VALUE_KEYS = {"success", "death", "timeout", "reward", "steps", "fallbacks", "tokens"}
META_KEYS = {
    "outcome",
    "trajectory",
    "actions",
    "death_cell",
    "death_on_stale_shown",
    "audits",
    "events_realized",
}
ENTRY_RE = re.compile(r"\[(mem_\d+)\] (SAFE|DANGER) at \((\d+),(\d+)\)")
ROW_RE = re.compile(r"^Row (\d+): (.*)$", re.MULTILINE)
CELL_RE = re.compile(r"\((\d+),(\d+)\)=([SFHG])")
AGENT_RE = re.compile(r"Agent at \((\d+),(\d+)\)\. Goal at \((\d+),(\d+)\)\.")


# -- independent helpers (dataset, grid, planner, walk) -------------------------


def load_jsonl(regime: str) -> dict[str, dict]:
    rows = [json.loads(line) for line in (DATASET / f"{regime}.jsonl").read_text().splitlines() if line.strip()]
    return {row["id"]: row for row in rows}


INSTANCES = {regime: load_jsonl(regime) for regime in REGIMES}


def flip(grid: list[str], cells) -> list[str]:
    rows = [list(r) for r in grid]
    for r, c in cells:
        assert rows[r][c] in "FH"
        rows[r][c] = "H" if rows[r][c] == "F" else "F"
    return ["".join(r) for r in rows]


def grid_after(inst: dict, moves: int) -> list[str]:
    """True grid after ``moves`` moves: pre-game grid plus the L3 events at or before that step."""
    grid = list(inst["grid"])
    for event in inst["events"]:
        if event["step"] <= moves:
            grid = flip(grid, event["cells"])
    return grid


def stale_ids(inst: dict, grid: list[str]) -> set[str]:
    g0, width = inst["g0"], inst["width"]
    return {
        f"mem_{r * width + c:03d}"
        for r in range(inst["height"])
        for c in range(width)
        if (g0[r][c] == "H") != (grid[r][c] == "H")
    }


def step_pos(pos, direction, height=8, width=8):
    dr, dc = DELTAS[direction]
    r, c = pos[0] + dr, pos[1] + dc
    return (r, c) if 0 <= r < height and 0 <= c < width else tuple(pos)


def bfs_first_step(passable, src, dst, height=8, width=8):
    """First move of the BFS shortest path src -> dst over ``passable`` cells, neighbours
    tried UP, DOWN, LEFT, RIGHT, first discovery wins; None when unreachable."""
    if not passable(dst):
        return None
    prev = {src: None}
    queue = deque([src])
    while queue:
        cur = queue.popleft()
        if cur == dst:
            break
        for d in ORDER:
            nxt = step_pos(cur, d, height, width)
            if nxt != cur and nxt not in prev and passable(nxt):
                prev[nxt] = (cur, d)
                queue.append(nxt)
    if dst not in prev or dst == src:
        return None
    node, first = dst, None
    while prev[node] is not None:
        node, first = prev[node]
    return first


def simulate_memory_agent(inst: dict) -> dict:
    """The memory-only planner with every entry shown (no_filter): its belief is g0,
    it re-plans each step by BFS on cells g0 calls safe, and walks the true grid."""
    g0, height, width = inst["g0"], inst["height"], inst["width"]
    goal = (height - 1, width - 1)
    grid = list(inst["grid"])
    events: dict[int, list] = {}
    for event in inst["events"]:
        events.setdefault(event["step"], []).extend(event["cells"])
    pos, steps, trajectory = (0, 0), 0, [[0, 0]]
    while True:
        direction = bfs_first_step(lambda c: g0[c[0]][c[1]] != "H", pos, goal, height, width)
        assert direction is not None, "g0 always keeps a path from a cell on a g0 shortest path"
        before, pos = pos, step_pos(pos, direction, height, width)
        steps += 1
        trajectory.append(list(pos))
        kind = grid[pos[0]][pos[1]]
        if kind == "H" and pos != before:
            return {"outcome": "death", "steps": steps, "trajectory": trajectory, "death_cell": list(pos)}
        if kind == "G":
            return {"outcome": "success", "steps": steps, "trajectory": trajectory, "death_cell": None}
        grid = flip(grid, events.get(steps, []))
        if steps >= MAX_STEPS:
            return {"outcome": "timeout", "steps": steps, "trajectory": trajectory, "death_cell": None}


def parse_observation(text: str):
    """(grid, agent, goal) from a prompt holding the specification's exact text observation."""
    rows = {}
    for match in ROW_RE.finditer(text):
        rows[int(match.group(1))] = {
            int(c): k for r, c, k in CELL_RE.findall(match.group(2)) if int(r) == int(match.group(1))
        }
    grid = ["".join(rows[r][c] for c in sorted(rows[r])) for r in sorted(rows)]
    ar, ac, gr, gc = (int(x) for x in AGENT_RE.search(text).groups())
    return grid, (ar, ac), (gr, gc)


def fired_events(inst: dict, steps: int, outcome: str) -> list[dict]:
    """L3 events applied before the episode ended: an event fires after the move of its
    step unless that move ended the episode by death or success."""
    return [e for e in inst["events"] if e["step"] < steps or (e["step"] == steps and outcome == "timeout")]


def user_text(messages) -> str:
    return next(m for m in reversed(messages) if isinstance(m, ChatMessageUser)).text


def manhattan(a, b) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


# -- running evals ----------------------------------------------------------------

USAGE = dict(input_tokens=600, output_tokens=400, total_tokens=1000)


def usage() -> ModelUsage:
    return ModelUsage(**USAGE)


def tool_output(function: str, arguments: dict) -> ModelOutput:
    out = ModelOutput.for_tool_call("mockllm/model", function, arguments)
    out.usage = usage()
    return out


def text_output(text: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", text)
    out.usage = usage()
    return out


def multi_call_output(calls: list[tuple[str, dict]]) -> ModelOutput:
    message = ChatMessageAssistant(
        content="",
        tool_calls=[ToolCall(id=f"call_{i}", function=f, arguments=a) for i, (f, a) in enumerate(calls)],
        model="mockllm/model",
    )
    out = ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])
    out.usage = usage()
    return out


def mock(fn):
    return get_model("mockllm/model", custom_outputs=fn, memoize=False)


def run(tasks, model, log_dir, **kwargs):
    kwargs.setdefault("epochs", 1)
    logs = inspect_eval(tasks, model=model, log_dir=str(log_dir), display="none", log_realtime=False, **kwargs)
    for log in logs:
        assert log.status == "success", log.error
    return logs


def by_task(logs):
    return {(log.eval.metadata["regime"], log.eval.metadata["strategy"]): log for log in logs}


def score_of(sample):
    return sample.scores["navigation_scorer"]


def model_events(sample, navigator: bool):
    """Navigator calls carry the ``move`` tool; audit calls carry no tools. Long
    texts are stored as log attachments: resolve them before reading prompts."""
    events = [e for e in resolve_sample_attachments(sample, "full").events if e.event == "model"]
    return [e for e in events if any(t.name == "move" for t in e.tools) == navigator]


def flag_auditor(flag):
    """A mockllm auditor answering every batch in the specification's JSON; ``flag(id)`` decides is_stale.
    Records the entry ids of each call."""
    calls: list[list[str]] = []

    def generate(input, tools, tool_choice, config):
        assert not tools, "audit calls carry no tools"
        ids = [m.group(1) for m in ENTRY_RE.finditer(user_text(input))]
        calls.append(ids)
        return text_output(
            json.dumps([{"memory_id": i, "is_stale": flag(i), "confidence": 1.0, "reasoning": "x"} for i in ids])
        )

    return generate, calls


def bump_navigator():
    """Always calls move(UP): from (0,0) that bumps the edge, so every episode runs the full budget."""
    return lambda input, tools, tool_choice, config: tool_output("move", {"direction": "UP"})


# -- shared runs ------------------------------------------------------------------


# The observer plans on the observation alone, so what it sees of memory cannot change
# its path: all 50 instances of L1 and L2 run once with no memory (every instance's path)
# and once under omcd (every instance's memory through the full audit path); the other
# strategies run on the first OBSERVER_LIMIT instances (the same paths, their own views).
OBSERVER_FULL = ("no_memory", "omcd")
OBSERVER_LIMIT = 10


@pytest.fixture(scope="module")
def observer_logs(tmp_path_factory):
    out = tmp_path_factory.mktemp("observer")
    full = [navigate(regime=r, strategy=s, epochs=1) for r in ("L1", "L2") for s in OBSERVER_FULL]
    part = [
        navigate(regime=r, strategy=s, epochs=1) for r in ("L1", "L2") for s in STRATEGIES if s not in OBSERVER_FULL
    ]
    logs = run(full, "spatialstale/observer", out, log_samples=False)
    logs += run(part, "spatialstale/observer", out, log_samples=False, limit=OBSERVER_LIMIT)
    return by_task(logs)


# The memory agent under no_filter on the first MEMORY_LIMIT instances of each regime:
# in every regime some episodes succeed and some die on a stale entry (asserted), so each
# outcome's path is compared with the simulation; the other instances repeat those paths.
MEMORY_LIMIT = 25


@pytest.fixture(scope="module")
def memory_no_filter_logs(tmp_path_factory):
    tasks = [navigate(regime=r, strategy="no_filter", epochs=1) for r in REGIMES]
    return by_task(run(tasks, "spatialstale/memory", tmp_path_factory.mktemp("memory_nf"), limit=MEMORY_LIMIT))


FILTERED_LIMIT = 12


@pytest.fixture(scope="module")
def memory_filtered_logs(tmp_path_factory):
    tasks = [navigate(regime=r, strategy=s, epochs=1) for r in REGIMES for s in ("oracle", "omcd")]
    return by_task(run(tasks, "spatialstale/memory", tmp_path_factory.mktemp("memory_f"), limit=FILTERED_LIMIT))


# -- the observer succeeds everywhere ----------------------------------------------


@pytest.mark.parametrize("regime", ["L1", "L2"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_observer_succeeds_on_every_instance(observer_logs, regime, strategy):
    log = observer_logs[(regime, strategy)]
    expected = 50 if strategy in OBSERVER_FULL else OBSERVER_LIMIT
    assert log.results.completed_samples == expected and len(INSTANCES[regime]) == 50
    metrics = log.results.scores[0].metrics
    assert metrics["success_rate"].value == 1.0
    assert metrics["death_rate"].value == 0.0
    assert metrics["timeout_rate"].value == 0.0


# -- the memory-only agent under no_filter matches an independent simulation -------


@pytest.mark.parametrize("regime", REGIMES)
def test_memory_agent_no_filter_matches_independent_simulation(memory_no_filter_logs, regime):
    log = memory_no_filter_logs[(regime, "no_filter")]
    assert len(log.samples) == MEMORY_LIMIT
    outcomes = {"success": 0, "death": 0, "timeout": 0}
    for sample in log.samples:
        inst = INSTANCES[regime][sample.id]
        expected = simulate_memory_agent(inst)
        score = score_of(sample)
        got = score.metadata
        assert (got["outcome"], got["steps"]) == (expected["outcome"], expected["steps"]), sample.id
        assert got["trajectory"] == expected["trajectory"], sample.id
        assert got["death_cell"] == expected["death_cell"], sample.id
        for key in ("success", "death", "timeout"):
            assert score.value[key] == int(expected["outcome"] == key), (sample.id, key)
        assert score.value["steps"] == expected["steps"]
        reward = {"success": 1.0, "death": -1.0, "timeout": 0.0}[expected["outcome"]]
        assert score.metadata["counts"]["reward"] == reward
        if expected["outcome"] == "death":
            # The planner only enters cells memory calls SAFE, so every death is on a
            # thawed cell whose (stale) entry was shown.
            r, c = expected["death_cell"]
            assert inst["g0"][r][c] == "F" and grid_after(inst, expected["steps"] - 1)[r][c] == "H"
            assert score.value["death_on_stale"] == score.metadata["counts"]["death_on_stale_shown"] == 1, sample.id
            assert got["death_on_stale_shown"] is True
        else:
            assert score.value["death_on_stale"] == 0 and score.metadata["counts"]["death_on_stale_shown"] == 0
        outcomes[expected["outcome"]] += 1
    # both outcomes' paths compared, in every regime: trusting raw memory kills on some pre-game thaw
    assert outcomes["success"] > 0 and outcomes["death"] > 0, outcomes
    metrics = log.results.scores[0].metrics
    for key in outcomes:
        assert metrics[f"{key}_rate"].value == pytest.approx(outcomes[key] / MEMORY_LIMIT)
    assert sum(metrics[f"{k}_rate"].value for k in outcomes) == pytest.approx(1.0)
    assert metrics["death_on_stale_rate"].value == pytest.approx(outcomes["death"] / MEMORY_LIMIT)


def test_score_and_metadata_shape(memory_no_filter_logs):
    for (regime, _), log in memory_no_filter_logs.items():
        for sample in log.samples:
            inst = INSTANCES[regime][sample.id]
            assert sample.id == inst["id"]
            for key, value in (("instance_id", inst["id"]), ("regime", regime), ("seed", inst["seed"])):
                assert sample.metadata[key] == value
            assert sample.metadata["strategy"] == "no_filter" and sample.metadata["modality"] == "text"
            score = score_of(sample)
            assert VALUE_KEYS <= set(score.metadata["counts"]), VALUE_KEYS - set(score.metadata["counts"])
            meta = score.metadata
            assert META_KEYS <= set(meta), META_KEYS - set(meta)
            steps = score.value["steps"]
            assert meta["outcome"] in ("success", "death", "timeout")
            assert meta["trajectory"][0] == [0, 0]
            assert len(meta["trajectory"]) == steps + 1 and len(meta["actions"]) == steps
            for i, action in enumerate(meta["actions"]):
                assert list(step_pos(tuple(meta["trajectory"][i]), action)) == meta["trajectory"][i + 1]
            if meta["outcome"] == "success":
                assert meta["trajectory"][-1] == [7, 7] and meta["death_cell"] is None
            if meta["outcome"] == "death":
                assert meta["death_cell"] == meta["trajectory"][-1]
            assert score.metadata["counts"]["tokens"] > 0
            assert score.metadata["counts"]["fallbacks"] == 0
            if regime == "L3":
                fired = fired_events(inst, steps, meta["outcome"])
                assert [e["step"] for e in meta["events_realized"]] == [e["step"] for e in fired]
                assert [e["cells"] for e in meta["events_realized"]] == [e["cells"] for e in fired]
            else:
                assert meta["events_realized"] == []
            assert meta["audits"] == []


# -- oracle and omcd with a perfect auditor never die on a stale cell ---------------


@pytest.mark.parametrize("regime", REGIMES)
@pytest.mark.parametrize("strategy", ["oracle", "omcd"])
def test_filtered_memory_agent_never_dies_on_stale_cell(memory_filtered_logs, regime, strategy):
    log = memory_filtered_logs[(regime, strategy)]
    assert len(log.samples) == FILTERED_LIMIT
    for sample in log.samples:
        inst = INSTANCES[regime][sample.id]
        score = score_of(sample)
        meta = score.metadata
        assert score.value["death_on_stale"] == 0, sample.id
        assert meta["death_on_stale_shown"] is False
        if meta["outcome"] == "death":  # independent check of the dying cell
            r, c = meta["death_cell"]
            grid = grid_after(inst, score.value["steps"] - 1)
            assert (inst["g0"][r][c] == "H") == (grid[r][c] == "H"), sample.id
        # With every stale entry removed, a SAFE claim the planner follows is true now.
        assert meta["outcome"] != "death", sample.id
        # Each audit window removes exactly the entries stale at that moment.
        steps = score.value["steps"]
        if regime == "L3":
            windows = [e["step"] for e in fired_events(inst, steps, meta["outcome"])]
        else:
            windows = [0]
        assert [a["step"] for a in meta["audits"]] == windows, sample.id
        for audit in meta["audits"]:
            assert set(audit["removed"]) == stale_ids(inst, grid_after(inst, audit["step"])), sample.id
        expected_calls = 7 * len(windows) if strategy == "omcd" else 0
        assert score.metadata["counts"]["audit_calls"] == expected_calls, sample.id
        assert len(model_events(sample, navigator=False)) == expected_calls, sample.id
    if regime == "L3":
        assert any(len(score_of(s).metadata["audits"]) > 1 for s in log.samples), "no L3 re-audit exercised"


# -- omcd audit mechanics --------------------------------------------------------------


def test_omcd_batches_ceil_n_over_b(tmp_path):
    tasks = [navigate(regime="L1", strategy="omcd", batch_size=b, epochs=1) for b in (10, 20)]
    logs = run(tasks, "spatialstale/observer", tmp_path, limit=3)
    for log, b in zip(logs, (10, 20)):
        assert log.eval.metadata["batch_size"] == b
        expected = math.ceil(N_ENTRIES / b)
        assert expected == {10: 7, 20: 4}[b]
        assert len(log.samples) == 3
        for sample in log.samples:
            score = score_of(sample)
            assert score.metadata["counts"]["audit_calls"] == expected
            audits = model_events(sample, navigator=False)
            assert len(audits) == expected
            sizes = [len(ENTRY_RE.findall(user_text(e.input))) for e in audits]
            assert sizes == [b] * (N_ENTRIES // b) + [N_ENTRIES % b]
            ids = [m for e in audits for m in ENTRY_RE.findall(user_text(e.input))]
            assert sorted(i[0] for i in ids) == [f"mem_{k:03d}" for k in range(N_ENTRIES)]
            inst = INSTANCES["L1"][sample.id]
            assert set(score.metadata["audits"][0]["removed"]) == stale_ids(inst, inst["grid"])


def test_omcd_reaudits_after_each_l3_event(memory_filtered_logs):
    """The memory agent with a perfect auditor, L3: one 7-call audit right after each
    event's move (before the next decision), none at the start (nothing changed yet)."""
    log = memory_filtered_logs[("L3", "omcd")]
    total_fired = 0
    for sample in log.samples:
        inst = INSTANCES["L3"][sample.id]
        score = score_of(sample)
        steps = score.value["steps"]
        fired = fired_events(inst, steps, score.metadata["outcome"])
        total_fired += len(fired)
        assert len(score.metadata["events_realized"]) == len(fired)
        assert score.metadata["counts"]["audit_calls"] == 7 * len(fired), sample.id
        assert [a["step"] for a in score.metadata["audits"]] == [e["step"] for e in fired]
        kinds = [
            "nav" if any(t.name == "move" for t in e.tools) else "audit" for e in sample.events if e.event == "model"
        ]
        expected = []
        for step in range(1, steps + 1):
            expected += ["nav"] + ["audit"] * (7 if any(e["step"] == step for e in fired) else 0)
        assert kinds == expected, sample.id
    assert total_fired > len(log.samples), "several events per episode expected"


def test_omcd_uses_auditor_role(tmp_path):
    generate, calls = flag_auditor(lambda _id: True)
    (log,) = run(
        navigate(regime="L1", strategy="omcd", epochs=1),
        "spatialstale/observer",
        tmp_path,
        limit=3,
        model_roles={"auditor": mock(generate)},
    )
    assert len(calls) == 3 * 7
    assert all(len(ids) in (10, 4) for ids in calls)
    for sample in log.samples:
        score = score_of(sample)
        meta = score.metadata
        assert meta["view_size"] == 0
        assert len(meta["audits"][0]["removed"]) == N_ENTRIES
        assert score.metadata["counts"]["audit_calls"] == 7
        assert meta["tokens"]["auditor"] == 7 * USAGE["total_tokens"]
        assert score.metadata["counts"]["tokens"] == meta["tokens"]["navigator"] + 7 * USAGE["total_tokens"]
        audits = model_events(sample, navigator=False)
        assert [e.model for e in audits] == ["mockllm/model"] * 7
        navs = model_events(sample, navigator=True)
        assert navs and all(e.model == "spatialstale/observer" for e in navs)
        assert all(not ENTRY_RE.search(user_text(e.input)) for e in navs), "flagged entries still shown"
        assert meta["outcome"] == "success"  # the observer ignores memory
    assert log.stats.model_usage["mockllm/model"].total_tokens == 3 * 7 * USAGE["total_tokens"]


def test_self_verify_one_call_with_all_entries(tmp_path):
    generate, calls = flag_auditor(lambda i: i in ("mem_010", "mem_027"))
    logs = run(
        [navigate(regime=r, strategy="self_verify", epochs=1) for r in ("L1", "L3")],
        "spatialstale/observer",
        tmp_path,
        limit=2,
        model_roles={"auditor": mock(generate)},
    )
    assert len(calls) == 4  # one per episode, L3 included (no re-audit on events)
    for ids in calls:
        assert sorted(ids) == [f"mem_{k:03d}" for k in range(N_ENTRIES)]
    for log in logs:
        for sample in log.samples:
            score = score_of(sample)
            assert score.metadata["counts"]["audit_calls"] == 1
            assert len(model_events(sample, navigator=False)) == 1
            assert len(score.metadata["audits"]) == 1
            assert score.metadata["audits"][0]["removed"] == ["mem_010", "mem_027"]
            assert score.metadata["view_size"] == N_ENTRIES - 2
            for event in model_events(sample, navigator=True):
                shown = {m.group(1) for m in ENTRY_RE.finditer(user_text(event.input))}
                assert len(shown) == N_ENTRIES - 2 and not shown & {"mem_010", "mem_027"}


# -- junk replies ------------------------------------------------------------------------

PROSE = "I would head south-east, towards the goal, carefully."
JUNK = ("prose", "north", "no_argument", "unknown_tool", "two_calls")


FALLBACK_KINDS = JUNK[:4]


def junk_navigator(kinds=JUNK):
    """Emits each junk reply in ``kinds`` once, only when every goal-ward neighbour is
    safe (so a greedy fallback cannot kill); otherwise, and afterwards, moves along a
    BFS path on the observed grid."""
    state: dict[tuple, dict] = {}

    def generate(input, tools, tool_choice, config):
        grid, agent, goal = parse_observation(user_text(input))
        st = state.setdefault(tuple(grid), {"pending": list(kinds), "emitted": {}, "decisions": 0})
        decision = st["decisions"]
        st["decisions"] += 1

        def safe(cell):
            return grid[cell[0]][cell[1]] != "H"

        best = bfs_first_step(safe, agent, goal)
        toward = [step_pos(agent, d) for d in ORDER if manhattan(step_pos(agent, d), goal) < manhattan(agent, goal)]
        greedy_safe = all(c == goal or (safe(c) and bfs_first_step(safe, c, goal) is not None) for c in toward)
        if st["pending"] and (greedy_safe or st["pending"][0] == "two_calls"):
            kind = st["pending"].pop(0)
            st["emitted"][kind] = decision
            if kind == "prose":
                return text_output(PROSE)
            if kind == "north":
                return tool_output("move", {"direction": "NORTH"})
            if kind == "no_argument":
                return tool_output("move", {})
            if kind == "unknown_tool":
                return tool_output("jump", {"direction": "DOWN"})
            other = next(d for d in ORDER if d != best)
            st["two_calls_first"] = best
            return multi_call_output([("move", {"direction": best}), ("move", {"direction": other})])
        return tool_output("move", {"direction": best})

    return generate, state


def check_junk_run(log, state, kinds):
    """Shared assertions: the run and every sample succeed; each fallback kind cost
    exactly one greedy step toward the goal; a second call is counted, not executed."""
    assert log.status == "success", log.error
    fallback_kinds = [k for k in kinds if k in FALLBACK_KINDS]
    total_steps = 0
    for sample in log.samples:
        assert sample.error is None
        assert sample.scores and "navigation_scorer" in sample.scores
        inst = INSTANCES["L1"][sample.id]
        st = state[tuple(inst["grid"])]
        assert not st["pending"], "test setup: every junk kind must have been emitted"
        score = score_of(sample)
        meta = score.metadata
        steps = score.value["steps"]
        total_steps += steps
        assert meta["outcome"] == "success"
        assert st["decisions"] == steps  # one decision per step, junk included
        assert score.metadata["counts"]["fallbacks"] == len(fallback_kinds) == len(meta["fallbacks"])
        assert score.metadata["counts"]["extra_calls"] == int("two_calls" in kinds)
        assert [f["step"] for f in meta["fallbacks"]] == sorted(st["emitted"][k] + 1 for k in fallback_kinds)
        for fb in meta["fallbacks"]:
            before, after = meta["trajectory"][fb["step"] - 1], meta["trajectory"][fb["step"]]
            assert meta["actions"][fb["step"] - 1] == fb["direction"]
            assert manhattan(after, (7, 7)) == manhattan(before, (7, 7)) - 1, "fallback must step toward the goal"
            assert fb["problem"]
        if "prose" in kinds:
            (prose,) = [fb for fb in meta["fallbacks"] if fb["step"] == st["emitted"]["prose"] + 1]
            assert PROSE in prose["reply"]
        if "two_calls" in kinds:  # only the first call executes
            d = st["emitted"]["two_calls"]
            assert meta["actions"][d] == st["two_calls_first"]
            assert list(step_pos(tuple(meta["trajectory"][d]), st["two_calls_first"])) == meta["trajectory"][d + 1]
        navs = model_events(sample, navigator=True)
        assert len(navs) == steps
        assert all(e.config.parallel_tool_calls is False for e in navs)
    rate = log.results.scores[0].metrics["fallback_rate"].value
    assert rate == pytest.approx(len(fallback_kinds) * len(log.samples) / total_steps)


@pytest.mark.parametrize("kind", JUNK)
def test_each_junk_reply_never_fails_the_sample(tmp_path, kind):
    generate, state = junk_navigator((kind,))
    (log,) = inspect_eval(
        navigate(regime="L1", strategy="no_filter", epochs=1),
        model=mock(generate),
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
        limit=2,
    )
    check_junk_run(log, state, (kind,))


def test_all_junk_replies_in_one_episode_are_counted(tmp_path):
    generate, state = junk_navigator(JUNK)
    (log,) = inspect_eval(
        navigate(regime="L1", strategy="no_filter", epochs=1),
        model=mock(generate),
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
        limit=4,
    )
    assert len(log.samples) == 4
    check_junk_run(log, state, JUNK)


# -- prompt size and history -----------------------------------------------------------


@pytest.fixture(scope="module")
def bump_l3_log(tmp_path_factory):
    (log,) = run(
        navigate(regime="L3", strategy="no_filter", epochs=1),
        mock(bump_navigator()),
        tmp_path_factory.mktemp("bump"),
        limit=2,
    )
    return read_eval_log(log.location)


def test_history_zero_keeps_prompt_size_constant(bump_l3_log):
    for sample in bump_l3_log.samples:
        score = score_of(sample)
        assert score.metadata["outcome"] == "timeout" and score.value["steps"] == MAX_STEPS
        assert score.value["timeout"] == 1 and score.metadata["counts"]["reward"] == 0
        navs = model_events(sample, navigator=True)
        assert len(navs) == MAX_STEPS
        assert {len(e.input) for e in navs} == {2}
        lengths = [sum(len(m.text) for m in e.input) for e in navs]
        # only the steps-left number changes (50 -> 1): at most one character
        assert max(lengths) - min(lengths) <= 2, lengths
        # navigator tokens grow linearly: constant per decision with constant usage
        assert score.metadata["tokens"]["navigator"] == MAX_STEPS * USAGE["total_tokens"]


#: The step budget of the history runs: past the largest history tested (6), so every
#: history reaches its cap and keeps it for several steps (the instances' 50 add nothing).
HISTORY_STEPS = 10


def test_history_two_grows_to_a_cap(tmp_path):
    (log,) = run(
        navigate(regime="L1", strategy="no_filter", history=2, max_steps=HISTORY_STEPS, epochs=1),
        mock(bump_navigator()),
        tmp_path,
        limit=1,
    )
    sample = read_eval_log(log.location).samples[0]
    navs = model_events(sample, navigator=True)
    assert len(navs) == HISTORY_STEPS
    counts = [len(e.input) for e in navs]
    users = [sum(isinstance(m, ChatMessageUser) and "Row 0:" in m.text for m in e.input) for e in navs]
    assert users == [min(i, 2) + 1 for i in range(HISTORY_STEPS)]
    assert counts[0] == 2 and counts[0] < counts[1] < counts[2]
    assert set(counts[2:]) == {counts[2]}
    lengths = [sum(len(m.text) for m in e.input) for e in navs]
    assert lengths[2] > lengths[1] > lengths[0]
    assert max(lengths[2:]) - min(lengths[2:]) <= 10


@pytest.mark.parametrize("k", range(7))
def test_history_k_keeps_exactly_the_last_k_turns_from_the_first_step(k, tmp_path):
    """Each earlier turn is the step's user message, the navigator's move call and the tool's
    result (3 messages): step i is sent the system, min(i, k) whole turns, and its own user message."""
    (log,) = run(
        navigate(regime="L1", strategy="no_filter", history=k, max_steps=HISTORY_STEPS, epochs=1),
        mock(bump_navigator()),
        tmp_path,
        limit=1,
    )
    navs = model_events(read_eval_log(log.location).samples[0], navigator=True)
    assert len(navs) == HISTORY_STEPS
    assert [len(e.input) for e in navs] == [2 + 3 * min(i, k) for i in range(HISTORY_STEPS)]
    for i, e in enumerate(navs):  # the kept turns are the latest: their step lines count down to this one's
        users = [m.text for m in e.input if isinstance(m, ChatMessageUser) and "Row 0:" in m.text]
        assert len(users) == min(i, k) + 1


def test_l3_prompt_shows_the_grid_after_each_event(bump_l3_log):
    changed = 0
    for sample in bump_l3_log.samples:
        inst = INSTANCES["L3"][sample.id]
        navs = model_events(sample, navigator=True)
        for moves, event in enumerate(navs):
            grid, agent, goal = parse_observation(user_text(event.input))
            assert agent == (0, 0) and goal == (7, 7)
            assert grid == grid_after(inst, moves), (sample.id, moves)
            changed += grid != inst["g0"]
        meta = score_of(sample).metadata
        assert [e["step"] for e in meta["events_realized"]] == [e["step"] for e in inst["events"]]
    assert changed > 0


# -- bad parameters ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"strategy": "magic"}, "strategy"),
        ({"regime": "L9"}, "L9"),
        ({"modality": "audio"}, "modality"),
        ({"batch_size": 0}, "batch_size"),
        ({"history": -1}, "history"),
        ({"epochs": 0}, "epochs"),
        ({"dataset": "/nonexistent/spatialstale-dataset"}, "nonexistent"),
    ],
)
def test_bad_parameters_raise_before_any_model_call(kwargs, word):
    with pytest.raises(ValueError, match=word):
        navigate(**kwargs)


def test_bad_parameter_through_eval_makes_no_model_call(tmp_path):
    calls = []

    def generate(input, tools, tool_choice, config):
        calls.append(1)
        return tool_output("move", {"direction": "DOWN"})

    with pytest.raises(ValueError, match="strategy"):
        inspect_eval(
            navigate,
            task_args={"strategy": "magic", "regime": "L1"},
            model=mock(generate),
            log_dir=str(tmp_path),
            display="none",
            limit=1,
        )
    assert calls == []


# -- registry ------------------------------------------------------------------------------

def test_registry_name_runs(tmp_path):
    """In-process, from wherever pytest runs (the repo root for ``python -m pytest``)."""
    from inspect_ai._util.registry import registry_info

    name = registry_info(navigate).name
    assert name == "spatialstale_evals/navigate", (
        f"navigate registered as {name!r}: inspect derives the package prefix from the installed "
        "distribution's metadata, and a stray spatialstale_evals.egg-info in the working directory "
        "(on sys.path) shadows the editable install's dist-info (no direct_url.json -> not editable)"
    )
    logs = inspect_eval(
        "spatialstale_evals/navigate",
        task_args={"regime": "L1", "strategy": "no_memory"},
        model="spatialstale/observer",
        limit=1,
        epochs=1,
        log_dir=str(tmp_path),
        display="none",
    )
    (log,) = logs
    assert log.status == "success"
    assert len(log.samples) == 1 and log.samples[0].id == "L1-000"
    assert score_of(log.samples[0]).value["success"] == 1


# -- direction words and action ids ----------------------------------------------------


def test_each_direction_word_moves_as_the_spec_says():
    """The ``move`` tool's words reach the env through its action ids: each
    word moves the agent from the centre of an open 3x3 lake by the specification's
    delta (UP row-1, DOWN row+1, LEFT col-1, RIGHT col+1)."""
    from spatialstale_evals.navigation.episode import Episode
    from spatialstale_evals.world.env import DynamicFrozenLakeEnv
    from spatialstale_evals.world.instance import Instance

    lake = ("SFF", "FFF", "FFG")
    for word, (dr, dc) in DELTAS.items():
        inst = Instance(
            id="hand-000", regime="L1", seed=0, height=3, width=3, max_steps=9, g0=lake, grid=lake, events=(), memory=()
        )
        env = DynamicFrozenLakeEnv(inst)
        env.reset()
        env.agent = (1, 1)
        episode = Episode(env=env, view=[])
        episode.step(word)
        assert episode.agent == (1 + dr, 1 + dc), word
        assert episode.actions == [word]


# -- lenient directions ----------------------------------------------------------------


def test_lowercase_and_padded_directions_are_moves_not_fallbacks(tmp_path):
    """``move(" down ")`` is a valid move: the tool steps with the parsed
    direction, so the episode advances without a fallback (and never stalls)."""
    spelled = iter([" right", "down", "Down ", "dOwN"])
    inst = INSTANCES["L3"]["L3-000"]
    walk = [(0, 0), (0, 1), (1, 1), (2, 1), (3, 1)]
    assert [inst["g0"][r][c] for r, c in walk] == ["S", "F", "F", "F", "H"], "test setup: L3-000's g0 changed"

    def generate(input, tools, tool_choice, config):
        return tool_output("move", {"direction": next(spelled)})

    (log,) = run(navigate(regime="L3", strategy="no_memory"), mock(generate), tmp_path, sample_id="L3-000")
    score = score_of(log.samples[0])
    assert score.metadata["counts"]["fallbacks"] == 0
    assert score.metadata["actions"] == ["RIGHT", "DOWN", "DOWN", "DOWN"]
    assert score.metadata["trajectory"] == [list(c) for c in walk]
    assert score.metadata["outcome"] == "death"


def test_navigation_loop_records_prompt_call_and_answer_per_step(memory_no_filter_logs):
    """What ``inspect view`` shows of an episode played by ``navigation_loop``:
    per step one model call (its output is the ``move`` call) and, in the
    messages, the prompt, the call and the env's answer to that call."""
    log = memory_no_filter_logs[("L1", "no_filter")]
    for sample in log.samples[:10]:
        steps, actions = score_of(sample).value["steps"], score_of(sample).metadata["actions"]
        events = model_events(sample, navigator=True)
        assert len(events) == steps
        assert [e.output.message.tool_calls[0].arguments["direction"] for e in events] == actions
        system, *rest = resolve_sample_attachments(sample, "full").messages
        assert system.role == "system" and len(rest) == 3 * steps
        for i in range(steps):
            user, reply, answer = rest[3 * i : 3 * i + 3]
            assert user.role == "user" and "Agent at" in user.text
            assert reply.role == "assistant" and reply.tool_calls[0].function == "move"
            assert answer.role == "tool" and answer.tool_call_id == reply.tool_calls[0].id
            assert answer.text.startswith(f"Moved {actions[i]}") or answer.text.startswith("Bumped")
