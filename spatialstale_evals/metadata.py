"""The eval's metadata (``eval.yaml``, in the inspect_evals format), read once.

The task version lives there and only there: the tasks read it from here, as
inspect_evals' tasks read theirs through ``load_eval_metadata``.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

EVAL_YAML = "eval.yaml"
#: The namespace of the suite's task names: the package, as Inspect's registry names them.
NAMESPACE = __name__.split(".")[0]


@lru_cache(maxsize=1)
def eval_metadata() -> dict[str, Any]:
    """The parsed ``spatialstale_evals/eval.yaml``."""
    data = yaml.safe_load((files("spatialstale_evals") / EVAL_YAML).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "version" not in data:
        raise ValueError(f"spatialstale_evals/{EVAL_YAML} must be a mapping with a version")
    return data


def task_version() -> str:
    """The version of every task of the suite (``1-A``: comparability 1, revision A)."""
    return str(eval_metadata()["version"])


def comparability(version: str) -> str:
    """The part of a task version that says whether results compare (``3`` of
    ``3-B``): the number changes when results stop being comparable, the
    letter when only the interface changes (a new task, a new parameter)."""
    return str(version).split("-", 1)[0]


def task_name(family: str) -> str:
    """The name every run of task ``family`` logs (``spatialstale_evals/navigate``).

    Inspect names a task after its registry entry, which has the package's
    namespace when the task comes from the installed package (``eval(navigate())``,
    ``inspect eval spatialstale_evals/navigate``, the quickstart, ``spatialstale
    matrix``) and none when it is loaded from its file (``inspect eval
    spatialstale_evals/navigate.py``, the README's commands): one task under two
    names, which ``inspect view`` lists apart. The tasks pass this name to
    ``Task`` so every run logs the registry's. Older logs may carry either;
    readers take the part after the last ``/`` (``analysis.logs.suite_family``).
    """
    return f"{NAMESPACE}/{family}"
