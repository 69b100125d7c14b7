"""A rich ``Live`` display on a quiet console keeps its renderable but lays nothing out.

``display="none"`` reconfigures rich's console as ``quiet``: everything it
renders is discarded (``Console._check_buffer``), but Inspect's task screen
(a ``Live``) still lays out its progress and results tables, one column
measure per metric, at every refresh and at the end of each eval: about a
fifth of an in-process scripted run's CPU, for output nobody sees. On a
quiet console the refresh now only records the renderable; on any other
console (a test that prints, a command's own display) rich runs as it ships.
Installed by ``conftest.py`` for the test workers and by the benchmark smoke
driver (``tests/test_benchmark_smoke.py``) for the scripts it runs.
"""

from __future__ import annotations

import functools


def install() -> None:
    """Patch ``rich.live.Live.refresh`` (once) as the module docstring says."""
    from rich.live import Live

    original = Live.refresh
    if getattr(original, "_quiet_unrendered", False):
        return

    @functools.wraps(original)
    def refresh(self: Live) -> None:
        if not self.console.quiet:
            return original(self)
        with self._lock:
            self._live_render.set_renderable(self.renderable)

    refresh._quiet_unrendered = True  # type: ignore[attr-defined]
    Live.refresh = refresh  # type: ignore[method-assign]
