"""Task parameters: the checks every task runs before any model is called, and
the vocabularies and defaults read off the task signatures.

The signatures are the one source of truth: a parameter that is a choice is
typed with a ``Literal`` (next to the registry it names), and the CLI's
choices, the report's defaults and the run matrix read them from there
(``choices``, ``defaults``) instead of copying them.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, get_args, get_origin

#: How a task that asks several probes about one item asks them (``probe``,
#: ``stale``): each in a fresh conversation, as STALE upstream, or all in one.
Conversation = Literal["independent", "shared"]
CONVERSATIONS: tuple[Conversation, ...] = get_args(Conversation)


class NotApplicable(ValueError):
    """A combination of valid parameters that does not apply (``filter_mode``
    for a strategy that judges nothing): an error for a user, a combination
    the run matrix leaves out when it crosses factors."""


def check_choice(name: str, value: Any, choices: Sequence[Any] | Mapping[str, Any]) -> None:
    if not isinstance(value, str | int | float | type(None)) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")


def check_subset(name: str, value: Any, choices: Sequence[str]) -> tuple[str, ...]:
    """``all``, a comma-separated string or a list of ``choices``, checked, in
    the order of ``choices`` (``-T dimensions=premise,explicit``)."""
    if value == "all":
        return tuple(choices)
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names:
        raise ValueError(f"{name} must be 'all' or a list of {', '.join(choices)}; got {value!r}")
    picked = [str(n).strip() for n in names]
    for one in picked:
        check_choice(name, one, choices)
    return tuple(c for c in choices if c in picked)


def check_positive_int(name: str, value: Any, allow_zero: bool = False, most: int | None = None) -> int:
    """``value`` when it is a positive (or, ``allow_zero``, non-negative) integer of at most ``most``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        raise ValueError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} integer; got {value!r}")
    if most is not None and value > most:
        raise ValueError(f"{name} must be at most {most:,}; got {value:,}")
    return value


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false; got {value!r}")
    return value


def check_unit_interval(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:  # NaN too
        raise ValueError(f"{name} must be a number in [0, 1]; got {value!r}")
    return float(value)


def parameters(task: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """The task's named parameters (its ``**unknown`` catch-all left out)."""
    params = inspect.signature(task).parameters
    return {n: p for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}


def reject_unknown(task: Callable[..., Any], unknown: Mapping[str, Any]) -> None:
    """A misspelled ``-T`` argument is an error, not a warning: without it a
    typo (``-T view_radus=2``) silently runs the default configuration.
    Inspect hands every argument the signature does not name to the task's
    ``**unknown``, which calls this."""
    if unknown:
        valid = ", ".join(parameters(task))
        raise ValueError(
            f"{getattr(task, '__name__', 'task')}: unknown task parameter(s) {', '.join(sorted(unknown))}; "
            f"the parameters are: {valid}"
        )


def type_hints(task: Callable[..., Any]) -> dict[str, Any]:
    """Resolved annotations of the task function (under Inspect's @task wrapper)."""
    return typing.get_type_hints(inspect.unwrap(task))


def choices(task: Callable[..., Any], name: str) -> tuple[Any, ...]:
    """The values a ``Literal``-typed parameter admits, in their declared order."""
    hint = type_hints(task)[name]
    if get_origin(hint) is not typing.Literal:
        raise TypeError(f"{getattr(task, '__name__', task)}() parameter {name!r} is not a Literal: {hint!r}")
    return get_args(hint)


def defaults(task: Callable[..., Any]) -> dict[str, Any]:
    """Every parameter's default value."""
    return {n: p.default for n, p in parameters(task).items() if p.default is not inspect.Parameter.empty}


def pick(values: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The ``names`` that ``values`` has, in the order of ``names`` (a task's
    factor arguments out of its ``locals()``, with no hand-written copy)."""
    return {name: values[name] for name in names if name in values}


def changed(task: Callable[..., Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The ``values`` that differ from the task's defaults (what a sample's
    input names of the factors, so a default run's inputs name none)."""
    fixed = defaults(task)
    return {k: v for k, v in values.items() if k not in fixed or v != fixed[k]}
