"""The suite leaves the user's folders alone: a run that names no log folder
writes under a temporary one, never ``./logs`` (what ``inspect view`` shows the
user). The whole run's check: ``conftest.pytest_sessionfinish``."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import USER_LOGS
from inspect_ai import eval as inspect_eval

from spatialstale_evals.detect import detect


def test_a_run_without_a_log_folder_writes_outside_the_users_logs() -> None:
    before = sorted(USER_LOGS.rglob("*")) if USER_LOGS.is_dir() else []
    (log,) = inspect_eval(detect(), model="spatialstale/observer", limit=1, display="none")
    where = Path(log.location).resolve()
    assert not where.is_relative_to(USER_LOGS), where
    assert where.is_relative_to(Path(os.environ["INSPECT_LOG_DIR"]).resolve())
    assert (sorted(USER_LOGS.rglob("*")) if USER_LOGS.is_dir() else []) == before
