"""``spatialstale quickstart``'s output, with the scripted ``observer`` agent
(no server, seconds): a line per task and per finished sample, the time
estimate the local model gets (its tokens at the server's speed), no line of
spaces (Inspect's display is off), the results table. Against the real local
model: ``test_local_model.py`` (marker ``local_model``)."""

from __future__ import annotations

import argparse
import re

from spatialstale_evals import local_model, quickstart


def _run(tmp_path, capsys, **changes):
    args = argparse.Namespace(model="spatialstale/observer", limit=1, max_steps=3, max_tokens=512,
                              log_dir=str(tmp_path / "logs"), port=None)  # fmt: skip
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


def test_estimates_are_the_tasks_tokens_at_the_servers_speed(tmp_path, capsys):
    tasks = quickstart.quickstart_tasks(limit=1, max_steps=3)
    speed = local_model.Speed(prompt=200.0, generation=20.0)
    detect = quickstart.QUICK_TOKENS["detect"]
    expected = detect[0] / 200.0 + detect[1] / 20.0  # one seed: its prompt and reply tokens at that speed
    assert tasks[0].estimate(speed, 1, 3) == expected
    omcd, step = quickstart.QUICK_TOKENS["omcd"], quickstart.QUICK_TOKENS["step"]
    by_hand = 2 * ((omcd[0] + 5 * step[0]) / 200.0 + (omcd[1] + 5 * step[1]) / 20.0)
    assert tasks[1].estimate(speed, 2, 5) == by_hand
    quickstart.run_evals("spatialstale/observer", tmp_path, 1, 3, tasks=tasks[:2], speed=speed)
    lines = capsys.readouterr().out.splitlines()
    first = next(line for line in lines if line.startswith("[1/2] "))
    assert first.endswith(f"; estimate {expected:.0f} s")
    # the second is scaled by how the first did against its estimate: the scripted agent is far faster
    second = next(line for line in lines if line.startswith("[2/2] "))
    assert float(re.search(r"estimate (\d+) s$", second).group(1)) < tasks[1].estimate(speed, 1, 3)
