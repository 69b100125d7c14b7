"""Hostile STALE corpus files: a lone surrogate in a turn runs and is logged
(replaced, counted in the sample's metadata); a turn with empty content, a
timestamp that is not text, a file nested too deep to read are refused with a
clear error naming the record or the file."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from spatialstale_evals.stale_corpus.corpus import CorpusError, load_corpus

MINI = Path(__file__).parent / "fixtures" / "stale_mini.json"
RAW = json.loads(MINI.read_text(encoding="utf-8"))


def test_a_lone_surrogate_in_a_corpus_turn_is_replaced_counted_and_logged(tmp_path: Path) -> None:
    records = copy.deepcopy(RAW[:2])
    records[0]["haystack_session"][0][0]["content"] += " \ud800"  # json.dumps writes it as \\ud800: valid JSON
    records[1]["M_new"] += "\udcff\udcff"
    file = tmp_path / "surrogates.json"
    file.write_text(json.dumps(records), encoding="utf-8")
    (log,) = inspect_eval(
        "spatialstale_evals/stale",
        task_args={"path": str(file)},
        model="spatialstale/stale-aware",
        model_roles={"grader": "spatialstale/judge"},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    written = read_eval_log(log.location)
    assert [s.error for s in written.samples or []] == [None, None]
    counts = {s.id: s.metadata.get("corpus_replaced_characters") for s in written.samples or []}
    assert counts == {records[0]["uid"]: 1, records[1]["uid"]: 2}
    m_new = {s.id: s.metadata["m_new"] for s in written.samples or []}[records[1]["uid"]]
    assert m_new.endswith("\ufffd\ufffd")


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda r: r["haystack_session"][0][0].update(content=""), "content: non-empty text"),
        (lambda r: r["haystack_session"][1][1].update(content="   "), "haystack_session[1][1] must be"),
        (lambda r: r.update(timestamps=[{"when": "monday"}] + r["timestamps"][1:]), "timestamps[0] must be text"),
        (lambda r: r.update(timestamps=r["timestamps"][:-1] + [20260301]), "must be text or null"),
    ],
)
def test_empty_turns_and_timestamps_that_are_not_text_are_refused(change, message, tmp_path: Path) -> None:
    record = copy.deepcopy(RAW[0])
    change(record)
    file = tmp_path / "bad.json"
    file.write_text(json.dumps([record]), encoding="utf-8")
    with pytest.raises(CorpusError) as exc:
        load_corpus(file)
    assert f"STALE record 0 (uid {RAW[0]['uid']!r})" in str(exc.value) and message in str(exc.value)


def test_a_corpus_file_nested_too_deep_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "deep.json"
    file.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(CorpusError, match="nested too deep"):
        load_corpus(file)
