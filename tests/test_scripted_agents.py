"""The scripted reference agents as an Inspect provider: bounds and
determinism. (An interrupted run resumed: ``inspect eval-retry`` after the
model server is killed, ``test_faults.py``; the matrix run again after it is
killed, ``test_analysis.py``, which also compares the resumed scores with an
uninterrupted run's.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from spatialstale_evals.detect import detect
from spatialstale_evals.navigate import navigate


def _values(log) -> dict[tuple[str, int], dict]:
    return {(s.id, s.epoch): next(iter(s.scores.values())).metadata["counts"] for s in log.samples}


# The observer's navigation on every L1 and L2 instance, under every strategy:
# test_navigate.py::test_observer_succeeds_on_every_instance (one shared run).

#: Instances per detect run: enough windows (each of 64 entries) for the
#: observer's reading and the coin flips' rate to be tested on hundreds of entries.
DETECT_LIMIT = 15


@pytest.mark.parametrize("modality", ["text", "image"])
def test_observer_audits_perfectly(tmp_path: Path, modality: str) -> None:
    (log,) = inspect_eval(
        detect(regime="L2", modality=modality),
        model="spatialstale/observer",
        log_dir=str(tmp_path),
        display="none",
        limit=DETECT_LIMIT,
    )
    assert len(log.samples) == DETECT_LIMIT
    assert log.results.scores[0].metrics["f1"].value == 1.0


def test_random_is_seeded(tmp_path: Path) -> None:
    """Another seed, other draws. (The same seed twice, the same prompts and
    scores: test_determinism.py::test_scripted_runs_repeat_prompts_and_scores_exactly.)"""

    def run(seed: int) -> tuple[dict, dict]:
        nav, det = inspect_eval(
            [navigate(regime="L1", strategy="no_filter", epochs=2), detect(regime="L3")],
            model="spatialstale/random",
            model_args={"seed": seed},
            log_dir=str(tmp_path),
            display="none",
            limit=5,
        )
        return _values(nav), _values(det)

    first, other = run(1), run(2)
    assert first[0] != other[0] and first[1] != other[1]
    nav = first[0]
    # Epochs of one instance draw differently (the draw depends on the epoch).
    assert any(nav[(sid, 1)]["steps"] != nav[(sid, 2)]["steps"] for sid, _ in nav)
    # Coin-flip audits flag roughly half the entries.
    det = first[1]
    flags = sum(v["tp"] + v["fp"] for v in det.values())
    entries = sum(v["entries"] for v in det.values())
    assert entries >= 1000 and 0.4 < flags / entries < 0.6


def test_unknown_policy_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="unknown scripted policy"):
        inspect_eval(detect(), model="spatialstale/oracle", log_dir=str(tmp_path), display="none", limit=1)
