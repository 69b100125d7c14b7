"""``lifelong -T memory=transcript``: one conversation across the lifetime,
compacted by Inspect's strategies, and what each compaction kept scored as notes.

Checked on the log alone against computations written here: the requests
(model events) a run sent, the lifetimes' lakes and the trajectories walked
(``tests/_lifetime_truth.py``): no reset between episodes; the scripted
agent in one conversation walks what ``diligent`` walks with its notes;
under ``trim`` the compactions fall where the token counts say, and the
claims each kept are those this file reads from the kept messages, scored
on the lake and the sightings of that moment.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.lifetime.arms import MEMORY_ARMS
from spatialstale_evals.world import lifetimes
from tests._lifetime_truth import saw, spl_and_excess

THRESHOLD = 3000
#: A view's cells as the step prompt shows them: ``(r,c)=F``.
CELL = re.compile(r"\((\d+),(\d+)\)=([SFHG])")
#: A note line of the recommended format (what the scripted summary writes).
NOTE = re.compile(r"^(SAFE|HOLE) at \((\d+),(\d+)\)$", re.MULTILINE)
BACK = "You are back at the start"


def run(tmp_path: Any, model: str = "spatialstale/diligent", limit: int = 1, **args: Any) -> EvalLog:
    task = lifelong(regime="L1", **args)
    (log,) = inspect_eval(task, model=model, limit=limit, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    assert all(s.error is None for s in log.samples)
    return read_eval_log(log.location, resolve_attachments=True)


def agent_requests(sample: Any) -> list[Any]:
    """The agent's requests (a summary request offers no tools)."""
    return [e for e in sample.events if e.event == "model" and e.tools]


def records(sample: Any) -> list[dict[str, Any]]:
    return sample.scores["lifelong_scorer"].metadata["episodes"]


def tokens(messages: list[Any], tools: list[Any] = ()) -> int:
    """ceil(characters / 4) per text part and per tool call, and per tool definition (the provider's count)."""
    total = 0
    for m in messages:
        parts = [m.content] if isinstance(m.content, str) else [p.text for p in m.content if p.type == "text"]
        total += sum(math.ceil(len(p) / 4) for p in parts)
        calls = getattr(m, "tool_calls", None) or []
        total += sum(math.ceil(len(c.function + json.dumps(c.arguments)) / 4) for c in calls)
    return total + sum(math.ceil(len(t.model_dump_json(exclude_none=True)) / 4) for t in tools)


def claims_of(messages: list[Any]) -> dict[tuple[int, int], str]:
    """The cells the messages' views show and their note lines claim, each as
    the last message claiming it does (S, F, G: SAFE)."""
    out: dict[tuple[int, int], str] = {}
    for m in messages:
        out |= {(int(r), int(c)): claim for claim, r, c in NOTE.findall(m.text)}
        out |= {(int(r), int(c)): ("HOLE" if k == "H" else "SAFE") for r, c, k in CELL.findall(m.text)}
    return out


def test_the_conversation_is_never_reset(tmp_path):
    sample = run(tmp_path, episodes=2, memory="transcript").samples[0]
    calls = agent_requests(sample)
    first_of = [i for i, e in enumerate(calls) if "begins." in e.input[-1].text]
    assert len(first_of) == 2 and BACK in calls[first_of[1]].input[-1].text and BACK not in calls[0].input[-1].text
    second = calls[first_of[1]]
    # the second episode's first request holds the first episode: every message of its last request, and the reply
    last = calls[first_of[1] - 1]
    held = [(m.role, m.text) for m in second.input]
    assert held[: len(last.input)] == [(m.role, m.text) for m in last.input]
    assert second.input[len(last.input)].tool_calls == last.output.message.tool_calls
    assert all([t.name for t in e.tools] == ["move"] for e in calls)  # no memory tool, no write-back
    assert len(calls) == sum(r["steps"] for r in records(sample))
    assert sample.metadata["memory"] == "transcript" and sample.metadata["compaction"] == "none"


def test_one_conversation_walks_what_diligent_walks_with_notes(tmp_path):
    """Acting on its latest sighting of every cell anywhere in the conversation,
    the scripted agent walks exactly the moves diligent walks through its
    notes; its SPL is the one this file computes from the walk and the lakes."""
    transcript = run(tmp_path / "t", limit=3, episodes=3, memory="transcript")
    notes = run(tmp_path / "n", limit=3, episodes=3)
    lives = {life.id: life for life in lifetimes.load(None, "L1")}
    for a, b in zip(transcript.samples, notes.samples):
        assert [r["actions"] for r in records(a)] == [r["actions"] for r in records(b)]
        for record, world in zip(records(a), lives[str(a.id)].episodes):
            assert record["spl"] == pytest.approx(spl_and_excess(world, record)[0])


def sightings_until(life: Any, recs: list[dict[str, Any]], episode: int, step: int) -> dict[tuple[int, int], str]:
    """Every cell the agent saw up to the request of step ``step`` of
    ``episode`` (its views at the positions of steps 0..step), as last seen."""
    seen: dict[tuple[int, int], str] = {}
    for record, world in zip(recs[: episode - 1], life.episodes):
        seen |= saw(world, record, 1)
    record = recs[episode - 1]
    partial = {"actions": record["actions"][: step + 1], "trajectory": record["trajectory"], "outcome": "-"}
    return seen | saw(life.episodes[episode - 1], partial, 1)


@pytest.mark.parametrize("strategy", ["trim", "summary"])
def test_compactions_fall_where_the_tokens_say_and_keep_what_the_kept_messages_claim(tmp_path, strategy):
    log = run(tmp_path, episodes=3, memory="transcript", compaction=strategy, compaction_threshold=THRESHOLD)
    sample = log.samples[0]
    life = {x.id: x for x in lifetimes.load(None, "L1")}[str(sample.id)]
    recs = records(sample)
    kept = sample.scores["lifelong_scorer"].metadata["compactions"]
    events = [e for e in sample.events if e.event in ("model", "compaction") and (e.event == "compaction" or e.tools)]
    infos = [e for e in sample.events if e.event == "info" and str(e.source).startswith("compaction ")]
    compactions = [i for i, e in enumerate(events) if e.event == "compaction"]
    assert len(compactions) == len(kept) == len(infos) >= 2, (len(compactions), len(kept))
    assert [json.loads(json.dumps(i.data)) for i in infos] == kept  # each shown in the transcript, as recorded
    for i, e in enumerate(events):
        if e.event != "model":
            continue
        sent = tokens(e.input, e.tools)
        assert sent == e.output.usage.input_tokens  # the provider counted what this file counts
        if i == 0 or events[i - 1].event != "compaction":
            assert sent <= THRESHOLD  # not compacted: within the threshold
    # the conversation as the agent lived it: the j-th request's reply is its j-th assistant message
    # (the log stores messages of equal content once, so positions, not ids, say where a request stands)
    replies = [k for k, m in enumerate(sample.messages) if m.role == "assistant"]
    requests = [i for i, e in enumerate(events) if e.event == "model"]
    for n, i in enumerate(compactions):
        event, before, after = events[i], events[i - 1], events[i + 1]
        j = requests.index(i + 1)
        # what the handler counted: the previous request (as its usage said) and every message since
        since = sample.messages[replies[j - 1] : replies[j]]
        new = [m for m in since if "summary" not in (m.metadata or {})]
        assert event.tokens_before == before.output.usage.input_tokens + tokens(new) > THRESHOLD
        # what it kept: the claims of the next request's messages, scored on the lake and sightings then
        record = kept[n]
        claims = claims_of(after.input)
        world = life.episodes[record["episode"] - 1]
        grid = world.grid_at(record["step"])
        truth = {(r, c): ("HOLE" if grid[r][c] == "H" else "SAFE") for r in range(8) for c in range(8)}
        seen = sightings_until(life, recs, record["episode"], record["step"])
        assert record["cells_claimed_after"] == len(claims)
        assert record["kept"]["claims_true"] == sum(claim == truth[c] for c, claim in claims.items())
        shares = []
        for name in ("SAFE", "HOLE"):
            cells = [c for c in seen if truth[c] == name]
            if cells:
                shares.append(sum(claims.get(c) == name for c in cells) / len(cells))
        assert record["note_balanced"] == pytest.approx(sum(shares) / len(shares))
        lost = claims_of(before.input + [before.output.message] + new).keys() - claims.keys()
        assert record["cells_lost"] == len(lost)
        if strategy == "summary":  # the scripted summary keeps every cell as last seen: nothing is lost
            assert record["cells_lost"] == 0 and record["note_balanced"] == record["note_attainable"]
    counts = sample.scores["lifelong_scorer"].metadata["counts"]
    assert counts["compactions"] == len(kept) and counts["compaction_failures"] == 0


def test_memory_tool_with_transcript_offers_it_and_plays_the_write_back(tmp_path):
    sample = run(tmp_path, episodes=2, memory="transcript", memory_tool=True).samples[0]
    calls = [e for e in sample.events if e.event == "model"]
    assert any([t.name for t in e.tools] == ["memory"] for e in calls)  # the write-back turn
    assert "/memories" in calls[0].input[0].text
    assert any("in this same conversation" in m.text for m in sample.messages)
    assert records(sample)[1]["notes"]["claims"] > 0  # diligent wrote its notes


def test_transcript_values_are_the_registrys_and_bad_ones_fail_before_any_call():
    assert tuple(MEMORY_ARMS)[:3] == ("notes", "none", "transcript")
    with pytest.raises(ValueError, match="compaction"):
        lifelong(memory="notes", compaction="trim")
    with pytest.raises(ValueError, match="memory_tool"):
        lifelong(memory="none", memory_tool=True)
    with pytest.raises(ValueError, match="history"):
        lifelong(memory="transcript", history=3)
    with pytest.raises(ValueError, match="compaction"):
        lifelong(memory="transcript", compaction="squash")
    with pytest.raises(ValueError, match="compaction_threshold"):
        lifelong(memory="transcript", compaction_threshold=0)


def test_the_architecture_table_pairs_lifetimes_by_every_memory_parameter():
    """Rows keyed by the run's memory arguments (not pooled across thresholds),
    the SPL gain against memory=none on the lifetimes both played, and
    kept_balanced from what the compactions kept; figures computed here."""
    import pandas as pd

    from spatialstale_evals.lifetime.architecture import architecture_of, architecture_tables
    from spatialstale_evals.lifetime.gain import base_config

    trim = {"memory": "transcript", "compaction": "trim", "compaction_threshold": 3000}
    assert architecture_of(trim) == "memory=transcript, compaction=trim, compaction_threshold=3000"
    assert architecture_of({}) == "memory=notes"
    config = "memory=transcript, compaction=trim, compaction_threshold=3000, view_radius=2"
    assert base_config(config) == "view_radius=2"
    spl = {"memory=none": [0.5, 0.6, 0.7], "memory=notes": [0.9, 0.6, 1.0], architecture_of(trim): [0.4, 0.6, 0.9]}
    rows = []
    for arch, values in spl.items():
        for i, x in enumerate(values):
            value = {"played": 1.0, "spl": x, "spl_episodes": 1.0, "success": 1.0, "death": 0.0}
            value["tokens"] = 100.0 * (i + 1)
            if arch.endswith("3000"):
                value |= {"compactions": 2.0, "kept_told_safe": 3.0, "kept_knowable_safe": 4.0,
                          "kept_told_hole": 1.0, "kept_knowable_hole": 2.0}  # fmt: skip
            rows.append({"model": "m", "config": arch, "regime": "L1", "instance_id": f"L1-00{i}", "value": value,
                         "spl_terms": [], "architecture": arch, "keeps_notes": arch == "memory=notes"})  # fmt: skip
    tables = architecture_tables(pd.DataFrame(rows))
    table = tables["architectures"].set_index("architecture")
    assert len(table) == 3 and set(tables["architectures"]["config"]) == {""}
    for arch, values in spl.items():
        assert table.loc[arch, "spl"] == pytest.approx(sum(values) / 3)
        assert table.loc[arch, "tokens_per_lifetime"] == pytest.approx(200.0)
        if arch != "memory=none":
            gain = sum(a - b for a, b in zip(values, spl["memory=none"])) / 3
            assert table.loc[arch, "spl_gain_vs_none"] == pytest.approx(gain)
    assert table.loc[architecture_of(trim), "kept_balanced"] == pytest.approx((3 / 4 + 1 / 2) / 2)
    assert math.isnan(table.loc["memory=none", "note_balanced"])
    assert math.isnan(table.loc["memory=none", "kept_balanced"])
    assert len(tables["architecture_tests"]) == 3  # every pair of the cell, on the lifetimes both played
