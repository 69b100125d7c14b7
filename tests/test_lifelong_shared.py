"""``lifelong -T memory=shared`` and ``-T provenance=...``: two agents on one
memory store, and notes shown with the runtime's stamps.

Every expectation is computed here from the log's transcript (the memory
calls as the tool events hold them, the model that made each call) and the
lifetimes (the lake of each episode), with a blame, a BFS and a claim reader
of this file's own; never from the harness's ledger or scores.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.world import lifetimes

EPISODE = re.compile(r"notes at the start of episode (\d+)")
CLAIM = re.compile(r"^(SAFE|HOLE) at \((\d+),(\d+)\)$")
Cell = tuple[int, int]


def run(model: str, tmp_path: Any, limit: int, roles: dict[str, str] | None = None, **args: Any) -> EvalLog:
    (log,) = inspect_eval(
        lifelong(**args), model=model, model_roles=roles, limit=limit, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success", log.error
    assert all(s.error is None for s in log.samples)
    return read_eval_log(log.location, resolve_attachments=True)


def records(sample: Any) -> list[dict[str, Any]]:
    return sample.scores["lifelong_scorer"].metadata["episodes"]


def memory_calls(sample: Any) -> list[tuple[int, str, Any]]:
    """Every memory tool event with the episode it fell in and the model whose reply made it."""
    out, episode, model = [], 0, None
    for event in sample.events:
        if event.event == "info" and (found := EPISODE.search(str(event.source))):
            episode = int(found[1])
        elif event.event == "model":
            model = event.model
        elif event.event == "tool" and event.function == "memory":
            out.append((episode, model, event))
    return out


def claims(text: str) -> list[tuple[Cell, str]]:
    return [((int(m[2]), int(m[3])), m[1]) for line in text.split("\n") if (m := CLAIM.match(line))]


def reblame(old: list[tuple[str, int, str]], text: str, episode: int, author: str) -> list[tuple[str, int, str]]:
    """A rewrite's blame: a line whose text the file held keeps its stamp, any other is the writer's."""
    pool: dict[str, list[tuple[str, int, str]]] = {}
    for entry in old:
        pool.setdefault(entry[0], []).append(entry)
    return [pool[line].pop(0) if pool.get(line) else (line, episode, author) for line in text.split("\n")]


def distances(grid: Any, source: Cell) -> dict[Cell, int]:
    h, w = len(grid), len(grid[0])
    dist, queue = {source: 0}, deque([source])
    while queue:
        r, c = queue.popleft()
        for n in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= n[0] < h and 0 <= n[1] < w and n not in dist and grid[n[0]][n[1]] != "H":
                dist[n] = dist[(r, c)] + 1
                queue.append(n)
    return dist


def expected_propagation(sample: Any, life: Any, authors: dict[str, str]) -> dict[int, dict[str, dict[str, int]]]:
    """Per episode, per writer: claims read, stale when read, acted on (a death on a
    SAFE claim; a HOLE claim on ice on a shortest path never entered in an episode
    that was no shortest-path success) and repaired (claimed as the cell is by the episode's end)."""
    blame: list[tuple[str, int, str]] = []
    text = ""
    reads: dict[int, dict[str, set[tuple[Cell, str]]]] = {}
    end_text: dict[int, str] = {}
    for episode, model, event in memory_calls(sample):
        args = event.arguments
        if event.error is None and args["command"] == "create":
            text = args["file_text"]
            blame = reblame(blame, text, episode, authors[model])
        elif event.error is None and args["command"] == "view":
            for (line, _, writer), line_text in zip(blame, text.split("\n")):
                assert line == line_text
                for cell, claim in claims(line):
                    reads.setdefault(episode, {}).setdefault(writer, set()).add((cell, claim))
        end_text[episode] = text
    out: dict[int, dict[str, dict[str, int]]] = {}
    for rec, world in zip(records(sample), life.episodes):
        k, grid = rec["episode"], world.grid
        ends: dict[Cell, set[str]] = {}
        for cell, claim in claims(end_text.get(k, "")):
            ends.setdefault(cell, set()).add(claim)
        start, goal = (0, 0), (len(grid) - 1, len(grid[0]) - 1)
        ahead, behind = distances(grid, start), distances(grid, goal)
        steps = len(rec["trajectory"]) - 1
        best = tuple(rec["trajectory"][-1]) == goal and steps == ahead[goal]
        entered = {tuple(p) for p in rec["trajectory"]}
        death = tuple(rec["trajectory"][-1]) if rec["outcome"] == "death" else None
        for writer, read in reads.get(k, {}).items():
            counts = dict.fromkeys(("read", "stale_read", "acted_on", "hazard_deaths", "detours", "repaired"), 0)
            counts["read"] = len(read)
            for (r, c), claim in read:
                truth = "HOLE" if grid[r][c] == "H" else "SAFE"
                if claim == truth:
                    continue
                counts["stale_read"] += 1
                hazard = claim == "SAFE" and death == (r, c)
                on_path = ahead.get((r, c), -99) + behind.get((r, c), -99) == ahead[goal]
                detour = claim == "HOLE" and not best and (r, c) not in entered and on_path
                counts["hazard_deaths"] += hazard
                counts["detours"] += detour
                counts["acted_on"] += hazard or detour
                counts["repaired"] += ends.get((r, c), set()) == {truth}
            out.setdefault(k, {})[writer] = counts
    return out


WALKER, SCOUT = "spatialstale/write_once", "spatialstale/credulous"


@pytest.fixture(scope="module")
def shared_log(tmp_path_factory: Any) -> EvalLog:
    return run(WALKER, tmp_path_factory.mktemp("shared"), 4, {"scout": SCOUT}, regime="L2", episodes=5,
               memory="shared")  # fmt: skip


def test_shared_every_write_is_recorded_with_its_author_and_episode(shared_log):
    """The record's writes are the memory writes of the transcript, each by the
    model that made it (the walker's on odd episodes, the scout's on even ones)."""
    authors = {WALKER: "walker", SCOUT: "scout"}
    for sample in shared_log.samples:
        expected = [
            (k, authors[model], e.arguments["command"], e.arguments["path"])
            for k, model, e in memory_calls(sample)
            if e.arguments["command"] != "view" and e.error is None
        ]
        got = [
            (r["episode"], r["shared"]["author"], w["command"], w["path"])
            for r in records(sample)
            for w in r["shared"]["writes"]
        ]
        assert got == expected and got
        assert {(k, a) for k, a, _, _ in got} <= {(k, "walker" if k % 2 else "scout") for k in range(1, 6)}


def test_shared_stale_propagation_is_counted_exactly(shared_log):
    """Per episode and writer: the claims read, stale, acted on and repaired, recomputed here."""
    lives = {lt.id: lt for lt in lifetimes.load(None, "L2")}
    authors = {WALKER: "walker", SCOUT: "scout"}
    totals = dict.fromkeys(("stale_read", "hazard_deaths", "detours"), 0)
    for sample in shared_log.samples:
        expected = expected_propagation(sample, lives[sample.id], authors)
        for rec in records(sample):
            assert rec["shared"]["propagation"] == expected.get(rec["episode"], {}), rec["episode"]
            for prop in rec["shared"]["propagation"].values():
                for key in totals:
                    totals[key] += prop[key]
    assert all(totals.values()), totals  # stale notes read, a scout's death on the walker's, a detour


def test_readonly_scout_writes_are_refused_and_counted(tmp_path):
    log = run("spatialstale/diligent", tmp_path, 1, regime="L1", episodes=4, memory="shared", scout_access="readonly")
    sample = log.samples[0]
    calls = memory_calls(sample)
    refused = [(k, e) for k, _, e in calls if e.arguments["command"] != "view" and e.error is not None]
    assert refused and {k % 2 for k, _ in refused} == {0}, "only the scout's (even) episodes' writes fail"
    for rec in records(sample):
        k = rec["episode"]
        assert rec["shared"]["refused_writes"] == sum(j == k for j, _ in refused)
        assert rec["shared"]["writes"] == [] or k % 2 == 1
    texts = [e.arguments["file_text"] for k, _, e in calls if e.arguments["command"] == "create" and e.error is None]
    assert len(texts) == 2, "the walker wrote in episodes 1 and 3 only"


def render(text: str, stamps: list[int]) -> str:
    """The memory tool's ``cat -n`` answer, each claim line stamped as the runtime must."""
    lines = [
        f"{i:6}\t{line}" + (f"  [asserted; last written in episode {stamps[i - 1]}]" if CLAIM.match(line) else "")
        for i, line in enumerate(text.split("\n"), start=1)
    ]
    return "Here's the result of running `cat -n` on /memories/lake.md:\n" + "\n".join(lines) + "\n"


def test_stamped_views_are_the_files_plus_their_stamps(tmp_path):
    """Each view answered is the file as last written plus, on each claim line,
    the episode that last wrote it (a line rewritten unchanged keeps its episode);
    the file itself is what the agent wrote; every step prompt says the view is verified."""
    log = run("spatialstale/diligent", tmp_path, 1, regime="L2", episodes=4, provenance="stamped")
    sample = log.samples[0]
    blame: list[tuple[str, int, str]] = []
    text, views = "", 0
    for k, _, event in memory_calls(sample):
        if event.error is None and event.arguments["command"] == "create":
            text = event.arguments["file_text"]
            blame = reblame(blame, text, k, "walker")
        elif event.error is None and event.arguments["command"] == "view":
            assert event.result == render(text, [e for _, e, _ in blame])
            views += 1
    assert views == 3 and len({e for _, e, _ in blame}) > 1, "later episodes rewrote some lines, kept others"
    prompts = [m for e in sample.events if e.event == "model" for m in e.input if m.role == "user"]
    steps = [m for m in prompts if "steps left" in m.text.lower()]
    assert steps and all("Verified now: the view above is the lake" in m.text for m in steps)


@pytest.mark.parametrize("regime", ["L1", "L2"])
def test_credulous_heeds_contradicted_notes(tmp_path, regime):
    """Without stamps ``credulous`` dies on SAFE notes over holes it sees; under
    ``resolved`` none of its deaths is on a cell a prompt labelled contradicted
    before the fatal move, and it has no death on a SAFE note at all."""
    # one lifetime of 3 episodes: its plain run dies on a SAFE note (episode 2 on L1, 3 on L2) and its
    # resolved run is shown contradicted notes; a second lifetime or later episode is more of the same
    plain = run("spatialstale/credulous", tmp_path / "none", 1, regime=regime, episodes=3)
    resolved = run("spatialstale/credulous", tmp_path / "resolved", 1, regime=regime, episodes=3,
                   provenance="resolved")  # fmt: skip
    causes = [r["death_cause"] for s in plain.samples for r in records(s)]
    assert "safe_note" in causes
    label = re.compile(r"CONTRADICTED by the current view: \((\d+),(\d+)\) is HOLE now")
    labelled = 0
    for sample in resolved.samples:
        shown = {
            (int(m[1]), int(m[2]))
            for e in sample.events
            if e.event == "model"
            for msg in e.input
            for m in label.finditer(msg.text)
        }
        for rec in records(sample):
            assert rec["death_cause"] != "safe_note"
            if rec["outcome"] == "death":
                assert tuple(rec["death_cell"]) not in shown
        labelled += len(shown)
    assert labelled, "the runtime labelled notes contradicted"


def test_trust_gap_view_has_a_row_per_writer_and_reader(shared_log):
    """The family's trust-gap rows of a shared run: one per (writer, reader) pair
    read, each the sum of the episode records' propagation counts."""
    from spatialstale_evals.lifetime.tables import records_from_logs, trust_rows

    rows = trust_rows(records_from_logs([shared_log.location]))
    pairs = rows.dropna(subset=["writer"]).set_index(["writer", "reader"])
    expected: dict[tuple[str, str], dict[str, int]] = {}
    for sample in shared_log.samples:
        for rec in records(sample):
            for writer, counts in rec["shared"]["propagation"].items():
                row = expected.setdefault((writer, rec["shared"]["author"]), {})
                for key, v in counts.items():
                    row[key] = row.get(key, 0) + v
    assert set(pairs.index) == set(expected) and ("walker", "scout") in expected
    for pair, counts in expected.items():
        assert {k: pairs.loc[pair, k] for k in counts} == counts
