"""The package's own registry entries: what the regime and strategy registries
hold once the package is imported, before any test module adds an entry.

``conftest.py`` imports this module, and pytest imports ``conftest.py`` before
it imports (collects) any test module, so the snapshot below never holds an
entry that a test module registers at import (``@register_strategy`` on a
class, ``register_regime`` at module level). Tests that describe what the
package ships (the tasks' ``Literal`` vocabularies, the canonical data files)
compare against these; tests that exercise the registry as it is at run time
(``dataset.write``, which writes one file per registered regime) read
``REGIMES`` / ``STRATEGIES`` themselves.
"""

from __future__ import annotations

from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.world.regimes import REGIMES

#: The package's regimes, in registration order.
BUILTIN_REGIMES: tuple[str, ...] = tuple(REGIMES)
#: The package's strategies, in registration order.
BUILTIN_STRATEGIES: tuple[str, ...] = tuple(STRATEGIES)


def regime_files(regimes: tuple[str, ...] | list[str], gz: bool = False) -> list[str]:
    """The data file names ``dataset.write`` gives those regimes, sorted (all compressed with ``gz``)."""
    return sorted(f"{r}.jsonl" + (".gz" if gz else "") for r in regimes)
