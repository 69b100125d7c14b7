"""``spatialstale quickstart``'s output, with the scripted ``observer`` agent
(no server, seconds): a line per task and per finished sample, the time
estimate the local model gets (its tokens at the server's speed), no line of
spaces (Inspect's display is off), the results table. Against the real local
model: ``test_local_model.py`` (marker ``local_model``)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from spatialstale_evals import local_model, quickstart, quickstart_cost


def _run(tmp_path, capsys, **changes):
    args = argparse.Namespace(model="spatialstale/observer", limit=1, max_steps=3, max_tokens=512,
                              log_dir=str(tmp_path / "logs"), port=None, model_base_url=None)  # fmt: skip
    vars(args).update(changes)
    code = quickstart.main(args)
    return code, capsys.readouterr().out


def test_progress_lines_per_task_and_sample_then_the_table(tmp_path, capsys):
    code, out = _run(tmp_path, capsys)
    assert code == 0, out
    lines = out.splitlines()
    assert not [line for line in lines if line and not line.strip()], "a line of spaces"
    labels = ("detect L1 text", "navigate omcd L2 text", "navigate no_filter L2 text")
    starts = [k for k, line in enumerate(lines) if re.match(r"\[\d/3\] \S", line)]
    assert [lines[k].split(":")[0] for k in starts] == [f"[{k}/3] {label}" for k, label in enumerate(labels, 1)]
    for k, start in enumerate(starts, 1):
        assert "estimate" not in lines[start]  # a hosted model's speed is not known
        assert lines[start + 1].startswith(f"[{k}/3]   sample 1/1 done in ")
        assert lines[start + 2].startswith(f"[{k}/3]   {labels[k - 1]}: success in ")
    assert "1 seed: is each of 64 memory notes stale?" in lines[starts[0]]
    assert "1 episode of at most 3 steps" in lines[starts[1]]
    assert re.search(r"sample 1/1 done in \d+ s: 7 audit calls, 64 of 64 notes got a usable verdict", out)
    assert re.search(
        r"sample 1/1 done in \d+ s: (success|death|timeout) after \d steps \(\d move calls, 0 fallbacks\)", out
    )
    assert "detect L1 text: success, 1/1 samples scored, model spatialstale/observer" in out
    assert out.rstrip().endswith(f"open the logs: inspect view --log-dir {tmp_path / 'logs'}")


def calibration_file():
    """The calibration as the file states it, read here without the code under test."""
    return json.loads((Path(quickstart.__file__).parent / "quickstart_calibration.json").read_text(encoding="utf-8"))


def test_estimates_are_the_tasks_tokens_at_the_servers_speed_times_its_factor(tmp_path, capsys):
    tasks = quickstart.quickstart_tasks(limit=1, max_steps=3)
    speed = local_model.Speed(prompt=400.0, generation=40.0)  # estimates under 90 s: printed in seconds
    cal = calibration_file()
    detect, factor = cal["tokens"]["detect"], cal["factors"]["detect"]
    expected = factor * (detect[0] / 400.0 + detect[1] / 40.0)  # one seed: its tokens at that speed, calibrated
    assert tasks[0].estimate(speed, 1, 3) == pytest.approx(expected)
    omcd, step = cal["tokens"]["omcd"], cal["tokens"]["step"]
    by_hand = 2 * cal["factors"]["omcd"] * ((omcd[0] + 5 * step[0]) / 400.0 + (omcd[1] + 5 * step[1]) / 40.0)
    assert tasks[1].estimate(speed, 2, 5) == pytest.approx(by_hand)
    quickstart.run_evals("spatialstale/observer", tmp_path, 1, 3, tasks=tasks[:2], speed=speed)
    lines = capsys.readouterr().out.splitlines()
    first = next(line for line in lines if line.startswith("[1/2] "))
    assert first.endswith(f"; estimate {round(expected)} s")
    # the second is scaled by how the first did against its estimate: the scripted agent is far faster
    second = next(line for line in lines if line.startswith("[2/2] "))
    assert float(re.search(r"estimate (\d+) s$", second).group(1)) < tasks[1].estimate(speed, 1, 3)


def test_the_calibration_reproduces_its_measured_times_within_20_percent():
    """At the speed the file says the server ran, each task's estimate for the
    run it was measured on is that run's measured seconds per sample (to 20 %,
    the tolerance the estimates promise; the factors make it exact up to rounding)."""
    cal = calibration_file()
    run = cal["measured"]
    speed = local_model.Speed(**run["speed"])
    tasks = {t.tokens: t for t in quickstart.quickstart_tasks(run["limit"], run["max_steps"])}
    assert set(tasks) == set(run["seconds_per_sample"]) == set(cal["factors"])
    for key, seconds in run["seconds_per_sample"].items():
        estimate = tasks[key].estimate(speed, 1, run["max_steps"])
        assert abs(estimate - seconds) <= 0.2 * seconds, (key, estimate, seconds)


def test_written_calibration_is_read_back(tmp_path):
    path = tmp_path / "calibration.json"
    tokens = {"detect": (1, 2), "omcd": (3, 4), "no_filter": (5, 6), "step": (7, 8)}
    factors = {"detect": 1.5, "omcd": 1.25, "no_filter": 2.0}
    quickstart_cost.write_calibration(tokens, factors, {"date": "2026-12-02"}, path)
    read = quickstart_cost.load_calibration(path)
    assert (read["tokens"], read["factors"], read["measured"]) == (tokens, factors, {"date": "2026-12-02"})
    path.write_text(json.dumps({"about": "", "tokens": tokens, "factors": {"detect": 1.0}}), encoding="utf-8")
    with pytest.raises(ValueError, match="omcd"):
        quickstart_cost.load_calibration(path)


def test_model_base_url_needs_a_model(tmp_path, capsys):
    args = argparse.Namespace(model=None, model_base_url="http://127.0.0.1:1/v1", limit=1, max_steps=3,
                              max_tokens=512, log_dir=str(tmp_path / "logs"), port=None)  # fmt: skip
    assert quickstart.main(args) == 2  # before starting any server
    assert "--model-base-url needs --model" in capsys.readouterr().err


def test_the_first_command_can_succeed_with_the_perfect_agent(tmp_path, capsys):
    """``spatialstale quickstart --model spatialstale/observer`` as typed (the
    default step budget): the agent that sees the lake reaches every goal and
    judges every note, so navigate's success and detect's F1 are 1.0."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from spatialstale_evals import cli

    log_dir = tmp_path / "logs"
    assert cli.main(["quickstart", "--model", "spatialstale/observer", "--log-dir", str(log_dir)]) == 0
    out = capsys.readouterr().out
    budget = int(re.search(r"1 episode of at most (\d+) steps", out).group(1))
    assert budget >= 14  # every 8x8 lake runs from (0,0) to (7,7): 7 + 7 steps at least
    metrics = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        name = log.eval.task.split("/")[-1] + str((log.eval.task_args or {}).get("strategy", ""))
        metrics[name] = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["detect"]["f1"] == 1.0
    assert metrics["navigateomcd"]["success_rate"] == metrics["navigateno_filter"]["success_rate"] == 1.0
    assert quickstart.NO_OUTPUT not in out


def test_a_model_without_usable_output_is_named_as_such(tmp_path, capsys):
    """A model whose every reply is prose: one line under each task says the
    model produced nothing usable, with the count, so its zeros read as its own."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def prose():
        while True:
            out = ModelOutput.from_content("mockllm/model", "I am not sure what to do here.")
            out.usage = ModelUsage(input_tokens=10, output_tokens=8, total_tokens=18)  # no tokenizer download
            yield out

    model = get_model("mockllm/model", custom_outputs=prose())
    logs = quickstart.run_evals(model, tmp_path, 1, 3)
    table = quickstart.results_table(logs)
    assert table.count(quickstart.NO_OUTPUT) == 3, table
    assert f"{quickstart.NO_OUTPUT} for 64 of 64 notes" in table
    assert len(re.findall(rf"{quickstart.NO_OUTPUT} for (\d+) of \1 steps", table)) == 2, table


def test_the_docs_describe_the_calibration_the_file_holds():
    """docs/models.md's sentence on what the calibration was measured on, built
    here from the file's ``measured`` record: a rewritten file fails it until the docs follow."""
    run = calibration_file()["measured"]
    seconds = run["seconds_per_sample"]
    sentence = (
        f"measured on {run['date']} on a 2-core {run['cpu'].split(',')[0]}, the server at "
        f"{run['speed']['prompt']:g} and {run['speed']['generation']:g} tokens/s, "
        f"{', '.join(f'{seconds[k]:.1f}' for k in ('detect', 'omcd'))} and {seconds['no_filter']:.1f} s per sample "
        f"(detect, omcd, no_filter) at --limit {run['limit']} and {run['max_steps']} steps."
    )
    docs = (Path(quickstart.__file__).parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    assert sentence in " ".join(docs.split()), sentence
