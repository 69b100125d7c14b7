"""Ecosystem conformance: the README and ``spatialstale_evals/eval.yaml`` stay in
the shape inspect_evals uses, and in step with the code.

- The README's Parameters block (between the ``Parameters: Automatically
  Generated`` markers) is generated from the @task signatures and their
  Google-style ``Args:`` docstrings, in inspect_evals' format. Regenerate it
  after changing a task's parameters or docstring with::

      python tests/test_conformance.py

- ``eval.yaml`` has the fields inspect_evals requires, its version is both
  tasks' ``TASK_VERSION``, and each task's ``dataset_samples`` is what the
  registered task runs with its defaults.
- The README's Changelog has an entry for the current ``TASK_VERSION``.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai import list_tasks
from inspect_ai.util import registry_create

import spatialstale_evals
from spatialstale_evals.detect import TASK_VERSION as DETECT_VERSION
from spatialstale_evals.harness.stale_corpus import HUB_FILE, HUB_RECORDS, HUB_REPO
from spatialstale_evals.navigate import TASK_VERSION as NAVIGATE_VERSION
from spatialstale_evals.probe import TASK_VERSION as PROBE_VERSION
from spatialstale_evals.stale import TASK_VERSION as STALE_VERSION

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EVAL_YAML = ROOT / "spatialstale_evals" / "eval.yaml"
PACKAGE = "spatialstale_evals"

TASKS: tuple[Callable[..., Any], ...] = tuple(spatialstale_evals.task_functions().values())
TASK_VERSIONS = {"detect": DETECT_VERSION, "navigate": NAVIGATE_VERSION, "probe": PROBE_VERSION, "stale": STALE_VERSION}
#: Tasks whose data is not in the package, with the arguments that run them on a
#: fixture of ours, and the samples their published data has (eval.yaml counts those).
EXTERNAL_DATA = {"stale": ({"path": str(Path(__file__).parent / "fixtures" / "stale_mini.json")}, HUB_RECORDS)}

BEGIN = "<!-- Parameters: Automatically Generated -->"
END = "<!-- /Parameters: Automatically Generated -->"
REGENERATE = "run `python tests/test_conformance.py` to rewrite the README's Parameters block from the code"

# The fields inspect_evals' own eval.yaml schema requires of an eval in its repository
# (inspect-evals-lint's IEFS005 checks title, description, group, contributors, tasks).
REQUIRED_FIELDS = ("title", "description", "group", "contributors", "version", "tasks", "external_assets")
INSPECT_EVALS_GROUPS = {
    "Assistants",
    "Bias",
    "Coding",
    "Cybersecurity",
    "Knowledge",
    "Mathematics",
    "Multimodal",
    "Personality",
    "Reasoning",
    "Safeguards",
    "Scheming",
    "Writing",
}


# -- the Parameters block ------------------------------------------------------


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
    parts = [BEGIN, "", "## Parameters", ""]
    for fn in tasks:
        parts += [f"### `{fn.__name__}`", "", *parameter_lines(fn), ""]
    parts.append(END)
    return "\n".join(parts)


def readme_block(text: str) -> str:
    """The README's current block between (and including) the markers."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise ValueError(f"README.md must hold exactly one {BEGIN!r} ... {END!r} block")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    if end < start:
        raise ValueError("README.md's Parameters end marker comes before its start marker")
    return text[start:end]


def rewrite_readme(path: Path = README) -> bool:
    """Replace the README's Parameters block with the generated one; True if it changed."""
    text = path.read_text(encoding="utf-8")
    new = text.replace(readme_block(text), parameters_block())
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def test_readme_parameters_block_matches_the_task_signatures() -> None:
    text = README.read_text(encoding="utf-8")
    assert readme_block(text) == parameters_block(), f"README.md's Parameters block is out of date: {REGENERATE}"


def test_parameters_block_generator_reads_signature_and_docstring() -> None:
    # Annotations are strings here too (``from __future__ import annotations``), as in the task modules.
    def sample_task(alpha: str = "a", beta: int | None = None, gamma: float = 0.5) -> None:
        """Summary.

        Args:
            alpha: First line,
                continued ``here``.
            beta (int | None): Optional count.

            gamma: Last one.

        Returns:
            Nothing.
        """

    assert parameters_block((sample_task,)).splitlines() == [
        BEGIN,
        "",
        "## Parameters",
        "",
        "### `sample_task`",
        "",
        "- `alpha` (`str`): First line, continued `here`. (default: `'a'`)",
        "- `beta` (`int | None`): Optional count. (default: `None`)",
        "- `gamma` (`float`): Last one. (default: `0.5`)",
        "",
        END,
    ]

    def undocumented(alpha: str = "a", beta: int = 1) -> None:
        """Summary.

        Args:
            alpha: Documented.
        """

    with pytest.raises(ValueError, match="undocumented: \\['beta'\\]"):
        parameters_block((undocumented,))


def readme_task_arguments(text: str) -> list[tuple[str, str]]:
    """``(task, parameter)`` for every ``-T name=...`` of an ``inspect eval
    spatialstale_evals/<task>.py`` command in the README (continuation lines joined).

    inspect-evals-lint's IEFS007 skips commands that name a task by its file, as
    ours do, so this checks them instead."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        for match in re.finditer(rf"inspect eval {PACKAGE}/(\w+)\.py(.*?)(?=inspect eval |$)", line):
            found += [(match.group(1), name) for name in re.findall(r"-T\s*(\w+)=", match.group(2))]
    return found


def test_readme_task_arguments_are_task_parameters() -> None:
    arguments = readme_task_arguments(README.read_text(encoding="utf-8"))
    assert {task for task, _ in arguments} == {fn.__name__ for fn in TASKS}, "README shows -T for every task"
    parameters = {fn.__name__: set(inspect.signature(fn).parameters) for fn in TASKS}
    wrong = sorted({(task, name) for task, name in arguments if name not in parameters[task]})
    assert not wrong, f"README passes -T arguments that are not task parameters: {wrong}"
    assert readme_task_arguments(
        "inspect eval spatialstale_evals/navigate.py -T strategy=omcd \\\n    -T max_step=10 --epochs 1"
    ) == [("navigate", "strategy"), ("navigate", "max_step")]


def test_readme_block_is_found_and_replaced(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\nbefore\n\n{BEGIN}\n\nstale\n\n{END}\n\n## after\n", encoding="utf-8")
    assert rewrite_readme(readme) is True
    text = readme.read_text(encoding="utf-8")
    assert readme_block(text) == parameters_block()
    assert text.startswith("# x\n\nbefore\n\n") and text.endswith("\n\n## after\n")
    assert rewrite_readme(readme) is False
    readme.write_text("# no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="exactly one"):
        rewrite_readme(readme)


# -- eval.yaml -----------------------------------------------------------------


@pytest.fixture(scope="module")
def eval_yaml() -> dict[str, Any]:
    data = yaml.safe_load(EVAL_YAML.read_text(encoding="utf-8"))
    assert isinstance(data, dict), "eval.yaml must be a mapping"
    return data


def test_eval_yaml_has_the_inspect_evals_fields(eval_yaml: dict[str, Any]) -> None:
    missing = [field for field in REQUIRED_FIELDS if field not in eval_yaml]
    assert not missing, f"eval.yaml is missing {missing}"
    for field in ("title", "description", "group"):
        assert isinstance(eval_yaml[field], str) and eval_yaml[field].strip(), f"eval.yaml: {field} must be text"
    assert "\n" not in eval_yaml["description"].strip(), "eval.yaml: description is one line (inspect_evals)"
    assert eval_yaml["group"] in INSPECT_EVALS_GROUPS
    assert eval_yaml["contributors"] and all(isinstance(c, str) and c for c in eval_yaml["contributors"])
    assert re.fullmatch(r"https://arxiv\.org/abs/\d{4}\.\d{4,5}", eval_yaml["arxiv"])
    assert re.fullmatch(r"\d+-[A-Z]", str(eval_yaml["version"]))
    # the spatial tasks' dataset ships in the package; only the stale task's corpus is fetched, on request
    assert [(a["type"], a["source"], a["fetch_method"]) for a in eval_yaml["external_assets"]] == [
        ("huggingface", HUB_REPO, "hf_hub_download")
    ]
    assert HUB_FILE in eval_yaml["external_assets"][0]["comment"]
    assert isinstance(eval_yaml.get("tags"), list) and eval_yaml["tags"]
    metadata = eval_yaml["metadata"]
    assert metadata.get("fast") is True and not metadata.get("sandbox"), "no sandbox, no GPU: fast"


def test_eval_yaml_version_is_the_tasks_version(eval_yaml: dict[str, Any]) -> None:
    assert [task["name"] for task in eval_yaml["tasks"]] == list(spatialstale_evals.TASKS) == list(TASK_VERSIONS)
    for name, version in TASK_VERSIONS.items():
        assert eval_yaml["version"] == version, f"eval.yaml version {eval_yaml['version']!r} != {name} {version!r}"


def test_eval_yaml_tasks_are_registered_with_their_sample_counts(eval_yaml: dict[str, Any]) -> None:
    found = {info.name for info in list_tasks(PACKAGE, root_dir=ROOT)}
    for entry in eval_yaml["tasks"]:
        name = entry["name"]
        assert name in found, f"eval.yaml task {name!r} is not a @task of {PACKAGE} (found {sorted(found)})"
        args, published = EXTERNAL_DATA.get(name, ({}, None))
        task = registry_create("task", f"{PACKAGE}/{name}", **args)  # through the package's inspect_ai entry point
        assert task.version == eval_yaml["version"]
        if published is not None:  # data from outside: the published count
            assert entry["dataset_samples"] == published
            continue
        assert entry["dataset_samples"] == len(task.dataset), (
            f"eval.yaml: {name} dataset_samples {entry['dataset_samples']} != {len(task.dataset)} "
            "samples in the task's default dataset"
        )


# -- Changelog -----------------------------------------------------------------


def changelog_versions(text: str) -> list[str]:
    """The ``### [version] - YYYY-MM-DD`` entries of the README's ``## Changelog``."""
    match = re.search(r"^## Changelog\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, "README.md has no '## Changelog' section"
    return re.findall(r"^### \[([^\]]+)\] - \d{4}-\d{2}-\d{2}$", match.group(1), re.MULTILINE)


def test_changelog_has_the_current_task_version() -> None:
    versions = changelog_versions(README.read_text(encoding="utf-8"))
    for name, version in TASK_VERSIONS.items():
        assert version in versions, f"README Changelog has no '### [{version}] - <date>' entry ({name})"


def test_changelog_parser_reads_only_dated_entries_of_its_section() -> None:
    text = "## Changelog\n\n### [2-A] - 2026-01-02\n\n- x\n\n### [1-B]\n\n## Layout\n\n### [1-A] - 2026-01-01\n"
    assert changelog_versions(text) == ["2-A"]


# -- inspect-evals-lint ----------------------------------------------------------


def test_inspect_evals_lint_passes() -> None:
    """The PyPI linter, configured in pyproject's ``[tool.inspect-evals-lint]``
    (whose per-file ignores say why), finds no failure and no warning."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_evals_lint",
            "--task",
            "spatialstale_evals/detect.py",
            "--output-format",
            "json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"inspect-evals-lint gave no JSON report (exit {result.returncode}):\n{result.stderr}")
    findings = [
        f"{d['code']} {d.get('file', '')}: {d['message']}"
        for package in report["packages"]
        for d in package["diagnostics"]
        if d["status"] in ("fail", "warn")
    ]
    assert report["passed"] and result.returncode == 0, "\n".join(findings) or result.stderr
    assert not findings, "\n".join(findings)
    assert {p["name"] for p in report["packages"]} == {PACKAGE}


if __name__ == "__main__":
    changed = rewrite_readme()
    print(f"{README}: Parameters block {'rewritten' if changed else 'already up to date'}")
    sys.exit(0)
