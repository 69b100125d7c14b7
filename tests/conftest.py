"""What every test module shares.

- The package's own registry entries, snapshotted before pytest imports any
  test module (``_builtins``).
- A guard that every test leaves the registries as it found them (a test
  that registers an entry removes it again: a fixture, or try/finally).
- One local-model server per test session (``local_server``, session scoped):
  every ``local_model`` test that needs a running server uses this one, so a
  session starts it once. The fault test kills it and restarts it on the same
  port (what it tests), so the fixture hands out the port and reads the
  process it stands for from the server's state file each time.
- Hypothesis derandomized: the property tests draw the same examples on every
  run, so a run's verdict is reproducible (``--hypothesis-seed`` or
  ``HYPOTHESIS_PROFILE=explore`` draws afresh, to search for new failures).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import _builtins  # noqa: F401 - the snapshot must be taken before any test module is imported
import pytest
from _local_server import LocalServer, require_local_extra
from hypothesis import settings

from spatialstale_evals import local_model
from spatialstale_evals.harness.family import FAMILIES, families
from spatialstale_evals.local_model import server as lm_server
from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.world.regimes import REGIMES

families()  # the suite's own task families, registered before any test can add one

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _registries_restored() -> Iterator[None]:
    """An entry a test registers and leaves behind would change what every later test sees."""
    before = (tuple(REGIMES), tuple(STRATEGIES), tuple(FAMILIES))
    yield
    after = (tuple(REGIMES), tuple(STRATEGIES), tuple(FAMILIES))
    assert after == before, "the test left a regime, strategy or task family registered"


@pytest.fixture(scope="session")
def local_server() -> Iterator[LocalServer]:
    require_local_extra()
    with local_model.running_server() as state:
        server = LocalServer(state.port)
        yield server
        last = server.state
    assert not local_model.pid_alive(last.pid), "the session's server outlived the session"
    assert lm_server.read_state(last.port) is None, "its state file outlived it"
