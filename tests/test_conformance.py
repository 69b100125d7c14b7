"""Ecosystem conformance: the README and ``spatialstale_evals/eval.yaml`` stay in
the shape inspect_evals uses, and in step with the code.

- The README's Usage, Options and Parameters blocks (each between its ``NAME:
  Automatically Generated`` markers) are generated from the task registry,
  the @task signatures and their Google-style ``Args:`` docstrings, in
  inspect_evals' format (``tests/_readme.py``). Regenerate them after changing
  a task, its parameters or its docstring with::

      python tests/test_conformance.py

- Every ``-T`` argument in a command of the README or of ``docs/`` is a
  parameter of the task it runs.
- ``eval.yaml`` has the fields inspect_evals requires, its version is every
  task's ``Task.version`` as built, and each task's ``dataset_samples`` is what the
  registered task runs with its defaults.
- ``CHANGELOG.md`` has an entry for the current task version.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from _readme import (
    BLOCKS,
    GENERATORS,
    PACKAGE,
    README,
    ROOT,
    RUN_ARGUMENTS,
    TASKS,
    markers,
    parameters_block,
    readme_block,
    rewrite_readme,
    task_command,
)
from inspect_ai import list_tasks
from inspect_ai.util import registry_create

import spatialstale_evals
from spatialstale_evals.stale_corpus.corpus import HUB_FILE, HUB_RECORDS, HUB_REPO

EVAL_YAML = ROOT / "spatialstale_evals" / "eval.yaml"
CHANGELOG = ROOT / "CHANGELOG.md"
DOCS = ROOT / "docs"

#: Tasks whose data is not in the package, with the arguments that run them on a
#: fixture of ours (the Usage block's), and the samples their published data has (eval.yaml counts those).
EXTERNAL_DATA = {"stale": ({"path": str(ROOT / RUN_ARGUMENTS["stale"][0]["path"])}, HUB_RECORDS)}
#: The version each task carries as built (``Task.version``), by task (the package's list of tasks).
TASK_VERSIONS = {
    name: spatialstale_evals.task_functions()[name](**EXTERNAL_DATA.get(name, ({}, None))[0]).version
    for name in spatialstale_evals.TASKS
}

BEGIN, END = markers("Parameters")
REGENERATE = "run `python tests/test_conformance.py` to rewrite the README's generated blocks from the code"

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


# -- the generated blocks ------------------------------------------------------


@pytest.mark.parametrize("name", BLOCKS)
def test_readme_generated_blocks_match_the_code(name: str) -> None:
    text = README.read_text(encoding="utf-8")
    assert readme_block(text, name) == GENERATORS[name](), f"README.md's {name} block is out of date: {REGENERATE}"


def test_readme_blocks_stand_in_inspect_evals_order() -> None:
    text = README.read_text(encoding="utf-8")
    starts = [text.index(markers(name)[0]) for name in BLOCKS]
    assert starts == sorted(starts), f"README.md's generated blocks must stand in the order {BLOCKS}"


def test_usage_block_runs_every_registered_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Usage block names every task Inspect finds in the package (read from
    the registry, not from the generator's list), and each command's task builds
    with the arguments it gives, from the checkout's root as the block says."""
    block = readme_block(README.read_text(encoding="utf-8"), "Usage")
    commands = re.findall(rf"^inspect eval {PACKAGE}/(\w+)\.py(.*)$", block, re.MULTILINE)
    registered = {info.name for info in list_tasks(PACKAGE, root_dir=ROOT)}
    assert sorted(name for name, _ in commands) == sorted(registered)
    monkeypatch.chdir(ROOT)
    for name, rest in commands:
        args = dict(re.findall(r"-T (\w+)=(\S+)", rest))
        task = registry_create("task", f"{PACKAGE}/{name}", **args)
        assert len(task.dataset) > 0
        roles = re.findall(r"--model-role (\w+)=", rest)
        assert roles == list(RUN_ARGUMENTS.get(name, ({}, {}))[1]), f"{name}: the roles it needs"
    eval_set = re.search(r"^inspect eval-set (.*?) --", block, re.MULTILINE)
    assert eval_set, "the Usage block shows inspect eval-set"
    assert all((ROOT / path).is_file() for path in eval_set.group(1).split())


def test_options_block_shows_inspect_eval_options() -> None:
    from inspect_ai._cli.eval import eval_command

    known = {opt for param in eval_command.params for opt in getattr(param, "opts", [])}
    block = readme_block(README.read_text(encoding="utf-8"), "Options")
    shown = re.findall(r"^inspect eval \S+(?: -T \S+)* (--[\w-]+)", block, re.MULTILINE)
    assert shown and all(option in known for option in shown), f"not inspect eval options: {set(shown) - known}"
    assert task_command("detect", "--limit 10", model=None) == f"inspect eval {PACKAGE}/detect.py --limit 10"


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
    spatialstale_evals/<task>.py`` command in ``text`` (continuation lines joined).

    inspect-evals-lint's IEFS007 skips commands that name a task by its file, as
    ours do, and reads the README only, so this checks them instead."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        for match in re.finditer(rf"inspect eval {PACKAGE}/(\w+)\.py(.*?)(?=inspect eval |$)", line):
            found += [(match.group(1), name) for name in re.findall(r"-T\s*(\w+)=", match.group(2))]
    return found


def documents() -> list[Path]:
    """The README, the Changelog and every page under ``docs/``."""
    return [README, CHANGELOG, *sorted(DOCS.rglob("*.md"))]


def test_documented_task_arguments_are_task_parameters() -> None:
    readme = readme_task_arguments(README.read_text(encoding="utf-8"))
    assert {task for task, _ in readme} == {fn.__name__ for fn in TASKS}, "README shows -T for every task"
    parameters = {fn.__name__: set(inspect.signature(fn).parameters) for fn in TASKS}
    wrong = sorted(
        (path.relative_to(ROOT).as_posix(), task, name)
        for path in documents()
        for task, name in set(readme_task_arguments(path.read_text(encoding="utf-8")))
        if name not in parameters[task]
    )
    assert not wrong, f"commands pass -T arguments that are not task parameters: {wrong}"
    assert readme_task_arguments(
        "inspect eval spatialstale_evals/navigate.py -T strategy=omcd \\\n    -T max_step=10 --epochs 1"
    ) == [("navigate", "strategy"), ("navigate", "max_step")]


def test_readme_blocks_are_found_and_replaced(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    stale = "\n\n".join(f"{begin}\n\nstale\n\n{end}" for begin, end in map(markers, BLOCKS))
    readme.write_text(f"# x\n\nbefore\n\n{stale}\n\n## after\n", encoding="utf-8")
    assert rewrite_readme(readme) is True
    text = readme.read_text(encoding="utf-8")
    assert all(readme_block(text, name) == GENERATORS[name]() for name in BLOCKS)
    assert text.startswith("# x\n\nbefore\n\n") and text.endswith("\n\n## after\n")
    assert rewrite_readme(readme) is False
    readme.write_text(f"# only Parameters\n\n{BEGIN}\n{END}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="exactly one .*Usage"):
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
    """The ``## [version] - YYYY-MM-DD`` entries of ``CHANGELOG.md`` (under its ``# Changelog``)."""
    match = re.search(r"^# Changelog\n(.*?)(?=^# |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, "CHANGELOG.md has no '# Changelog' section"
    return re.findall(r"^## \[([^\]]+)\] - \d{4}-\d{2}-\d{2}$", match.group(1), re.MULTILINE)


def test_changelog_has_the_current_task_version() -> None:
    versions = changelog_versions(CHANGELOG.read_text(encoding="utf-8"))
    for name, version in TASK_VERSIONS.items():
        assert version in versions, f"CHANGELOG.md has no '## [{version}] - <date>' entry ({name})"
    assert versions[0] == TASK_VERSIONS["detect"], "the newest entry comes first"
    readme = README.read_text(encoding="utf-8")
    assert re.search(r"^## Changelog$", readme, re.MULTILINE) and "(CHANGELOG.md)" in readme, (
        "the README's Changelog section links CHANGELOG.md"
    )


def test_changelog_parser_reads_only_dated_entries_of_its_section() -> None:
    text = "# Changelog\n\n## [2-A] - 2026-01-02\n\n- x\n\n## [1-B]\n\n# Layout\n\n## [1-A] - 2026-01-01\n"
    assert changelog_versions(text) == ["2-A"]


# -- inspect-evals-lint ----------------------------------------------------------


#: Runs inspect-evals-lint as ``python -m inspect_evals_lint`` would, in an
#: environment whose installed distributions leave out the ones named in argv[1]
#: (comma-separated). The linter maps each import to its distribution through
#: what is installed (``importlib.metadata``); without them it falls back to the
#: import's own name, so this is the view of a user without those packages, and
#: the stricter one: an import the linter passes here it passes with them too.
#:
#: Each of its rules parses the package afresh (0.12: 3,660 ``ast.parse`` calls
#: for 272 sources, two thirds of its CPU), so ``ast.parse`` is memoised: a
#: source is parsed once and its tree handed to every rule that parses it. No
#: rule changes a tree (every cached tree dumped equal to a fresh parse of its
#: source after a run), and the JSON report is byte-identical with and without
#: the cache. A text that two files share is parsed afresh each time, so no
#: two files ever share a tree.
LINT_WITHOUT = """
import ast, collections, importlib.metadata as md, pathlib, runpy, sys
texts = collections.Counter(p.read_text("utf-8", "replace") for p in pathlib.Path().rglob("*.py"))
shared = {text for text, files in texts.items() if files > 1}
parse, trees = ast.parse, {}
def cached_parse(source, *args, **kwargs):
    if not isinstance(source, str) or source in shared:
        return parse(source, *args, **kwargs)
    key = (source, args, tuple(sorted(kwargs.items())))
    if key not in trees:
        trees[key] = parse(source, *args, **kwargs)
    return trees[key]
ast.parse = cached_parse
hidden = set(sys.argv[1].split(","))
every = md.distributions
md.distributions = lambda **kw: (d for d in every(**kw) if (d.metadata["Name"] or "").lower() not in hidden)
left = {n.lower() for names in md.packages_distributions().values() for n in names}
assert not hidden & left, hidden & left
sys.argv = ["inspect_evals_lint", *sys.argv[2:]]
runpy.run_module("inspect_evals_lint", run_name="__main__", alter_sys=True)
"""


def local_extra() -> list[str]:
    """The [local] extra's distributions, by name (what a user without it lacks)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return [re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0].lower() for dep in extras["local"]]


def test_inspect_evals_lint_passes() -> None:
    """The PyPI linter, configured in pyproject's ``[tool.inspect-evals-lint]``
    (whose per-file ignores say why), finds no failure and no warning, also
    where the [local] extra is not installed: the one run sees the environment
    without it (``LINT_WITHOUT``), the stricter view."""
    hidden = local_extra()
    assert "xllamacpp" in hidden
    result = subprocess.run(
        [sys.executable, "-c", LINT_WITHOUT, ",".join(hidden),
         "--task", "spatialstale_evals/detect.py", "--output-format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
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
    print(f"{README}: {', '.join(BLOCKS)} blocks {'rewritten' if changed else 'already up to date'}")
    sys.exit(0)
