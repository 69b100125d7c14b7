"""The task-family registry: one entry per task family, which everything
around the tasks reads (the run matrix and its cost estimate, the ``matrix``
command's choices, the report's log records and sections, the scripted
provider's agents and its built-in policies' replies).

A family package (``detection/``, ``navigation/``, ...) declares its
:class:`TaskFamily` in its ``family.py`` and registers it there;
:func:`families` imports the ``family.py`` of every package the suite names
(``FAMILY_PACKAGES``) on first use. A family registered from anywhere else (a
test, a user's package) is read the same way: it joins the matrix and the
report without an edit to ``runs/`` or ``analysis/``.

    from spatialstale_evals.harness.family import TaskFamily, register_family
    register_family(TaskFamily(name="mytask", task=mytask, scorer="my_scorer"))
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from spatialstale_evals.harness.cost import Cost
from spatialstale_evals.harness.report_layout import ReportTable

#: Sample fields the report never reads (by far the largest).
HEAVY_FIELDS = frozenset({"messages", "events", "attachments"})


def no_detail(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A family whose records keep nothing of the score's metadata."""
    return {}


def value_fields(task_args: Mapping[str, Any], value: Mapping[str, Any], detail: Mapping[str, Any]) -> dict[str, Any]:
    """A record's own fields by default: every count of the sample (``value``:
    its ``Score.metadata["counts"]``, or the score value of a log written before
    the counts moved there)."""
    return dict(value)


class MatrixSpecLike(Protocol):
    """What a family's matrix arguments read of the run matrix's spec (``runs.matrix.MatrixSpec``)."""

    batch_size: int
    epochs: int
    axes: Mapping[str, Sequence[Any]]


#: The task arguments the matrix sets for each task it plans of a family for one
#: regime, beside the values of the family's crossed axes (``TaskFamily.axes``)
#: and the regime, dataset, size and factors, which the matrix adds; with the
#: epochs each runs.
MatrixArguments = Callable[[MatrixSpecLike], Iterable[tuple[dict[str, Any], int]]]


@dataclass(frozen=True)
class MatrixAxis:
    """One axis a family crosses in the run matrix: a ``MatrixSpec.axes`` entry,
    the ``spatialstale matrix`` option of the same name (``--nav-modalities``
    for ``nav_modalities``), and the task parameter each of its values sets. The
    option's choices are that parameter's ``Literal`` in the tasks of the
    families that declare the axis; two families that declare an axis of one
    name share it (``modalities``: detect and probe).

    Attributes:
        name: The spec's key and the option (``strategies``).
        parameter: The task parameter a value sets (``strategy``).
        label: What one value is called in an error (default: ``parameter``).
        known: The values a spec may name, by name (a registry, so an entry
            registered from outside the package is one too); None: the choices.
        default: The values the matrix crosses unless told; None: every choice.
        help: The option's help text; None: none.
    """

    name: str
    parameter: str
    label: str = ""
    known: Callable[[], Iterable[str]] | None = None
    default: Callable[[], Sequence[Any]] | None = None
    help: Callable[[], str] | None = None

    @property
    def called(self) -> str:
        """What one value is called in an error."""
        return self.label or self.parameter


#: (instances, full task arguments, stand-in, stand-ins of the task's model roles by name) -> (low, high)
#: cost of the agent and the roles together; exact estimates give low == high. Each stand-in sums its own
#: calls (``StandIn.cost``), so a caller reads the agent's and each role's share off them.
Estimate = Callable[..., tuple[Cost, Cost]]
#: A family's report plots: (its report tables by key, its records, the report's folder) -> the PNG files written.
Plots = Callable[[Mapping[str, Any], Any, Path], Sequence[Path]]
#: A family's scripted agent: (messages, tools, seed) -> a text reply or a ``ModelOutput``.
ScriptedAgent = Callable[[list[Any], list[Any], int], Any]
#: A family's reply to a built-in scripted policy's request (``harness.scripted_turn.ScriptedTurn``):
#: a text reply, a ``ModelOutput`` (a tool call), or None for a turn that is not the family's.
ScriptedReply = Callable[[Any], Any]


@dataclass(frozen=True)
class Example:
    """A family's scripted runs (no network, no key) for the worked example
    report (``benchmarks/example_report.py``) and the ``inspect view``
    screenshots (``benchmarks/view_screenshots.py``), which loop over the registry.

    Attributes:
        models: The example report's agents (``spatialstale/<agent>``), each run
            on the family: through the run matrix when the family is in it, else
            once each on the task of ``args``.
        view_model: The agent of the screenshots' run (one whose scores and
            explanations have something to say).
        view_args: The screenshots' task arguments.
        args: The example report's task arguments (a family outside the matrix).
        roles: The model roles of both (``grader``: a scripted judge).
    """

    models: tuple[str, ...]
    view_model: str
    view_args: Mapping[str, Any] = field(default_factory=dict)
    args: Mapping[str, Any] = field(default_factory=dict)
    roles: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskFamily:
    """One task family, as the matrix, the cost model and the report see it.

    Attributes:
        name: The ``@task``'s name (its module's too), and the ``task_family``
            the task writes into its metadata: a log is this family's when both match.
        scorer: The scorer whose score holds the sample's counts (in ``Score.metadata["counts"]``).
        task: The ``@task`` function; None: the package's task of this name.
        dimensions: Task arguments that are the report's table dimensions
            (everything else that differs from the default makes a separate configuration).
        exclude: Sample fields the report does not read.
        detail: What of the score's metadata a record keeps.
        record: A record's family fields from (task arguments, the sample's counts, detail).
        instance: Whether records carry the instance and its windows' truth.
        matrix: How the run matrix plans this family (None: not in the matrix):
            the task arguments beside its crossed ``axes`` (``MatrixArguments``).
        axes: The axes the matrix crosses for it, in order (``MatrixAxis``):
            each task it plans sets one value of each.
        estimate: The cost of a planned task without a model call (``Estimate``; None: not estimated).
        cost_agents: The scripted agents that stand in for the model (``model``)
            and for each of the task's model roles while ``estimate`` runs.
        settings: The family's settings object from the task's full arguments
            (defaults included), as its task builds it: what the cost estimate
            and the benchmarks read, without importing the family (None: none).
        in_default_matrix: Whether ``spatialstale matrix`` runs it when ``--tasks`` is not given.
        arm_args: Task arguments that make a strategy another arm of the same
            comparison rather than another configuration (a record's ``strategy``
            reads ``omcd[history]``).
        factors: The memory factors among the task's arguments: a record carries
            their non-default levels as a label (``levels``), and its
            configuration without them (``base_config``).
        section_factors: Those of ``factors`` that only act on a memory section
            (the ``no_memory`` arm runs with them at their defaults: ``levels_no_memory``).
        unit: What one of its records is, as the report counts them (``episode``).
        report_sections: The sections of the report's fixed layout this family
            fills, in order: (heading, the report's tables under it, by name:
            ``analysis.report.compute_tables``). A family without any gets a
            section of its own: ``tables``, or a summary of its records.
        layout_tables: The family's tables of the report's fixed layout by name
            (``report_sections`` places them): how each is built from the
            family's records, its columns, title, note and empty text.
        tables: The report tables of a family outside the fixed layout, from its
            records (a DataFrame): ``{key: (title, table)}``, shown in its own section.
        plots: The family's own report plots (``Plots``): (its report tables by
            key, its records, the report's folder) -> the PNG files written
            there, in the order the report shows them. Its tables are those of
            ``layout_tables`` for a family in the fixed layout, else those of
            ``tables`` (or the summary). Called only for a family with records;
            an entry imports its plot module inside this function, so reading
            the registry loads no plotting library.
        trust_gap: The family's rows of the report's trust-gap view from its
            records: per model, config and regime, how often the agent acted on
            a false claim that could kill it (columns ``samples``, ``episodes``,
            ``hazard_claims``, ``acted_on``, ``acted_on_rate``, ``deaths``,
            ``death_on_hazard``).
        scripted_agents: The family's own scripted agents, served by the scripted
            provider as ``spatialstale/<name>`` (one namespace with its built-in
            policies): each answers (messages, tools, seed) with a text reply or a
            ``ModelOutput`` (the provider adds the token usage).
        scripted_reply: How the built-in scripted policies (``observer``,
            ``memory``, ``mixed``, ``random``: ``harness/belief.py``) answer the
            family's turns (its ``scripted.py``): the provider asks each family
            in turn and takes the first reply that is not None.
        example: Its scripted runs for the example report and the screenshots (None: in neither).
    """

    name: str
    scorer: str
    task: Callable[..., Any] | None = None
    dimensions: tuple[str, ...] = ("regime", "modality")
    exclude: frozenset[str] = HEAVY_FIELDS | {"store"}
    detail: Callable[[Mapping[str, Any]], dict[str, Any]] = no_detail
    record: Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]], dict[str, Any]] = value_fields
    instance: bool = False
    matrix: MatrixArguments | None = None
    axes: tuple[MatrixAxis, ...] = ()
    estimate: Estimate | None = None
    cost_agents: Mapping[str, str] = field(default_factory=lambda: {"model": "observer"})
    settings: Callable[[Mapping[str, Any]], Any] | None = None
    in_default_matrix: bool = True
    arm_args: tuple[str, ...] = ()
    factors: tuple[str, ...] = ()
    section_factors: tuple[str, ...] = ()
    unit: str = "sample"
    report_sections: tuple[tuple[str, tuple[str, ...]], ...] = ()
    layout_tables: Mapping[str, ReportTable] = field(default_factory=dict)
    tables: Callable[[Any], Mapping[str, tuple[str, Any]]] | None = None
    plots: Plots | None = None
    trust_gap: Callable[[Any], Any] | None = None
    scripted_agents: Mapping[str, ScriptedAgent] = field(default_factory=dict)
    scripted_reply: ScriptedReply | None = None
    example: Example | None = None

    @property
    def in_report_layout(self) -> bool:
        """Whether the report's fixed layout shows this family (``report_sections``)."""
        return bool(self.report_sections)

    def task_function(self) -> Callable[..., Any]:
        """The family's ``@task`` function."""
        if self.task is not None:
            return self.task
        from spatialstale_evals import task_functions  # the suite's own tasks, by name

        return task_functions()[self.name]


#: Every registered family by name, in registration order (the suite's first).
FAMILIES: dict[str, TaskFamily] = {}


def register_family(family: TaskFamily) -> TaskFamily:
    """Register ``family`` (again under the same name: replaced); returns it."""
    FAMILIES[family.name] = family
    return family


def unregister_family(name: str) -> None:
    """Remove a family registered under ``name`` (a test's own, when it is done)."""
    FAMILIES.pop(name, None)


def scripted_agents() -> dict[str, ScriptedAgent]:
    """Every family's scripted agents by name (a name claimed by two families is an error)."""
    agents: dict[str, ScriptedAgent] = {}
    for family in families().values():
        twice = set(agents) & set(family.scripted_agents)
        if twice:
            raise RuntimeError(f"scripted agents named twice: {sorted(twice)} (family {family.name})")
        agents |= family.scripted_agents
    return agents


def families() -> dict[str, TaskFamily]:
    """Every family: the suite's own (their packages imported on first call) and any registered since."""
    from spatialstale_evals import FAMILY_PACKAGES

    for package in FAMILY_PACKAGES.values():
        importlib.import_module(f"spatialstale_evals.{package}.family")
    return FAMILIES
