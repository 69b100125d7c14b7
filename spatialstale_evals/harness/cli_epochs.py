"""``inspect eval --epochs 0``, refused by the suite's tasks.

Inspect's ``eval()`` refuses ``epochs < 1``, but its command line reads
``--epochs 0`` (and ``INSPECT_EVAL_EPOCHS=0``) as "not given", so the task's
own epochs ran (one, by default) without a word (inspect-ai 0.3.285). Nothing
of the option reaches the task, so the task reads it where Inspect's CLI
did: its command line (only when the process is Inspect's CLI) and the
environment variable. Called by every task as it is built, before any model
call.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

#: The environment variable Inspect's CLI reads ``--epochs`` from.
EPOCHS_ENV = "INSPECT_EVAL_EPOCHS"


def _inspect_cli(argv: Sequence[str]) -> bool:
    """Whether ``argv`` is Inspect's CLI (the ``inspect`` script or ``python -m inspect_ai``)."""
    first = Path(argv[0]) if argv else Path()
    module = first.name == "__main__.py" and first.parent.name == "inspect_ai"
    return first.name in ("inspect", "inspect.exe") or module


def _zero(text: str) -> bool:
    try:
        return int(text) == 0
    except ValueError:
        return False


def epochs_given_as_zero(argv: Sequence[str] | None = None) -> str | None:
    """How ``--epochs 0`` was given to Inspect's CLI (``--epochs 0``, ``INSPECT_EVAL_EPOCHS=0``), or None."""
    argv = sys.argv if argv is None else argv
    if _inspect_cli(argv):
        for i, arg in enumerate(argv):
            if arg == "--epochs" and i + 1 < len(argv) and _zero(argv[i + 1]):
                return f"--epochs {argv[i + 1]}"
            if arg.startswith("--epochs=") and _zero(arg.split("=", 1)[1]):
                return arg
    value = os.environ.get(EPOCHS_ENV)
    if value is not None and _zero(value):
        return f"{EPOCHS_ENV}={value}"
    return None


def check_cli_epochs(argv: Sequence[str] | None = None) -> None:
    """A ``ValueError`` when Inspect's CLI was given 0 epochs (module docstring)."""
    given = epochs_given_as_zero(argv)
    if given:
        raise ValueError(
            f"{given}: epochs must be a positive integer (Inspect's command line reads 0 as 'not given' and "
            "would run the task's default epochs instead)"
        )
