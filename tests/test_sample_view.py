"""What ``inspect view`` shows of a sample at a glance, in every task: the
input (the lake as the agent first sees it, drawn here from the dataset
JSONL), the target (the truth in a line: stale entries, shortest path
lengths, right answers, M_new) and the explanation naming what went right
and wrong (entries, probes, the judge's reasons).

Expected values are computed in this file from the dataset files and the
scripted replies: the stale entries from each entry's claim against the
grid, path lengths by a breadth-first search of this file's own, the
probes' verdicts from the replies the mock model gave."""

from __future__ import annotations

import json
import re
from collections import deque
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from spatialstale_evals.detect import detect
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.stale import stale

DATA = Path(__file__).parents[1] / "spatialstale_evals" / "data" / "spatialstale-v1"
MINI = Path(__file__).parent / "fixtures" / "stale_mini.json"
#: The map characters the docs give (docs/tasks.md): ice, hole, start, goal.
MAP = {"F": ".", "H": "H", "S": "S", "G": "G"}


def rows(path: Path) -> dict[str, dict]:
    return {
        r["id"]: r for r in (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    }


def output(text: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", text)
    out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return out


def run(task, model, tmp_path: Path, **kwargs):
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none", log_realtime=False, **kwargs)
    assert log.status == "success", log.error
    return [resolve_sample_attachments(s, "full") for s in log.samples]


def steps(grid: list[str]) -> int:
    """Moves on the shortest path from S to G over non-hole cells (breadth first)."""
    start = next((r, row.index("S")) for r, row in enumerate(grid) if "S" in row)
    seen, queue = {start: 0}, deque([start])
    while queue:
        r, c = queue.popleft()
        if grid[r][c] == "G":
            return seen[(r, c)]
        for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= nr < len(grid) and 0 <= nc < len(grid[0]) and (nr, nc) not in seen and grid[nr][nc] != "H":
                seen[(nr, nc)] = seen[(r, c)] + 1
                queue.append((nr, nc))
    raise AssertionError("no path")


def map_rows(grid: list[str]) -> list[str]:
    """The lake's rows as the input draws them, each after its row number."""
    return [f"{r} " + "".join(MAP[k] for k in row) for r, row in enumerate(grid)]


def stale_ids(row: dict, grid: list[str]) -> dict[str, str]:
    """Entry id -> its change, for every entry whose claim the grid contradicts."""
    out = {}
    for m in row["memory"]:
        now = grid[m["row"]][m["col"]]
        if m["claim"] == "SAFE" and now == "H":
            out[m["id"]] = "SAFE -> hole"
        elif m["claim"] == "DANGER" and now == "F":
            out[m["id"]] = "DANGER -> ice"
    return out


# -- detect ------------------------------------------------------------------------------


def test_detect_input_target_and_explanation_name_the_entries(tmp_path: Path) -> None:
    """One call audits all 64 entries; the reply flags the first two stale
    entries and the first two valid SAFE ones (not S): the explanation names
    the other stale entries as missed, with their cell and change, and the
    two valid ones, with their cells, as flagged wrongly."""
    jsonl = rows(DATA / "L2.jsonl")
    row = jsonl["L2-000"]
    truth = stale_ids(row, row["grid"])
    cells = {m["id"]: (m["row"], m["col"]) for m in row["memory"]}
    valid = [
        m["id"] for m in row["memory"] if m["id"] not in truth and m["claim"] == "SAFE" and cells[m["id"]] != (0, 0)
    ]
    flagged = [*list(truth)[:2], *valid[:2]]
    verdicts = [
        {"memory_id": m["id"], "is_stale": m["id"] in flagged, "confidence": 0.9, "reasoning": "x"}
        for m in row["memory"]
    ]
    model = get_model("mockllm/model", custom_outputs=[output(json.dumps(verdicts))], memoize=False)
    (sample,) = run(detect(regime="L2", batch_size=64), model, tmp_path, limit=1)

    assert sample.id == "L2-000"
    assert sample.input.startswith("detect L2-000 (L2, text)")
    assert all(line in sample.input for line in map_rows(row["grid"]))
    named = re.findall(r"(mem_\d+) \((\d+),(\d+)\) (SAFE -> hole|DANGER -> ice)", sample.target)
    assert {eid: ((int(r), int(c)), change) for eid, r, c, change in named} == {
        eid: (cells[eid], change) for eid, change in truth.items()
    }

    explanation = sample.scores["detection_scorer"].explanation
    line = explanation.split("\n\n")[1]
    assert line.startswith(f"- step 0: found 2 of {len(truth)} stale ({', '.join(list(truth)[:2])})")
    for eid, change in list(truth.items())[2:]:
        assert f"missed {eid} at ({cells[eid][0]},{cells[eid][1]}), {change}" in line
    wrong = ", ".join(f"{eid} at ({cells[eid][0]},{cells[eid][1]})" for eid in valid[:2])
    assert line.endswith(f"; flagged 2 wrongly: {wrong}")
    assert line.count("missed") == len(truth) - 2


def test_detect_l3_target_is_each_windows_change() -> None:
    """L3: one part per detection window, the entries gone stale since the one before marked +."""
    row = rows(DATA / "L3.jsonl")["L3-000"]
    sample = detect(regime="L3").dataset[0]
    grid = [list(r) for r in row["grid"]]
    before: dict[str, str] = {}
    parts = sample.target.split("; ")
    assert len(parts) == len(row["events"]) - sum(not e["cells"] for e in row["events"])
    for part, event in zip(parts, [e for e in row["events"] if e["cells"]]):
        for r, c in event["cells"]:
            grid[r][c] = "H" if grid[r][c] == "F" else "F"
        now = stale_ids(row, ["".join(x) for x in grid])
        assert part.startswith(f"step {event['step']}: ")
        if before:
            assert set(re.findall(r"\+(mem_\d+) \(", part)) == {e for e in now if before.get(e) != now[e]}, part
            assert set(re.findall(r"-(mem_\d+)", part)) == set(before) - set(now), part
            assert part.endswith(f"({len(now)} stale)")
        else:
            assert set(re.findall(r"(mem_\d+) \(", part)) == set(now), part
        before = now


# -- navigate ----------------------------------------------------------------------------


def test_navigate_input_and_target() -> None:
    jsonl = rows(DATA / "L2.jsonl")
    for sample in navigate(regime="L2", strategy="no_filter").dataset[:5]:
        row = jsonl[sample.id]
        assert sample.input.startswith(f"navigate {sample.id} (L2, text, no_filter:")
        assert all(line in sample.input for line in map_rows(row["grid"]))
        assert sample.target == f"safe shortest path: {steps(row['grid'])} steps on the lake at the start"
    no_memory = navigate(regime="L2", strategy="no_memory").dataset[0]
    assert "memory says" not in no_memory.input


def test_navigate_explanation_says_what_the_view_showed_of_the_death_cell(tmp_path: Path) -> None:
    """The memory agent walks no_filter's memory into a thawed hole: the
    explanation says the view showed that cell SAFE, as written."""
    jsonl = rows(DATA / "L2.jsonl")
    deaths = 0
    for sample in run(navigate(regime="L2", strategy="no_filter", epochs=1), "spatialstale/memory", tmp_path, limit=3):
        record = sample.scores["navigation_scorer"].metadata
        if record["outcome"] != "death":
            continue
        deaths += 1
        r, c = record["death_cell"]
        claim = next(m["claim"] for m in jsonl[sample.id]["memory"] if (m["row"], m["col"]) == (r, c))
        paragraphs = sample.scores["navigation_scorer"].explanation.split("\n\n")
        assert paragraphs[1] == f"the agent's memory view showed it as {claim} (as written)"
    assert deaths > 0


# -- probe -------------------------------------------------------------------------------


def test_probe_target_and_one_line_per_probe(tmp_path: Path) -> None:
    """The target lists the entries stale on the final lake. Every reply says
    SAFE and that the claim holds: an explicit probe passes where the cell is
    ice now, a premise probe where the entry is not stale; one line each."""
    jsonl = rows(DATA / "L2.jsonl")
    reply = output('{"state": "SAFE", "premise_holds": true, "step_on": true, "reason": "memory says so"}')
    model = get_model("mockllm/model", custom_outputs=iter(lambda: reply, None), memoize=False)
    (sample,) = run(probe(regime="L2", dimensions="explicit,premise"), model, tmp_path, limit=1)
    row = jsonl[sample.id]
    final = row["grid"]  # L2: nothing changes during the episode
    stale = stale_ids(row, final)
    cells = {m["id"]: (m["row"], m["col"]) for m in row["memory"]}
    claims = {m["id"]: m["claim"] for m in row["memory"]}
    assert all(line in sample.input for line in map_rows(final))
    listed = re.findall(r"(mem_\d+) \((\d+),(\d+)\) (SAFE -> hole|DANGER -> ice)", sample.target)
    assert {eid: ((int(r), int(c)), change) for eid, r, c, change in listed} == {
        eid: (cells[eid], change) for eid, change in stale.items()
    }
    assert sample.target.endswith("; every other entry's claim holds")

    lines = sample.scores["probe_scorer"].explanation.split("\n\n")[1].split("\n")
    probed = sample.scores["probe_scorer"].metadata["probes"]
    assert len(lines) == len(probed) > 0
    line = re.compile(r"^- (pass|fail): (explicit|premise) (mem_\d+) \((\d+),(\d+)\), ([^:]+): (.+)$")
    for text, record in zip(lines, probed):
        verdict, dimension, eid, r, c, kind, said = line.match(text).groups()
        assert (eid, dimension) == (record["memory_id"], record["dimension"])
        assert (int(r), int(c)) == cells[eid]
        ice_now = final[int(r)][int(c)] == "F"
        still = "SAFE, still ice" if claims[eid] == "SAFE" else "DANGER, still a hole"
        assert kind == stale.get(eid, still)
        if dimension == "explicit":
            assert (verdict, said) == ("pass" if ice_now else "fail", "said SAFE")
        else:
            assert (verdict, said) == ("pass" if eid not in stale else "fail", "said the claim holds")


# -- stale -------------------------------------------------------------------------------


def test_stale_target_is_m_new_and_the_explanation_quotes_each_reason(tmp_path: Path) -> None:
    raw = {r["uid"]: r for r in json.loads(MINI.read_text(encoding="utf-8"))}
    said = {
        "dim1_eval": {"reasoning": "It names the new\nstate.", "pass": True},
        "dim2_eval": {"reasoning": "It accepts the old premise.", "pass": False},
        "dim3_eval": {"reasoning": "It acts on the new state.", "pass": True},
    }
    grader = get_model("mockllm/model", custom_outputs=iter(lambda: output(json.dumps(said)), None), memoize=False)
    (log,) = inspect_eval(
        stale(path=str(MINI)),
        model="spatialstale/stale-aware",
        model_roles={"grader": grader},
        log_dir=str(tmp_path),
        display="none",
        limit=2,
    )
    assert log.status == "success", log.error
    for sample in log.samples:
        assert sample.target == raw[sample.id]["M_new"]
        lines = sample.scores["stale_judge"].explanation.split("\n\n")[1].split("\n")
        assert lines == [
            "- dim1: pass: It names the new state.",
            "- dim2: fail: It accepts the old premise.",
            "- dim3: pass: It acts on the new state.",
        ]


# -- lifelong ----------------------------------------------------------------------------


def test_lifelong_input_and_target_per_episode() -> None:
    """L2 flips cells before every episode and has no events: each episode's
    lake is the one before with its changes flipped (episode 1: g0 with the
    pre-game changes)."""
    lives = rows(DATA / "lifelong" / "L2.jsonl")
    for sample in lifelong(regime="L2", episodes=4, view_radius=None, initial_memory="paper").dataset[:3]:
        life = lives[sample.id]
        grid = [list(r) for r in life["g0"]]
        lengths = []
        for k, episode in enumerate(life["episodes"][:4]):
            for r, c in episode["changes"]:
                grid[r][c] = "H" if grid[r][c] == "F" else "F"
            lengths.append(steps(["".join(x) for x in grid]))
            if k == 0:
                assert all(line in sample.input for line in map_rows(["".join(x) for x in grid]))
        assert sample.target == "safe shortest path per episode, on the lake it starts on: " + ", ".join(
            f"{k}: {n}" for k, n in enumerate(lengths, start=1)
        )
        assert "memory says" in sample.input and sample.input.startswith(f"lifelong {sample.id} (L2): 4 episodes")
