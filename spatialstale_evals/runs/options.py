"""Inspect's ``eval-set`` options on the ``spatialstale matrix`` command line,
passed through to ``inspect_ai.eval_set`` rather than re-implemented.

An option is any keyword of ``eval_set`` or of ``GenerateConfigArgs``, spelled
as Inspect's CLI spells it (``--max-connections 20``). Its value is read by
the keyword's own type: text stays text (``--system-message "Answer: JSON
only"``), a ``Literal`` must be one of its values (``--display plain``), a
list of strings splits on commas (``--tags a,b``), a flag of a boolean takes
``--name`` / ``--no-name`` (or ``--name false``), and anything else is YAML
(numbers, mappings) as Inspect reads ``-M``. What the matrix decides itself
(tasks, models, log folder, seeds, epochs, model args and roles) and what
would break the paper's protocol or its shared seeds (solver, task args,
sample ids and order) are refused with the matrix option to use instead.
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Literal, get_args, get_origin

import yaml
from inspect_ai import eval_set
from inspect_ai.model import GenerateConfigArgs

#: eval_set keywords the matrix sets or refuses, and what to use instead.
NOT_PASSED: dict[str, str] = {
    "tasks": "the matrix builds its tasks",
    "log_dir": "use --log-dir",
    "model": "use --model",
    "limit": "use --seeds",
    "epochs": "use --epochs",
    "model_args": "use -M KEY=VALUE",
    "model_roles": "use --model-role ROLE=MODEL",
    "log_dir_allow_dirty": "the matrix always allows other logs in its folder",
    "task_args": "use --factor NAME=VALUES (or the matrix's own options)",
    "solver": "the matrix runs the tasks' own solvers (the paper's protocol)",
    "sample_id": "use --seeds (every task runs the same first N instances)",
    "sample_shuffle": "the matrix keeps the instances' order (paired seeds)",
    "kwargs": "not an option",
    "response_schema": "use --factor structured_output=true (a schema per call that expects JSON, none on moves)",
}
HINTS: dict[str, Any] = {
    **typing.get_type_hints(GenerateConfigArgs),
    **{k: v for k, v in typing.get_type_hints(eval_set).items() if k != "return"},
}
PASSTHROUGH = {k for k in inspect.signature(eval_set).parameters if k not in NOT_PASSED} | set(
    typing.get_type_hints(GenerateConfigArgs)
)


def _members(hint: Any) -> tuple[Any, ...]:
    """The types a hint admits (a union's members, None left out)."""
    if get_origin(hint) in (typing.Union, types.UnionType):
        return tuple(a for a in get_args(hint) if a is not type(None))
    return (hint,)


def takes_flag(name: str) -> bool:
    return bool in _members(HINTS.get(name))


def convert(name: str, text: str) -> Any:
    """``text`` as a value of the keyword ``name``'s type."""
    members = _members(HINTS.get(name))
    literals = [v for m in members if get_origin(m) is Literal for v in get_args(m)]
    if literals:
        if text not in literals:
            raise ValueError(f"--{name.replace('_', '-')} must be one of {', '.join(map(str, literals))}; got {text!r}")
        return text
    if members == (str,):
        return text
    if list[str] in members:
        return [part.strip() for part in text.split(",") if part.strip()]
    value = yaml.safe_load(text) if text.strip() else text
    if members == (bool,) and not isinstance(value, bool):
        raise ValueError(f"--{name.replace('_', '-')} is a flag: true or false; got {text!r}")
    if not _compatible(value, members):
        expected = " or ".join(getattr(m, "__name__", str(m)) for m in members)
        raise ValueError(f"--{name.replace('_', '-')} takes {expected}; got {text!r}")
    return value


#: Python types a YAML value may have for each simple annotation.
_ACCEPTS: dict[Any, tuple[type, ...]] = {int: (int,), float: (int, float), bool: (bool,), str: (str,)}


def _compatible(value: Any, members: tuple[Any, ...]) -> bool:
    """Whether ``value`` fits one of ``members``; unknown kinds (mappings,
    lists, Inspect's own classes) are left for ``eval_set`` to check."""
    if not all(m in _ACCEPTS for m in members):
        return True
    if isinstance(value, bool) and bool not in members:
        return False
    return isinstance(value, tuple(t for m in members for t in _ACCEPTS[m]))


def _key(token: str) -> tuple[str, str, str | None]:
    """(spelling, keyword, inline value or None) of ``--name[=value]``."""
    name, sep, inline = token[2:].partition("=")
    return name, name.replace("-", "_"), inline if sep else None


def _check(name: str, key: str) -> None:
    if key in NOT_PASSED:
        raise ValueError(f"--{name}: {NOT_PASSED[key]}")
    if key not in PASSTHROUGH:
        raise ValueError(f"--{name} is not an option of inspect_ai.eval_set (nor one of the matrix's own)")


def eval_set_options(tokens: list[str]) -> dict[str, Any]:
    """``--max-connections 20 --no-fail-on-error --display=plain`` as
    ``{"max_connections": 20, "fail_on_error": False, "display": "plain"}``."""
    options: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("--"):
            hint = "; task arguments are --factor NAME=VALUES" if token == "-T" else ""
            raise ValueError(f"unexpected argument {token!r} (Inspect options are passed as --name value{hint})")
        name, key, inline = _key(token)
        if inline is None and key.startswith("no_") and takes_flag(key[3:]):
            options[key[3:]], i = False, i + 1
            continue
        _check(name, key)
        if inline is not None:
            options[key], i = convert(key, inline), i + 1
        elif i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
            options[key], i = convert(key, tokens[i + 1]), i + 2
        elif takes_flag(key):
            options[key], i = True, i + 1
        else:
            raise ValueError(f"--{name} needs a value")
    return options
