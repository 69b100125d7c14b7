"""The README's generated blocks, in the format inspect_evals' README generator
writes: ``Usage``, ``Options`` and ``Parameters``, each between its
``<!-- NAME: Automatically Generated -->`` and ``<!-- /NAME: Automatically
Generated -->`` markers. Everything in them is read from the code: the task
list from the package's registry (``spatialstale_evals.task_functions()``),
the parameters from the @task signatures and their Google-style ``Args:``
docstrings, the extras from ``pyproject.toml``. ``tests/test_conformance.py``
checks that the README holds exactly these blocks; rewrite them with::

    python tests/test_conformance.py
"""

from __future__ import annotations

import inspect
import re
import tomllib
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import spatialstale_evals
from spatialstale_evals.stale_corpus.scoring import GRADER_ROLE

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PACKAGE = "spatialstale_evals"
TASKS: tuple[Callable[..., Any], ...] = tuple(spatialstale_evals.task_functions().values())

#: The model the generated commands name (the one the rest of the docs use).
MODEL = "openai/gpt-4o"
#: What a task needs on its command line besides ``--model``: task arguments
#: (the stale task reads a corpus from outside the package: our fixture, a path
#: from the checkout's root) and the model roles it requires, with an example model.
RUN_ARGUMENTS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "stale": ({"path": "tests/fixtures/stale_mini.json"}, {GRADER_ROLE: "openai/gpt-4o-mini"}),
}
#: The generic options the Options block shows, one per task in turn (inspect_evals' three).
OPTION_EXAMPLES = ("--limit 10", "--max-connections 10", "--temperature 0.5")
#: The block names, in the order they stand in the README.
BLOCKS = ("Usage", "Options", "Parameters")


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}: Automatically Generated -->", f"<!-- /{name}: Automatically Generated -->"


# -- Parameters ----------------------------------------------------------------


def docstring_args(fn: Callable[..., Any]) -> dict[str, str]:
    """The Google-style ``Args:`` section of ``fn``'s docstring: name -> description,
    continuation lines joined with single spaces."""
    doc = inspect.getdoc(fn) or ""
    lines = doc.splitlines()
    if "Args:" not in lines:
        raise ValueError(f"{fn.__name__}() has no 'Args:' section in its docstring")
    args: dict[str, list[str]] = {}
    arg_indent: int | None = None
    current: str | None = None
    for line in lines[lines.index("Args:") + 1 :]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:  # the next section (Returns:, Raises:, ...)
            break
        if arg_indent is None:
            arg_indent = indent
        if indent == arg_indent:
            match = re.fullmatch(r"(\*{0,2}\w+)(?: \([^)]*\))?:\s*(.*)", line.strip())
            if not match:
                raise ValueError(f"{fn.__name__}(): cannot read the Args: line {line.strip()!r}")
            current = match.group(1).lstrip("*")
            args[current] = [match.group(2)] if match.group(2) else []
        elif current is not None:
            args[current].append(line.strip())
    return {name: " ".join(parts) for name, parts in args.items()}


def markdown(text: str) -> str:
    """reStructuredText literals (``x``) as Markdown code spans (`x`)."""
    return re.sub(r"``(.+?)``", r"`\1`", text)


def annotation_text(fn: Callable[..., Any], name: str, param: inspect.Parameter) -> str:
    """The parameter's type as inspect_evals shows it: ``Literal['L1', 'L2', 'L3']``
    for an alias such as ``RegimeName`` (resolved), else the annotation as written."""
    annotation = param.annotation
    if annotation is inspect.Parameter.empty:
        raise ValueError(f"{fn.__name__}(): parameter {name!r} has no type annotation")
    try:
        hint = typing.get_type_hints(inspect.unwrap(fn))[name]
    except NameError:  # a forward reference the function's module cannot resolve
        hint = None
    if typing.get_origin(hint) is typing.Literal:
        return inspect.formatannotation(hint)
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def parameter_lines(fn: Callable[..., Any]) -> list[str]:
    """One inspect_evals bullet per parameter of ``fn``, in signature order (a
    ``**kwargs`` catch-all, which only rejects misspelled names, is not one)."""
    described = docstring_args(fn)
    params = {n: p for n, p in inspect.signature(fn).parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    undocumented = [name for name in params if name not in described]
    unknown = [name for name in described if name not in params]
    if undocumented or unknown:
        raise ValueError(
            f"{fn.__name__}(): the docstring's Args: section must describe exactly the parameters; "
            f"undocumented: {undocumented}, not parameters: {unknown}"
        )
    lines = []
    for name, param in params.items():
        type_text = annotation_text(fn, name, param)
        default = "" if param.default is inspect.Parameter.empty else f" (default: `{param.default!r}`)"
        lines.append(f"- `{name}` (`{type_text}`): {markdown(described[name])}{default}")
    return lines


def parameters_block(tasks: tuple[Callable[..., Any], ...] = TASKS) -> str:
    """The README's Parameters block, markers included, in inspect_evals' format."""
    begin, end = markers("Parameters")
    parts = [begin, "", "## Parameters", ""]
    for fn in tasks:
        parts += [f"### `{fn.__name__}`", "", *parameter_lines(fn), ""]
    parts.append(end)
    return "\n".join(parts)


# -- Usage and Options ----------------------------------------------------------


def task_command(name: str, *options: str, model: str | None = MODEL) -> str:
    """``inspect eval spatialstale_evals/<name>.py`` with what the task needs to run."""
    args, roles = RUN_ARGUMENTS.get(name, ({}, {}))
    words = [f"inspect eval {PACKAGE}/{name}.py", *(f"-T {k}={v}" for k, v in args.items()), *options]
    if model:
        words.append(f"--model {model}")
    words += [f"--model-role {role}={m}" for role, m in roles.items()]
    return " ".join(words)


def extras(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The package's optional dependency groups, as ``pyproject.toml`` names them."""
    return list(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"])


def usage_block(tasks: tuple[Callable[..., Any], ...] = TASKS) -> str:
    """How to install and run every task, in inspect_evals' Usage shape (``inspect
    eval`` per task, ``inspect eval-set``, Python), for this checkout."""
    begin, end = markers("Usage")
    names = [fn.__name__ for fn in tasks]
    plain = [n for n in names if n not in RUN_ARGUMENTS]  # the tasks that need nothing but a model
    names_of_extras = extras()
    extra_list = ", ".join(f"`{e}`" for e in names_of_extras[:-1]) + f" and `{names_of_extras[-1]}`"
    return "\n".join(
        [
            begin,
            "",
            "## Usage",
            "",
            "### Installation",
            "",
            f"From a checkout of this repository: `pip install -e .`; its extras (`pyproject.toml`) are {extra_list},",
            f'installed as in `pip install -e ".[{names_of_extras[-1]}]"`.',
            "",
            "### Running evaluations",
            "",
            "```bash",
            *(task_command(n) for n in names),
            "```",
            "",
            "To run multiple tasks simultaneously use `inspect eval-set`:",
            "",
            "```bash",
            f"inspect eval-set {' '.join(f'{PACKAGE}/{n}.py' for n in plain)} --log-dir logs/set --model {MODEL}",
            "```",
            "",
            "You can also import tasks as normal Python objects and run them from python:",
            "",
            "```python",
            "from inspect_ai import eval, eval_set",
            f"from {PACKAGE} import {', '.join(plain)}",
            "",
            f'eval({plain[0]}(), model="{MODEL}")',
            f'eval_set([{", ".join(f"{n}()" for n in plain)}], log_dir="logs-run-42", model="{MODEL}")',
            "```",
            "",
            "`--model` can be left out when `INSPECT_EVAL_MODEL` is set; `inspect view --log-dir logs` opens the logs.",
            "",
            end,
        ]
    )


def options_block(tasks: tuple[Callable[..., Any], ...] = TASKS) -> str:
    """Inspect's generic options on the tasks in turn, as inspect_evals shows them."""
    begin, end = markers("Options")
    names = [fn.__name__ for fn in tasks]
    commands = [task_command(names[i % len(names)], option, model=None) for i, option in enumerate(OPTION_EXAMPLES)]
    return "\n".join(
        [
            begin,
            "",
            "## Options",
            "",
            "You can control a variety of options from the command line. For example:",
            "",
            "```bash",
            *commands,
            "```",
            "",
            "See `inspect eval --help` for all available options.",
            "",
            end,
        ]
    )


GENERATORS: dict[str, Callable[[], str]] = {
    "Usage": usage_block,
    "Options": options_block,
    "Parameters": parameters_block,
}


# -- the README -------------------------------------------------------------------


def readme_block(text: str, name: str = "Parameters") -> str:
    """The README's current ``name`` block between (and including) its markers."""
    begin, end = markers(name)
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"README.md must hold exactly one {begin!r} ... {end!r} block")
    start, stop = text.index(begin), text.index(end) + len(end)
    if stop < start:
        raise ValueError(f"README.md's {name} end marker comes before its start marker")
    return text[start:stop]


def rewrite_readme(path: Path = README) -> bool:
    """Replace the README's generated blocks with the generated ones; True if it changed."""
    text = path.read_text(encoding="utf-8")
    new = text
    for name in BLOCKS:
        new = new.replace(readme_block(new, name), GENERATORS[name]())
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text
