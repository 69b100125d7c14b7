"""The session's local-model server as the tests see it (the ``local_server``
fixture of ``conftest.py``): a fixed port, and whichever process serves it now."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from spatialstale_evals import local_model
from spatialstale_evals.local_model import server as lm_server


@dataclass(frozen=True)
class LocalServer:
    """The session's local-model server, on a fixed port. ``pid`` and ``log``
    are those of the process serving it now (a restart replaces it)."""

    port: int

    @property
    def base_url(self) -> str:
        return local_model.base_url(self.port)

    @property
    def state(self) -> local_model.ServerState:
        state = lm_server.read_state(self.port)
        assert state is not None, f"no local-model server is recorded on port {self.port}"
        return state

    @property
    def pid(self) -> int:
        return self.state.pid

    @property
    def log(self) -> Path:
        return Path(self.state.log)

    def restart(self) -> None:
        """Start it again on its port (after it was killed), waiting until it answers."""
        lm_server.start(self.port)


def require_local_extra() -> None:
    """The end-to-end tests fail (not skip) without the [local] extra."""
    try:
        local_model.check_ready()
    except local_model.LocalModelError as exc:
        pytest.fail(f"the local-model tests need the [local] extra: {exc}", pytrace=False)
