"""The documentation's shape: the README is a short front page whose first code
block is the two set-up commands, every relative link in the README, the
Changelog, ``datasets/README.md``, ``docs/`` and ``benchmarks/README.md``
resolves (to a file, and to a heading by GitHub's anchor rules), the tasks table names every task, and the documented
``inspect view bundle`` command builds a viewer from a log folder.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from _warm import WarmPython
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs

import spatialstale_evals

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [
    README,
    ROOT / "CHANGELOG.md",
    ROOT / "datasets" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "benchmarks" / "README.md",
]

#: The README's hand-written length limit: a front page, as inspect_evals keeps
#: them. The generated blocks (``tests/_readme.py``: every task's usage, options
#: and parameters) are not counted: a new task's block grows them, not the prose.
MAX_HANDWRITTEN_README_LINES = 110
#: A generated block's opening or closing marker (``_readme.markers``).
GENERATED_MARKER = re.compile(r"^<!-- (/?)\w+: Automatically Generated -->$")
#: The README's first code block, which CI and the developers run as it stands.
SETUP_COMMANDS = [
    'pip install -e ".[local]" && spatialstale quickstart',
    'pip install -e ".[test,local]" && python -m pytest',
]

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+).+?\1")
#: ``[text](target "title")`` and ``![alt](target)``; the target may be ``<...>``.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]+)\"", re.IGNORECASE)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` outside fenced code blocks, inline code removed."""
    lines, fence = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
        else:
            lines.append((number, INLINE_CODE.sub("", line)))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text as rendered (links as their text,
    no markup), lower case, without punctuation but ``-`` and ``_``, spaces as ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor in a Markdown text, repeats numbered as GitHub does
    (``x``, ``x-1``, ``x-2``), and explicit ``id``/``name`` anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fence = None
    for line in text.splitlines():
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
            continue
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        found.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line))
    return found


def links(text: str) -> list[tuple[int, str]]:
    """``(line, target)`` of every Markdown link and image, reference definition
    and HTML ``href``/``src`` outside code."""
    found = []
    for number, line in prose_lines(text):
        for pattern in (INLINE_LINK, REFERENCE, HTML_LINK):
            found += [(number, m.group(1).strip("<>")) for m in pattern.finditer(line)]
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """What does not resolve among ``path``'s relative links: a missing file, an
    anchor that no heading of the target Markdown file (or of ``path``) has, or
    a target outside ``root``, which a clone or a wheel of the repository does
    not have."""
    problems = []
    for number, target in links(path.read_text(encoding="utf-8")):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
            continue  # http:, https:, mailto: ...: not a file of the repository
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.name}:{number}: {target}"
        if not resolved.is_relative_to(root.resolve()):
            problems.append(f"{where} (outside the repository)")
        elif not resolved.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved.read_text(encoding="utf-8")):
            problems.append(f"{where} (no heading #{anchor} in {resolved.name})")
    return problems


def handwritten_lines(text: str) -> list[str]:
    """The lines of ``text`` outside its generated blocks (their markers excluded)."""
    out, inside = [], False
    for line in text.splitlines():
        marker = GENERATED_MARKER.match(line)
        if marker:
            inside = not marker.group(1)
        elif not inside:
            out.append(line)
    return out


def test_readme_is_a_short_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    lines = handwritten_lines(text)
    assert len(lines) <= MAX_HANDWRITTEN_README_LINES, (
        f"README.md has {len(lines)} hand-written lines (generated blocks apart); move detail to docs/"
    )
    # the count reads the markers: a generated block is left out, the prose around it is not
    assert 0 < len(lines) < len(text.splitlines())


def test_readme_starts_with_the_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first = re.search(r"^```\w*\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert first and first.group(1).splitlines() == SETUP_COMMANDS
    assert text.index(first.group(0)) < text.index("\n## "), "before any section"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path: Path) -> None:
    assert not broken_links(path), "\n".join(broken_links(path))


def test_link_check_finds_broken_links(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n\n## The `detect` task\n\n## Notes\n\n## Notes\n", "utf-8")
    (tmp_path / "plot.png").write_bytes(b"")
    good = [
        "[page](docs/page.md)",
        "[task](docs/page.md#the-detect-task)",
        "[second notes](docs/page.md#notes-1)",
        "![plot](plot.png)",
        "[here](#top-heading)",
        "[web](https://example.org/missing.md)",
        "`[in code](missing.md)`",
    ]
    bad = [
        "[gone](docs/missing.md)",
        "[anchor](docs/page.md#no-such-heading)",
        "![img](missing.png)",
        "[x](#nowhere)",
        "[beside](../beside.md)",
    ]
    (tmp_path.parent / "beside.md").write_text("# Beside the repository\n", "utf-8")  # exists, but not in a clone
    readme = tmp_path / "README.md"
    readme.write_text("# Top heading\n\n" + "\n".join(good) + "\n\n```\n[fenced](missing.md)\n```\n", "utf-8")
    assert broken_links(readme, tmp_path) == []
    readme.write_text("# Top heading\n\n" + "\n".join(good + bad) + "\n", "utf-8")
    problems = broken_links(readme, tmp_path)
    assert [p.split(": ", 1)[1].split(" (")[0] for p in problems] == [b[b.index("(") + 1 : -1] for b in bad]


def test_slugs_follow_github() -> None:
    assert slug("The paper's matrix and the report") == "the-papers-matrix-and-the-report"
    assert slug("Larger worlds: 16x16 and 32x32") == "larger-worlds-16x16-and-32x32"
    assert slug("`stale` on the fixture (scripted judge)") == "stale-on-the-fixture-scripted-judge"
    assert slug("[3-C] - 2026-12-01") == "3-c---2026-12-01"
    assert slug("A [link](x.md) in_it") == "a-link-in_it"


def test_tasks_table_names_every_task() -> None:
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## The tasks\n(.*?)(?=^## )", text, re.MULTILINE | re.DOTALL)
    assert section, "README.md has a '## The tasks' section"
    rows = re.findall(r"^\| `(\w+)` \|", section.group(1), re.MULTILINE)
    assert rows == list(spatialstale_evals.TASKS)


# -- the README's providers and the extras that install them ---------------------

#: The client package each hosted provider needs, as inspect-ai's providers
#: check for it (``openai``, ``anthropic``, ``google-genai``): the extra of the
#: same name must require it.
PROVIDER_PACKAGES = {"openai": "openai", "anthropic": "anthropic", "google": "google-genai"}
#: Providers this package registers, which need no extra; and the local model's, which needs ``local``.
NO_EXTRA = {"spatialstale", "mockllm"}
EXTRA_OF = {"spatialstale-local": "local"}
#: ``--model X/...``, ``--model-role role=X/...`` and Python's ``model="X/..."``.
MODEL_PREFIX = re.compile(r"--model(?:-role\s+\w+=|\s+)([\w-]+)/|\bmodel=\"([\w-]+)/")
#: An install line of this checkout: ``pip install -e .`` or ``pip install -e ".[a,b]"``.
INSTALL = re.compile(r"pip install -e (?:\.(?=\s|$)|\"\.\[([\w,-]+)\]\")")


def code_blocks(text: str) -> list[str]:
    """The content of every fenced code block of a Markdown text."""
    return re.findall(r"^```\w*\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def provider_prefixes(text: str) -> set[str]:
    """The model providers the examples in ``text``'s code blocks use."""
    return {a or b for block in code_blocks(text) for a, b in MODEL_PREFIX.findall(block)}


def installed_extras(text: str) -> set[str]:
    """The extras the install lines in ``text``'s code blocks name."""
    return {e for block in code_blocks(text) for group in INSTALL.findall(block) for e in group.split(",") if e}


def missing_extras(text: str, extras: dict[str, list[str]]) -> list[str]:
    """What keeps an example of ``text`` from running after its install lines: a
    provider with no extra in ``extras`` (pyproject's optional dependencies), an
    extra without the provider's client, or one no install line names."""
    problems = []
    named = installed_extras(text)
    for prefix in sorted(provider_prefixes(text) - NO_EXTRA):
        extra = EXTRA_OF.get(prefix, prefix)
        if extra not in extras:
            problems.append(f"{prefix}/...: no extra [{extra}] in pyproject.toml")
            continue
        package = PROVIDER_PACKAGES.get(prefix)
        if package and not any(re.match(rf"{re.escape(package)}\b(?![\w-])", r) for r in extras[extra]):
            problems.append(f"{prefix}/...: the extra [{extra}] does not require {package}")
        if extra not in named:
            problems.append(f"{prefix}/...: no install line names [{extra}]")
    return problems


def test_every_provider_in_the_readme_examples_has_its_extra() -> None:
    text = README.read_text(encoding="utf-8")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {"openai", "anthropic"} <= provider_prefixes(text), "the examples' hosted providers are found"
    assert missing_extras(text, extras) == []
    assert {"openai", "anthropic", "google"} <= set(extras), "one extra per hosted provider the docs name"


def test_the_extras_check_finds_what_is_missing() -> None:
    extras = {"openai": ["openai>=3.4.0"], "anthropic": ["anthropic-tools>=1"], "local": ["xllamacpp"]}
    text = "\n".join(
        [
            "```bash",
            'pip install -e ".[openai]" && spatialstale quickstart --model openai/gpt-4o',
            "inspect eval x.py --model spatialstale/memory --model-role auditor=anthropic/claude",
            "inspect eval x.py --model mockllm/model --model-role grader=google/gemini-2.5-pro",
            "```",
            "```python",
            'eval(task(), model="spatialstale-local/smollm2")',
            "```",
        ]
    )
    assert provider_prefixes(text) == {"openai", "spatialstale", "anthropic", "mockllm", "google", "spatialstale-local"}
    assert missing_extras(text, extras) == [
        "anthropic/...: the extra [anthropic] does not require anthropic",
        "anthropic/...: no install line names [anthropic]",
        "google/...: no extra [google] in pyproject.toml",
        "spatialstale-local/...: no install line names [local]",
    ]
    assert missing_extras(text.replace(".[openai]", ".[openai,anthropic,local]"), extras | {"google": []}) == [
        "anthropic/...: the extra [anthropic] does not require anthropic",
        "google/...: the extra [google] does not require google-genai",
        "google/...: no install line names [google]",
    ]


# -- the specification ---------------------------------------------------------

CONTRACT_PAGE = ROOT / "docs" / "specification.md"
#: Where the suite's own files may cite the specification: code, tests, docs.
CITING = [*sorted((ROOT / "spatialstale_evals").rglob("*.py")), *sorted((ROOT / "tests").glob("*.py")), *DOCS]
#: A citation of a specification section in code or prose: ``specification.md#the-world``,
#: optionally followed by more anchors of the same page (``, #memory``, `` and #detect``).
CITATION = re.compile(r"specification\.md((?:#[\w-]+)(?:(?:,| and) #[\w-]+)*)")
#: A reference to a contract outside the repository (a file beside it, or its section numbers).
EXTERNAL = re.compile(r"\.\./shared/|shared/SPEC|\bSPEC(?:\.md| section| §|'s| \d)")


def test_code_cites_existing_sections_of_the_specification() -> None:
    """Every section the code, the tests and the docs cite by its anchor on
    docs/specification.md is a heading there, so a renamed section cannot leave a
    dead citation."""
    headings = anchors(CONTRACT_PAGE.read_text(encoding="utf-8"))
    dead = [
        f"{path.relative_to(ROOT)}: #{anchor}"
        for path in CITING
        for match in CITATION.finditer(path.read_text(encoding="utf-8"))
        for anchor in re.findall(r"#([\w-]+)", match.group(1))
        if anchor not in headings
    ]
    assert len(headings) > 10 and not dead, dead


def test_nothing_cites_a_contract_outside_the_repository() -> None:
    """The specification is docs/specification.md: a clone or a wheel has no other."""
    cited = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in CITING
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if EXTERNAL.search(line)
    ]
    assert not cited, cited


# -- inspect view bundle ----------------------------------------------------------

BUNDLE_DOC = ROOT / "docs" / "matrix-and-report.md"


def test_view_bundle_builds_from_a_log_folder(tmp_path: Path, warm_python: WarmPython) -> None:
    """The documented ``inspect view bundle`` command on a log folder of a tiny
    scripted eval: a static viewer (its ``index.html``) with the logs in it.
    (``python -m inspect_ai``, in a fork of the session's warm interpreter.)"""
    documented = BUNDLE_DOC.read_text(encoding="utf-8")
    assert re.search(r"^inspect view bundle --log-dir \S+ --output-dir \S+", documented, re.M), BUNDLE_DOC.name
    logs_dir, out = tmp_path / "logs", tmp_path / "viewer"
    [log] = inspect_eval(
        spatialstale_evals.detect(), model="spatialstale/observer", limit=2, log_dir=str(logs_dir), display="none"
    )
    assert log.status == "success"
    result = warm_python.run(
        [sys.executable, "-m", "inspect_ai", "view", "bundle", "--log-dir", str(logs_dir), "--output-dir", str(out)],
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "<html" in index.lower() and "assets/" in index, "the viewer's page and its scripts"
    assert (out / "assets").is_dir() and any((out / "assets").glob("*.js"))
    names = sorted(Path(info.name).name for info in list_eval_logs(str(logs_dir)))
    assert sorted(p.name for p in (out / "logs").glob("*.eval")) == names
    assert all(name in (out / "logs" / "listing.json").read_text(encoding="utf-8") for name in names)


#: A version the docs state by its constant's name: ``PROBE_PROMPT_VERSION` 1.1`.
VERSION_STATED = re.compile(r"`(?:prompts\.)?([A-Z][A-Z_]*VERSION)`\s*(?:is\s+|=\s*)?`?(\d+(?:\.\d+)+)`?")


def test_every_version_the_docs_state_is_the_codes() -> None:
    """The Changelog is history and left out; every other page's stated version is read from the code."""
    from spatialstale_evals.harness import prompts as shared
    from spatialstale_evals.probing import prompts as probe_prompts
    from spatialstale_evals.stale_corpus import prompts as stale_prompts

    versions = {**vars(shared), **vars(probe_prompts), **vars(stale_prompts)}
    stated = [
        (path.name, name, value)
        for path in DOCS
        if path.name != "CHANGELOG.md"
        for name, value in VERSION_STATED.findall(path.read_text(encoding="utf-8"))
    ]
    assert {"PROBE_PROMPT_VERSION", "STALE_PROMPT_VERSION"} <= {name for _, name, _ in stated}
    wrong = [(page, name, value, versions.get(name)) for page, name, value in stated]
    assert [w for w in wrong if w[2] != w[3]] == []


EXAMPLE_REPORT = ROOT / "docs" / "example-report" / "REPORT.md"


def test_example_report_is_at_the_current_task_version() -> None:
    """The published example states the task version it ran at (in its header, the line
    ``benchmarks/example_report.py`` writes), which is ``eval.yaml``'s; no row is labelled
    with another version, and every task family of ``eval.yaml`` has samples in it."""
    import yaml

    meta = yaml.safe_load((ROOT / "spatialstale_evals" / "eval.yaml").read_text(encoding="utf-8"))
    header, body = EXAMPLE_REPORT.read_text(encoding="utf-8").split("\n## ", 1)
    stated = re.findall(r"at task version ([0-9]+-[A-Z]+)", header)
    assert stated == [str(meta["version"])], "rerun python benchmarks/example_report.py"
    assert re.findall(r"\btask version [0-9]+-[A-Z]+\b", body) == []
    counted = {family: int(n) for n, family in re.findall(r"(\d+) (\w+) (?:sample|episode|scenario)\(s\)", header)}
    assert {task["name"]: counted.get(task["name"], 0) > 0 for task in meta["tasks"]} == {
        task["name"]: True for task in meta["tasks"]
    }


#: The tasks page's ``inspect view`` pictures (``benchmarks/view_screenshots.py``) and their size bound.
VIEW_IMAGES, MAX_IMAGE_BYTES = ROOT / "docs" / "images" / "view", 100_000


def test_tasks_page_shows_every_tasks_sample_list_and_transcript() -> None:
    """Each task of ``eval.yaml`` has a screenshot of its sample list and of a transcript,
    a small PNG that the tasks page shows; no picture is left over from a removed task."""
    import yaml

    tasks = [task["name"] for task in yaml.safe_load((ROOT / "spatialstale_evals" / "eval.yaml").read_text())["tasks"]]
    page = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
    expected = {f"{task}-{view}.png" for task in tasks for view in ("samples", "transcript")}
    assert {p.name for p in VIEW_IMAGES.glob("*.png")} == expected
    for name in sorted(expected):
        data = (VIEW_IMAGES / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < MAX_IMAGE_BYTES, name
        assert f"](images/view/{name})" in page, name
