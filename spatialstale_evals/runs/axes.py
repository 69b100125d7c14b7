"""The run matrix's axes and vocabularies, read off the family registry.

Every family in the matrix is crossed with the regimes (the world's registry,
``world/regimes.py``); beyond them each family declares the axes it crosses
(``TaskFamily.axes``: navigate's strategies and navigation modalities, detect's
and probe's modalities, ...). The choices of an axis are its task parameter's
``Literal`` in the families that declare it, the values a spec may name its
registry's (``MatrixAxis.known``), its default its own: nothing here names a
family, so a family registered from anywhere brings its axes to the
``matrix`` command and ``MatrixSpec`` without an edit to ``runs/``. The
matrix's own arguments (``epochs``, ``batch_size``, ``size``) default to the
first matrix family's that takes them (all agree but ``epochs``, which only
navigate and lifelong take: navigate's, registered first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from spatialstale_evals.harness.family import MatrixAxis, TaskFamily, families
from spatialstale_evals.harness.params import choices, defaults
from spatialstale_evals.world.regimes import REGIMES

#: Task arguments the matrix sets itself, beside the families' axes (not factors).
MATRIX_ARGS = ("regime", "batch_size", "dataset", "size", "epochs")


def task_of(family: str) -> Callable[..., Any]:
    """The @task function of ``family``."""
    return families()[family].task_function()


def matrix_families() -> list[str]:
    """The families the matrix can run (those with matrix arguments)."""
    return [name for name, family in families().items() if family.matrix is not None]


def default_families() -> list[str]:
    """The families the matrix runs unless told (``TaskFamily.in_default_matrix``)."""
    return [name for name in matrix_families() if families()[name].in_default_matrix]


def _in_matrix() -> Iterator[TaskFamily]:
    return (families()[name] for name in matrix_families())


def literal_choices(parameter: str, among: Iterable[TaskFamily] | None = None) -> tuple[Any, ...]:
    """The values ``parameter`` admits in the tasks of ``among`` (the matrix's
    families) that type it with a ``Literal``, in declared order, each once."""
    found: dict[Any, None] = {}
    for family in _in_matrix() if among is None else among:
        try:
            found |= dict.fromkeys(choices(family.task_function(), parameter))
        except (KeyError, TypeError):  # not a parameter of this task, or not a Literal
            continue
    return tuple(found)


def shared_default(parameter: str) -> Any:
    """The default of ``parameter`` in the first matrix family whose task takes it."""
    for family in _in_matrix():
        found = defaults(family.task_function())
        if parameter in found:
            return found[parameter]
    raise KeyError(f"no task of the run matrix takes {parameter!r}")


def regime_choices() -> tuple[str, ...]:
    return literal_choices("regime")


def paper_regimes() -> list[str]:
    """The regimes with a Table-1 row (the paper's): the matrix's default."""
    return [r for r in regime_choices() if REGIMES[r].table1 is not None]


def matrix_axes() -> dict[str, MatrixAxis]:
    """Every axis the matrix's families declare, by name, in registration order
    (an axis two families declare is one; its first declaration is read)."""
    axes: dict[str, MatrixAxis] = {}
    for family in _in_matrix():
        for axis in family.axes:
            first = axes.setdefault(axis.name, axis)
            if first.parameter != axis.parameter:
                raise RuntimeError(
                    f"matrix axis {axis.name!r} sets {first.parameter!r} in one family, {axis.parameter!r} in "
                    f"{family.name}"
                )
    return axes


def axis_families(name: str) -> list[TaskFamily]:
    """The matrix families that cross the axis ``name``."""
    return [family for family in _in_matrix() if any(axis.name == name for axis in family.axes)]


def axis_choices(name: str) -> tuple[Any, ...]:
    """The choices of the axis ``name`` (the ``matrix`` command's): its parameter's ``Literal``."""
    return literal_choices(matrix_axes()[name].parameter, axis_families(name))


def axis_known(name: str) -> list[Any]:
    """The values of the axis ``name`` a spec may name (its registry's, else its choices)."""
    axis = matrix_axes()[name]
    return list(axis.known() if axis.known is not None else axis_choices(name))


def axis_default(name: str) -> Sequence[Any]:
    """The values the matrix crosses on the axis ``name`` unless told."""
    axis = matrix_axes()[name]
    return axis.default() if axis.default is not None else axis_choices(name)


def own_args() -> set[str]:
    """Task arguments the matrix sets from its own fields and axes (no factor may name one)."""
    return {*MATRIX_ARGS, *(axis.parameter for axis in matrix_axes().values())}
