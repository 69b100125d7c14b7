"""SpatialSTALE evals: does an agent notice that its spatial memory has gone stale?

    from inspect_ai import eval
    from spatialstale_evals import detect, navigate
    eval(detect(regime="L2"), model="openai/gpt-4o")

The tasks are exported here as inspect_evals packages do, but lazily: the
first access to ``detect`` or ``navigate`` imports its task module, so that
``import spatialstale_evals.world`` (the environment alone) loads nothing of
Inspect.

One wrinkle: the task modules are named after their tasks (the documented
command is ``inspect eval spatialstale_evals/detect.py``), and Python's import
system sets the package attribute ``detect`` to the *module* whenever
``spatialstale_evals.detect`` is imported (Inspect's registry does so). The
package's module class below keeps the *task function* under that name
instead, as an eager ``from .detect import detect`` would. So, as with that
import, ``import spatialstale_evals.detect as m`` binds the function too; the module
is ``importlib.import_module("spatialstale_evals.detect")``.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy exports below resolve to, for readers and type checkers
    from spatialstale_evals.detect import detect as detect
    from spatialstale_evals.lifelong import lifelong as lifelong
    from spatialstale_evals.navigate import navigate as navigate
    from spatialstale_evals.probe import probe as probe
    from spatialstale_evals.stale import stale as stale

#: The suite's task families: each ``@task`` (defined in the module of the same
#: name) and the package that owns its solver, scorer, prompts, metrics and
#: registry entry (``<package>/family.py``, ``harness/family.py``). ``eval.yaml``
#: lists the same tasks; a conformance test checks it.
FAMILY_PACKAGES: dict[str, str] = {
    "detect": "detection",
    "navigate": "navigation",
    "probe": "probing",
    "stale": "stale_corpus",
    "lifelong": "lifetime",
}
#: The @task functions' names, in order.
TASKS: tuple[str, ...] = tuple(FAMILY_PACKAGES)
__all__ = list(TASKS)


def task_functions() -> dict[str, Callable[..., Any]]:
    """The suite's @task functions by name (imports the task modules)."""
    return {name: getattr(sys.modules[__name__], name) for name in TASKS}


def __dir__() -> list[str]:
    return sorted({*globals(), *TASKS})


def __getattr__(name: str) -> Any:
    if name in TASKS:
        return getattr(importlib.import_module(f"{__name__}.{name}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in TASKS and isinstance(value, types.ModuleType):
            value = getattr(value, name)  # the submodule has finished executing: its task is defined
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
