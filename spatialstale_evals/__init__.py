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
instead, as an eager ``from .detect import detect`` would. So, as before,
``import spatialstale_evals.detect as m`` binds the function too; the module
is ``importlib.import_module("spatialstale_evals.detect")``.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy exports below resolve to, for readers and type checkers
    from spatialstale_evals.detect import detect
    from spatialstale_evals.lifelong import lifelong
    from spatialstale_evals.navigate import navigate
    from spatialstale_evals.probe import probe
    from spatialstale_evals.stale import stale

__all__ = ["detect", "navigate", "probe", "stale", "lifelong"]

#: The @task functions, each defined in the module of the same name (``eval.yaml``
#: lists the same; a conformance test checks it).
TASKS: tuple[str, ...] = tuple(__all__)


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
