"""``spatialstale matrix``: the run matrix from the command line.

    spatialstale matrix --model openai/gpt-4o --log-dir logs/matrix --dry-run
    spatialstale matrix --model openai/gpt-4o --log-dir logs/matrix --max-connections 20 --display plain

The matrix's own options choose what runs (models, regimes, the axes each
task family crosses: strategies, modalities, ...; seeds, epochs, batch size,
dataset, grid size); their choices are the tasks' own, the axes the
families' registry entries', and their defaults the paper's matrix. ``--factor NAME=V1,V2`` crosses
any other task parameter with it (``--factor view_radius=none,1,2 --factor
filter_mode=delete,history``; ``none`` is None), leaving out combinations a
task calls not applicable. Every other option is one of Inspect's ``eval-set``
options, spelled as Inspect's CLI spells them (``--max-connections 20``,
``--retry-attempts 3``, ``--display plain``, ``--temperature 0``,
``--no-fail-on-error`` ...), passed through to ``inspect_ai.eval_set`` with
its value read by the option's type (``runs/options.py``); ``-M key=value``
and ``--model-role role=model`` work as in ``inspect eval-set``. A name
``eval_set`` does not take is an error, and no option is abbreviated (so
``--seed 42`` is Inspect's generation seed, not ``--seeds``).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import yaml

from spatialstale_evals.harness.family import families
from spatialstale_evals.harness.params import choices
from spatialstale_evals.runs.axes import axis_choices, literal_choices, matrix_axes, matrix_families, regime_choices
from spatialstale_evals.runs.guard import LogFolderError
from spatialstale_evals.runs.matrix import MatrixSpec, format_plan, plan, run_matrix
from spatialstale_evals.runs.options import eval_set_options
from spatialstale_evals.world.regimes import REGIMES


def _yaml(text: str) -> Any:
    """A ``-M``/``--model-role``/``--factor`` value as Inspect reads ``-M``: YAML, else the text."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _split(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def _key_value(text: str) -> tuple[str, Any]:
    key, value = _split(text)
    return key, _yaml(value)


def _named_none(name: str) -> bool:
    """Whether some task has a choice called ``none`` for ``name`` (``memory_framing=none``):
    then ``none`` is that choice, not None."""
    for family in families().values():
        try:
            if "none" in choices(family.task_function(), name):
                return True
        except (KeyError, TypeError):  # not a parameter of this task, or not a Literal
            continue
    return False


def _factor(text: str) -> tuple[str, list[Any]]:
    name, values = _split(text)
    keep = _named_none(name)
    return name, [
        None if v.lower() == "none" and not keep else _yaml(v) for v in (v.strip() for v in values.split(",")) if v
    ]


def _models(values: list[str]) -> list[str]:
    return [m.strip() for v in values for m in v.split(",") if m.strip()]


def matrix_command(args: argparse.Namespace, extra: list[str]) -> int:
    spec = MatrixSpec(
        models=_models(args.model),
        regimes=args.regimes,
        axes={name: getattr(args, name) for name in matrix_axes()},
        families=args.tasks,
        seeds=args.seeds,
        epochs=args.epochs,
        batch_size=args.batch_size,
        dataset=args.dataset,
        size=args.size,
        factors=dict(args.factor),
    )
    try:
        repeated = sorted({name for name, _ in args.factor if [n for n, _ in args.factor].count(name) > 1})
        if repeated:
            raise ValueError(f"--factor {', '.join(repeated)} given more than once; list its values once: NAME=V1,V2")
        options = eval_set_options(extra)
        planned = plan(spec, estimate=args.dry_run)  # validates the spec and loads the dataset
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(format_plan(spec, planned))
        print("\ndry run: no model was called and nothing was written.")
        return 0
    began = time.perf_counter()
    roles = dict(args.model_role) or None
    try:
        ok, logs = run_matrix(spec, args.log_dir, model_args=dict(args.model_arg), model_roles=roles, **options)
    except LogFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    done = sum(1 for log in logs if log.status == "success")
    print(
        f"matrix {'complete' if ok else 'INCOMPLETE'}: {done}/{len(logs)} task log(s) finished in {args.log_dir} "
        f"({time.perf_counter() - began:.1f} s). "
        + (
            f"Next: spatialstale report {args.log_dir} --out REPORT_DIR"
            if ok
            else "Run the same command again to resume."
        )
    )
    return 0 if ok else 1


def add_matrix_subcommand(subparsers: Any) -> None:
    """Add ``matrix`` to an argparse subparsers group; its handler takes the
    namespace and the arguments argparse did not recognise (Inspect's)."""
    spec = MatrixSpec(models=[])
    mp = subparsers.add_parser(
        "matrix",
        help="run the paper's matrix of detect and navigate tasks with eval_set (resumable)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    mp.add_argument("--model", action="append", required=True, metavar="M", help="repeat or comma-separate")
    mp.add_argument("--log-dir", type=str, required=True, metavar="DIR")
    mp.add_argument("--dry-run", action="store_true", help="print tasks, samples, calls and token estimates")
    mp.add_argument("--seeds", type=int, default=None, metavar="N", help="first N instances of each regime")
    mp.add_argument("--epochs", type=int, default=spec.epochs, metavar="E", help=f"episodes per seed ({spec.epochs})")
    mp.add_argument(
        "--regimes",
        nargs="+",
        default=list(spec.regimes),
        choices=regime_choices(),
        help="default: the paper's. " + "; ".join(f"{r.name}: {r.summary}" for r in REGIMES.values()),
    )
    for name, axis in matrix_axes().items():  # each family's crossed axes (``TaskFamily.axes``)
        mp.add_argument(
            f"--{name.replace('_', '-')}",
            nargs="+",
            dest=name,
            default=list(spec.axes[name]),
            choices=axis_choices(name),
            help=axis.help() if axis.help is not None else None,
        )
    mp.add_argument("--tasks", nargs="+", default=list(spec.families), choices=matrix_families())
    mp.add_argument("--batch-size", type=int, default=spec.batch_size, help=f"audit batch size B ({spec.batch_size})")
    mp.add_argument("--dataset", default=None, help="dataset folder (default the canonical set)")
    mp.add_argument(
        "--size", default=spec.size, choices=literal_choices("size"), help=f"grid size of every task ({spec.size})"
    )
    mp.add_argument(
        "--factor",
        action="append",
        type=_factor,
        default=[],
        metavar="NAME=V1,V2",
        help="cross another task parameter with the matrix (repeatable; 'none' is None)",
    )
    mp.add_argument("-M", "--model-arg", action="append", type=_key_value, default=[], metavar="KEY=VALUE")
    mp.add_argument("--model-role", action="append", type=_key_value, default=[], metavar="ROLE=MODEL")
    mp.set_defaults(func=matrix_command, passthrough=True)
