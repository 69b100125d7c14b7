"""What every test module shares.

- The package's own registry entries, snapshotted before pytest imports any
  test module (``_builtins``).
- A guard that every test leaves the registries as it found them (a test
  that registers an entry removes it again: a fixture, or try/finally).
- One local-model server per test session (``local_server``, session scoped):
  every ``local_model`` test that needs a running server uses this one, so a
  session starts it once. The fault test kills it and restarts it on the same
  port (what it tests), so the fixture hands out the port and reads the
  process it stands for from the server's state file each time.
- Hypothesis derandomized: the property tests draw the same examples on every
  run, so a run's verdict is reproducible (``--hypothesis-seed`` or
  ``HYPOTHESIS_PROFILE=explore`` draws afresh, to search for new failures).
- Parallel runs (pytest-xdist; ``addopts`` in pyproject.toml): a run of the
  whole suite (``python -m pytest``, no test named) takes two workers, or one
  per core if there are more; a run that names its tests takes none
  (``-n 2`` asks for workers anyway). Every worker is a process with its own
  session, so what a session holds once must stay on one worker: the
  ``local_model`` tests share one group (one server per run, which the fault
  test kills and restarts while no other test uses it), and a module whose
  tests share a module-scoped fixture (a scripted run they all read) is one
  group, so the fixture runs once; the tests that fork the warm interpreter
  (``warm_python``, with the whole of such a module) are one group, so one
  worker starts it. Every other test goes to whichever worker is
  free. The groups run first, the longest (the local model's) first of all,
  so that no long group is left for last while the other worker idles.
  xdist reports a grouped test's id with its group appended
  (``tests/test_analysis.py::test_x@test_analysis``): drop the suffix to rerun it.
  A pytest that ignores that suffix (9.2, pytest-dev/pytest-xdist#1386) would
  spread every group over both workers without a word; the grouped tests then
  fail at once, saying so (the [test] extra pins pytest below 9.2).
- Inspect's per-task lookup of the distribution that ships a task, cached
  for the session (``_distribution_scan_cached``).
- The cyclic garbage collector tuned as a matrix run tunes it
  (``runs.matrix.GC_THRESHOLDS``), with the heap alive after collection
  frozen out of its passes (``pytest_collection_finish``): a worker holds every
  test module and Inspect allocates many short-lived objects per model call,
  so the default thresholds spend much of a scripted run's CPU in collection.
- In-process evals without Inspect's realtime sample buffer unless a test
  passes ``log_realtime`` (``_no_realtime_buffer``: a third of a scripted run's
  CPU; evals in cold subprocesses keep Inspect's default, and the CLI
  processes forked from a worker, ``tests/_fork.py``, share its patches).
- One warm interpreter per session (``warm_python``, session scoped, started
  at its first use): tests that run a command in a fresh interpreter fork it
  instead of paying Inspect's five-second import each time (``tests/_warm.py``).
- A silenced console's live display not laid out (``tests/_quiet_live.py``):
  ``display="none"`` makes Inspect's console quiet, which throws away what it
  renders, yet Inspect's progress and results tables were still laid out
  (a fifth of a scripted lifelong or probe run's CPU).
- The local model server on one thread (``SPATIALSTALE_LOCAL_THREADS=1``
  unless set): the suite's other worker keeps one of the two cores busy, and a
  two-thread server beside it oversubscribes them, its threads waiting on each
  other at every layer. What the end-to-end tests assert (structure, not the
  model's words) does not depend on the thread count.
- The user's ``./logs`` left alone: a log no test names a folder for goes to a
  temporary one (``INSPECT_LOG_DIR``, for subprocesses too), and a run that
  changes ``./logs`` anyway fails at its end, naming what it wrote there.
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Iterator
from pathlib import Path

import _builtins  # noqa: F401 - the snapshot must be taken before any test module is imported
import pytest
from _local_server import LocalServer, require_local_extra
from _quiet_live import install as _install_quiet_live
from _warm import WarmPython
from hypothesis import settings

from spatialstale_evals import local_model
from spatialstale_evals.harness.family import FAMILIES, families
from spatialstale_evals.local_model import server as lm_server
from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.runs.matrix import GC_THRESHOLDS
from spatialstale_evals.world.regimes import REGIMES

families()  # the suite's own task families, registered before any test can add one

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: Inspect's default log folder, the user's: no test may write there.
USER_LOGS = Path("logs").resolve()
_LOGS_BEFORE = pytest.StashKey[dict[str, tuple[int, int]]]()


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder``: relative path -> (size, modification time in ns)."""
    if not folder.is_dir():
        return {}
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_LOGS_BEFORE] = _listing(USER_LOGS)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collector tuned for the run (module docstring): what is alive now is frozen out of its passes."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run (the controller's, under xdist: after every worker) if it changed ``./logs``."""
    if hasattr(session.config, "workerinput") or _LOGS_BEFORE not in session.config.stash:
        return
    before, after = session.config.stash[_LOGS_BEFORE], _listing(USER_LOGS)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"the tests changed the user's {USER_LOGS}: {', '.join(changed[:10])}"
        if reporter is not None:
            reporter.write_line(f"ERROR: {message}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED



@pytest.fixture(autouse=True, scope="session")
def _logs_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Inspect's default log folder (``INSPECT_LOG_DIR``) for the session: a temporary one."""
    previous = os.environ.get("INSPECT_LOG_DIR")
    os.environ["INSPECT_LOG_DIR"] = str(tmp_path_factory.mktemp("inspect-logs"))
    yield
    if previous is None:
        os.environ.pop("INSPECT_LOG_DIR", None)
    else:
        os.environ["INSPECT_LOG_DIR"] = previous


#: The xdist group of the tests that need the local model (marker ``local_model``).
LOCAL_MODEL_GROUP = "local_model"
#: The xdist group of the tests that fork the session's warm interpreter (fixture ``warm_python``):
#: one worker starts it, not both (five seconds of CPU each).
WARM_GROUP = "warm_python"
#: Fixture scopes whose value a module's tests share (``session`` is the local server's: its own group).
SHARED_SCOPES = ("module", "class", "package")


def _distribution_scan_cached() -> None:
    """Scan the installed distributions once per session, not once per task.

    Inspect records which installed distribution ships each task it runs.
    When no distribution named after the task's top-level module ships it (a
    task defined in a test module; or the package imported from a checkout its
    editable install does not point to, found first through ``PYTHONPATH``),
    Inspect calls ``importlib.metadata.packages_distributions()``, which reads
    every installed distribution's file list: about half a second per task.
    Nothing is installed or removed while the suite runs, so the first scan's
    answer stands for the session.
    """
    from inspect_ai._util import package

    scan = getattr(package, "packages_distributions", None)
    if scan is not None and not hasattr(scan, "cache_info"):
        package.packages_distributions = functools.cache(scan)


_distribution_scan_cached()


def _no_realtime_buffer() -> None:
    """In-process evals run without Inspect's realtime sample buffer unless a test asks for it.

    ``log_realtime`` (default on) writes every event of a running sample to a
    SQLite buffer beside the log, which ``inspect view`` reads to show a sample
    while it runs; no test here watches a running sample, and the buffer is
    about a third of a scripted run's CPU. The log a run writes at its end is
    the same either way. A test that passes ``log_realtime`` gets what it asks
    for, and every eval started in a cold subprocess (the packaging tests, the
    CLI tests of the warm interpreter, the local-model quickstart and the fault
    test) runs with Inspect's default, the buffer on, so the suite still runs
    the configuration users do. A CLI process forked from a worker
    (``tests/_fork.py``) shares the worker's patches, this one included.
    """
    import inspect_ai
    from inspect_ai._eval import eval as eval_module

    original = eval_module.eval_async
    if getattr(original, "_no_realtime_buffer", False):
        return

    @functools.wraps(original)
    async def eval_async(*args: object, **kwargs: object) -> object:
        if kwargs.get("log_realtime") is None:
            kwargs["log_realtime"] = False
        return await original(*args, **kwargs)

    eval_async._no_realtime_buffer = True  # type: ignore[attr-defined]
    eval_module.eval_async = eval_async
    inspect_ai.eval_async = eval_async


_no_realtime_buffer()


_install_quiet_live()  # in-process evals; the benchmark smoke driver installs it too
os.environ.setdefault("SPATIALSTALE_LOCAL_THREADS", "1")  # the local model server (module docstring)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers for the whole suite (one per core above two); none when tests are named."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own reading of it
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(2, cores)


def _module(item: pytest.Item) -> str:
    """The test module's name (``test_analysis``): a group's name, which xdist appends to test ids (``...@name``)."""
    return item.path.stem


def _group(item: pytest.Item, shared_modules: set[str], warm_modules: set[str]) -> str | None:
    if item.get_closest_marker("local_model"):
        return LOCAL_MODEL_GROUP
    if _module(item) in warm_modules:
        return WARM_GROUP
    if _module(item) in shared_modules:
        return _module(item)
    return WARM_GROUP if _warm(item) else None


def _warm(item: pytest.Item) -> bool:
    """Whether the test forks the session's warm interpreter."""
    return "warm_python" in getattr(item, "fixturenames", ())


def _put_in_groups(items: list[pytest.Item]) -> None:
    """Put every test in its xdist group and the groups first (see the module docstring)."""

    def shares_a_fixture(item: pytest.Item) -> bool:
        definitions = getattr(item, "_fixtureinfo", None)
        if definitions is None:
            return False
        return any(defs[-1].scope in SHARED_SCOPES for defs in definitions.name2fixturedefs.values() if defs)

    shared = {_module(item) for item in items if shares_a_fixture(item) and not item.get_closest_marker("local_model")}
    # a module whose tests share a fixture and fork the warm interpreter: all of it in the warm group
    warm = {_module(item) for item in items if _module(item) in shared and _warm(item)}
    groups = {item.nodeid: _group(item, shared, warm) for item in items}
    for item in items:
        if groups[item.nodeid] is not None:
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    rank = {LOCAL_MODEL_GROUP: 0}
    items.sort(key=lambda item: rank.get(groups[item.nodeid], 1 if groups[item.nodeid] else 2))


@pytest.hookimpl(wrapper=True)  # its first half before xdist reads the groups (its own hook of the same name)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """The groups and their order (:func:`_put_in_groups`); then, on a worker,
    note the grouped tests whose group did not take, which then fail at once
    (``pytest_runtest_setup``). xdist groups by a suffix it writes into each
    grouped test's id (``...@group``); a pytest that ignores that write (9.2
    with xdist 3.8: pytest-dev/pytest-xdist#1386) would spread a group over the
    workers silently, running what it holds once (the local model's quickstart,
    a module's scripted run) once per worker."""
    _put_in_groups(items)
    result = yield
    if hasattr(config, "workerinput") and config.getvalue("loadgroup"):
        lost = {item.nodeid for item in items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid}
        config.stash[_UNGROUPED] = lost
    return result


#: The grouped tests whose xdist group did not take (see ``pytest_collection_modifyitems``).
_UNGROUPED = pytest.StashKey[set[str]]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid in item.config.stash.get(_UNGROUPED, set()):
        pytest.fail(
            "pytest-xdist's --dist loadgroup did not put this test in its group: this pytest keeps the test ids "
            "xdist rewrites (pytest-dev/pytest-xdist#1386), so a group's tests run on any worker and what they "
            "share runs once per worker; install pytest<9.2, as the [test] extra pins it",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def _registries_restored() -> Iterator[None]:
    """An entry a test registers and leaves behind would change what every later test sees."""
    before = (tuple(REGIMES), tuple(STRATEGIES), tuple(FAMILIES))
    yield
    after = (tuple(REGIMES), tuple(STRATEGIES), tuple(FAMILIES))
    assert after == before, "the test left a regime, strategy or task family registered"


@pytest.fixture(scope="session")
def local_server() -> Iterator[LocalServer]:
    require_local_extra()
    with local_model.running_server() as state:
        server = LocalServer(state.port)
        yield server
        last = server.state
    assert not local_model.pid_alive(last.pid), "the session's server outlived the session"
    assert lm_server.read_state(last.port) is None, "its state file outlived it"


@pytest.fixture(scope="session")
def warm_python() -> Iterator[WarmPython]:
    """The session's warm interpreter (``tests/_warm.py``): ``warm_python.run`` is
    ``subprocess.run`` for a command in a fresh interpreter, forked from one that
    imported Inspect and nothing of the package."""
    with WarmPython() as warm:
        yield warm
