"""Reading a folder of Inspect logs into per-sample tables of this suite.

What gets counted:

- Every ``.eval``/``.json`` log under the folder (recursively) is opened. A file
  that cannot be read (corrupt, truncated, not a log) or a log that is not
  this suite's tasks (``detect``, ``navigate``, ``probe``, ``stale``) is skipped with a warning naming
  it (:class:`SkippedLog`; also listed in the report).
- Logs are grouped into *configurations*: task, task version, model, model
  args, model roles and every task argument except ``epochs`` (the regime,
  modality, strategy, batch size, ... of the run). Logs of a task version
  whose number differs from the current one are a configuration of their
  own, labelled with it (a metric's definition may have changed: the
  Changelog says which); a version that differs only in its letter (an
  interface change, such as a new task) compares and is counted together. Within a configuration each (instance, epoch)
  is counted once, taken from the best log that holds it: complete logs
  (status ``success``) before partial ones (interrupted, cancelled, error),
  newer before older. So a rerun replaces what it reran, an ``eval_set``
  retry that copied the finished samples of a failed attempt is not counted
  twice, and a partial run contributes what it finished.
- Files of one eval (the same eval id: a copy, an ``eval-retry`` log) are all
  read, and the most complete readable copy is kept (``copies.py``); every
  other copy is listed as skipped with the reason.
- Samples that ended in an error or have no score are not counted.

The headers go through ``inspect_ai.analysis.evals_df`` and the samples
through ``inspect_ai.analysis.samples_df`` (the samples' counts, score metadata such
as detection verdicts and trajectories, and the instance JSON).
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.analysis import EvalColumn, evals_df
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from spatialstale_evals.analysis import contents
from spatialstale_evals.analysis.copies import batches, choose_copies, unreadable
from spatialstale_evals.analysis.records import read_samples
from spatialstale_evals.harness.audit import FORMATS
from spatialstale_evals.harness.family import TaskFamily, families
from spatialstale_evals.harness.params import defaults
from spatialstale_evals.metadata import comparability, task_version

#: The suite's current task version: logs of another are kept apart.
TASK_VERSION = task_version()


def default_args(family: str) -> dict[str, Any]:
    """The family's task parameter defaults, read off its signature: a log whose
    other arguments all equal these ran the paper's protocol."""
    return defaults(families()[family].task_function())


class _DefaultArgs(dict):  # type: ignore[type-arg]
    """``DEFAULT_ARGS[family]``: every registered family's defaults, read when first asked."""

    def __missing__(self, family: str) -> dict[str, Any]:
        self[family] = default_args(family)
        return self[family]


#: Each family's parameter defaults (a family registered later is read when asked).
DEFAULT_ARGS: dict[str, dict[str, Any]] = _DefaultArgs()
#: Arguments that do not define a configuration (more epochs of the same run
#: are more episodes of the same thing).
IGNORED_ARGS = ("epochs",)
#: Arguments a task may normalise, recording the value it ran with in its
#: metadata: a view radius that covers the grid is full observability (None).
EFFECTIVE_ARGS = ("view_radius",)
#: What a log of an earlier task version ran with but could not record, by
#: (family, version): every navigator prompt before 3-A carried the line that
#: ``memory_framing=warn`` now sends (CHANGELOG.md, 3-A).
IMPLIED_ARGS: dict[tuple[str, str], dict[str, Any]] = {
    ("navigate", version): {"memory_framing": "warn"} for version in ("1-A", "2-A")
}


#: The ``stale`` arguments that say where its corpus was read from, not what it holds:
#: a log that records the file's SHA-256 is keyed by that (``corpus``) instead.
CORPUS_LOCATION_ARGS = ("path", "source", "hub_revision")


def effective_args(log: EvalLog) -> dict[str, Any]:
    """The task arguments as the task ran them: ``EFFECTIVE_ARGS`` from its
    metadata, ``IMPLIED_ARGS`` of its task version where it names none; for
    ``stale``, the corpus by its content (``corpus``: the SHA-256 the log
    records) in place of where it was read from, and for the other families the
    dataset by the digests the log records (``contents.py``: none for the
    canonical contents), so runs on different contents are never pooled and
    runs on one content are, whatever its path."""
    args, meta = dict(log.eval.task_args or {}), log.eval.metadata or {}
    family = str(suite_family(log))
    implied = IMPLIED_ARGS.get((family, str(log.eval.task_version)), {})
    args = implied | args | {k: meta[k] for k in EFFECTIVE_ARGS if k in args and k in meta}
    if family == "stale" and meta.get("file_sha256"):
        args = {k: v for k, v in args.items() if k not in CORPUS_LOCATION_ARGS} | {"corpus": meta["file_sha256"]}
    if any(meta.get(k) for k in contents.DIGEST_KEYS):
        args.pop("dataset", None)
        key = contents.dataset_key(meta)
        args |= {"dataset": key} if key else {}
    return args


def arm(task_args: dict[str, Any], family: str = "navigate") -> str | None:
    """The strategy with its non-default arm arguments (``TaskFamily.arm_args``): ``omcd[history]``."""
    strategy = task_args.get("strategy")
    fixed = DEFAULT_ARGS[family]
    arms = families()[family].arm_args
    extra = [str(task_args[k]) for k in arms if k in task_args and task_args[k] != fixed.get(k)]
    return f"{strategy}[{','.join(extra)}]" if strategy and extra else strategy


class SkippedLog(UserWarning):
    """A log file that was not used: unreadable, or not from this suite."""


@dataclass
class LogSet:
    """Everything the report needs from a log folder.

    Attributes:
        evals: One row per suite log found (``evals_df`` columns plus ``family``,
            ``model``, ``config``, ``key``, ``complete``, ``used_samples``, and
            ``unused``: why a log gave no record, '' when it gave some).
        records: Per family, one row per counted sample-epoch (a navigate
            episode, a stale scenario): the common fields and the family's own
            (``TaskFamily.record``). ``logset.detect`` is ``logset.records["detect"]``.
        skipped: ``(path, reason)`` of every file that was not used.
    """

    evals: pd.DataFrame
    records: dict[str, pd.DataFrame] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def __getattr__(self, family: str) -> pd.DataFrame:
        if family.startswith("_"):
            raise AttributeError(family)
        if family in families():
            return self.records.get(family, pd.DataFrame())
        raise AttributeError(f"no task family {family!r}; known: {', '.join(families())}")


def _plain_path(name: str) -> str:
    return name.removeprefix("file://")


def suite_family(log: EvalLog) -> str | None:
    """``detect``/``navigate`` for this suite's logs, else None.

    The task name (with or without the package namespace) must be one of the
    suite's and the task metadata must carry the matching ``task_family`` the
    suite's tasks write, so a foreign task that happens to be called
    ``detect`` is not mistaken for ours.
    """
    name = log.eval.task.rsplit("/", 1)[-1]
    meta = log.eval.metadata or {}
    return name if name in families() and meta.get("task_family") == name else None


def _roles(log: EvalLog) -> dict[str, str]:
    roles = log.eval.model_roles or {}
    return {role: getattr(cfg, "model", str(cfg)) for role, cfg in sorted(roles.items())}


def _fmt(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def model_label(model: str, model_args: dict[str, Any] | None) -> str:
    """The model as the tables show it: its name plus any model args (``-M``)."""
    args = model_args or {}
    return model + (f" [{', '.join(f'{k}={_fmt(v)}' for k, v in sorted(args.items()))}]" if args else "")


def config_label(family: str, task_args: dict[str, Any], roles: dict[str, str], version: str | None = None) -> str:
    """Non-default task arguments and model roles, and the task version when its
    number is not the current one's (its scores may be defined differently: see
    CHANGELOG.md): '' for the paper's protocol at the current version."""
    comparable = version is None or comparability(version) == comparability(TASK_VERSION)
    parts = [] if comparable else [f"task version {version}"]
    defaults, entry = DEFAULT_ARGS[family], families()[family]
    for key in sorted(task_args):
        if key in entry.dimensions or key in IGNORED_ARGS or key in entry.arm_args:
            continue
        value = task_args[key]
        if key in defaults and value == defaults[key]:
            continue
        output = task_args.get("output", defaults.get("output"))
        if key == "threshold" and output in FORMATS and not FORMATS[output].thresholded:
            continue
        if key == "corpus":
            shown = f"sha256:{str(value)[:12]}"  # the key keeps all 64
        elif key == "dataset" and str(value).startswith(contents.PREFIX):
            shown = f"sha256:{contents.label(str(value))} (not canonical)"
        else:
            shown = _fmt(value)
        parts.append(f"{key}={shown}")
    parts += [f"{role}={model}" for role, model in roles.items()]
    return ", ".join(parts)


def is_url(log_dir: str | Path) -> bool:
    """Whether ``log_dir`` names a remote folder (``s3://bucket/logs``): Inspect
    reads those through fsspec, and ``pathlib.Path`` would fold ``//`` to ``/``."""
    return "://" in str(log_dir)


def scan(log_dir: str | Path) -> tuple[list[EvalLog], list[tuple[str, str]]]:
    """Headers of the suite's logs under ``log_dir`` and the files skipped (with a
    warning each)."""
    if not is_url(log_dir) and not Path(log_dir).exists():
        raise FileNotFoundError(f"log folder {log_dir} does not exist")
    headers, skipped = [], []
    for info in list_eval_logs(str(log_dir), recursive=True):
        path = _plain_path(info.name)
        try:
            log = read_eval_log(info.name, header_only=True)
        except Exception as exc:  # noqa: BLE001 - any unreadable file is skipped, not fatal
            reason = f"unreadable log ({type(exc).__name__}: {str(exc)[:200]})"
            skipped.append((path, reason))
            warnings.warn(f"skipping {path}: {reason}", SkippedLog, stacklevel=2)
            continue
        if suite_family(log) is None:
            reason = f"not a log of a spatialstale task ({', '.join(families())}): task {log.eval.task!r}"
            skipped.append((path, reason))
            warnings.warn(f"skipping {path}: {reason}", SkippedLog, stacklevel=2)
            continue
        headers.append(log)
    return headers, skipped


def _mtime(location: str) -> float:
    try:
        return os.path.getmtime(_plain_path(location))
    except OSError:  # not a local file (e.g. s3://): ties then fall back to the path
        return 0.0


@functools.cache
def _eval_columns() -> tuple[EvalColumn, ...]:
    """The ``evals_df`` columns, built once: Inspect parses a column's JSONPath at
    its first use (about 25 ms each), once per column object."""
    return (
        EvalColumn("eval_id", path="eval.eval_id", required=True),
        EvalColumn("log", path=lambda log: _plain_path(log.location), required=True),
        EvalColumn("task", path="eval.task", required=True),
        EvalColumn("model_name", path="eval.model", required=True),
        EvalColumn("status", path="status", required=True),
        EvalColumn("created", path="eval.created", required=True),
        EvalColumn("completed_at", path="stats.completed_at"),
        EvalColumn("task_args", path=lambda log: json.dumps(effective_args(log), sort_keys=True)),
        EvalColumn("model_args", path=lambda log: json.dumps(log.eval.model_args or {}, sort_keys=True)),
        EvalColumn("roles", path=lambda log: json.dumps(_roles(log), sort_keys=True)),
        EvalColumn("epochs", path="eval.config.epochs"),
        EvalColumn("task_version", path=lambda log: str(log.eval.task_version)),
        EvalColumn("sample_ids", path=lambda log: json.dumps(log.eval.dataset.sample_ids or [])),
        EvalColumn("completed_samples", path="results.completed_samples"),
        EvalColumn("family", path=lambda log: suite_family(log)),
        EvalColumn("mtime", path=lambda log: _mtime(log.location)),
    )


def eval_table(headers: list[EvalLog]) -> pd.DataFrame:
    """One row per log with its configuration key and priority."""
    if not headers:
        return pd.DataFrame(
            columns=["eval_id", "log", "family", "model", "config", "key", "status", "complete", "when", "epochs"]
        )
    # evals_df keeps one row per eval id: a batch per copy, so every copy has its row
    columns = list(_eval_columns())
    df = pd.concat([evals_df(b, columns=columns, quiet=True) for b in batches(headers)], ignore_index=True)
    df = df.astype(object).where(df.notna(), None)
    models, configs, keys = [], [], []
    for row in df.itertuples():
        task_args = json.loads(row.task_args)
        model_args = json.loads(row.model_args)
        roles = json.loads(row.roles)
        models.append(model_label(row.model_name, model_args))
        configs.append(config_label(row.family, task_args, roles, row.task_version))
        keys.append(
            json.dumps(
                {
                    "family": row.family,
                    "model": row.model_name,
                    "model_args": model_args,
                    "roles": roles,
                    "version": comparability(row.task_version),
                    "args": {k: v for k, v in task_args.items() if k not in IGNORED_ARGS},
                },
                sort_keys=True,
                default=str,
            )
        )
    df["model"], df["config"], df["key"] = models, configs, keys
    df["complete"] = df["status"] == "success"
    df["when"] = [str(c or a) for c, a in zip(df["completed_at"], df["created"])]
    df["epochs"] = df["epochs"].fillna(1).astype(int)
    # Best first within a configuration: complete, then newest (log times have
    # one-second resolution, so file mtime and then the path break ties).
    df = df.sort_values(["key", "complete", "when", "mtime", "log"], ascending=[True, False, False, False, False])
    return df.reset_index(drop=True)


def _covered(row: Any, seen: set[tuple[str, int]]) -> bool:
    planned = json.loads(row.sample_ids)
    return bool(planned) and all((sid, e) in seen for sid in planned for e in range(1, row.epochs + 1))


def _records(row: Any, samples: pd.DataFrame, seen: set[tuple[str, int]]) -> list[dict[str, Any]]:
    """Rows of samples not yet counted in this configuration."""
    task_args = json.loads(row.task_args)
    out = []
    for s in samples.itertuples():
        ident = (str(s.id), int(s.epoch))
        if ident in seen or s.error or s.value is None:
            continue
        seen.add(ident)
        value = json.loads(s.value)
        rec: dict[str, Any] = {
            "model": row.model,
            "config": row.config,
            "model_name": row.model_name,
            "regime": task_args.get("regime"),
            "modality": task_args.get("modality", DEFAULT_ARGS[row.family].get("modality")),
            "instance_id": str(s.id),
            "seed": s.seed,
            "epoch": int(s.epoch),
            "eval_id": row.eval_id,
            "log": row.log,
            "sample_tokens": s.sample_tokens,
        }
        rec |= family_fields(families()[row.family], task_args, row, s, value, json.loads(s.detail))
        out.append(rec)
    return out


def family_fields(
    family: TaskFamily, task_args: dict[str, Any], row: Any, s: Any, value: dict, detail: dict
) -> dict[str, Any]:
    """A record's family fields: the family's own (``TaskFamily.record``), the
    strategy arm when it has arm arguments, the memory factors' levels when it
    has factors, and the instance with its windows' truth when it carries them."""
    fields: dict[str, Any] = {}
    if family.arm_args:
        fields["strategy"] = arm(task_args, family.name)
    if family.factors:
        fields |= factor_levels(task_args, row, family)
    fields |= family.record(task_args, value, detail)
    if family.instance:
        fields["windows_truth"] = json.loads(s.truth)  # per window: step, thaw ids, freeze ids
        fields["instance"] = json.loads(s.instance)
    return fields


def factor_levels(task_args: dict[str, Any], row: Any, family: TaskFamily) -> dict[str, Any]:
    """A record's memory factors (``TaskFamily.factors``):
    ``levels``, the non-default ones as a label ('' at the paper's);
    ``levels_no_memory``, the same with the memory-section factors at their
    defaults (what ``no_memory`` runs with it); and ``base_config``, its
    configuration without them (the trust-gap view compares levels within it)."""
    fixed = DEFAULT_ARGS[family.name]
    levels = {k: task_args.get(k, fixed[k]) for k in family.factors}

    def label(skip: tuple[str, ...] = ()) -> str:
        return ", ".join(f"{k}={_fmt(v)}" for k, v in levels.items() if v != fixed[k] and k not in skip)

    rest = {k: v for k, v in task_args.items() if k not in family.factors}
    return {
        "levels": label(),
        "levels_no_memory": label(family.section_factors),
        "base_config": config_label(family.name, rest, json.loads(row.roles), row.task_version),
    }


def _unused(samples: pd.DataFrame, done: set[tuple[str, int]]) -> str:
    """Why a log that was read gave no record: its samples were counted from a
    better log (``superseded``), or none of them is usable (errored, unscored)."""
    if any((str(s.id), int(s.epoch)) in done for s in samples.itertuples()):
        return "superseded"
    errored = sum(1 for s in samples.itertuples() if s.error)
    return f"no usable sample: {errored} errored, {len(samples) - errored} unscored"


def _skip(skipped: list[tuple[str, str]], path: str, reason: str) -> None:
    skipped.append((path, reason))
    warnings.warn(f"skipping {path}: {reason}", SkippedLog, stacklevel=3)


def load(log_dir: str | Path) -> LogSet:
    """Read every suite log under ``log_dir``; see the module docstring for the rules.
    ``evals["unused"]`` says why a log gave no record ('' when it gave some)."""
    headers, skipped = scan(log_dir)
    evals, aside, read = choose_copies(eval_table(headers), read_samples)
    for path, reason in aside:
        _skip(skipped, path, reason)
    rows: dict[str, list[dict[str, Any]]] = {family: [] for family in families()}
    used: list[int] = []
    unused: list[str] = []
    seen: dict[str, set[tuple[str, int]]] = {}
    for row in evals.itertuples():
        done = seen.setdefault(row.key, set())
        if _covered(row, done):
            used.append(0)
            unused.append("superseded")
            continue
        try:
            samples = read[row.log] if row.log in read else read_samples(row.log, row.family)
        except Exception as exc:  # noqa: BLE001 - a log whose samples cannot be read is skipped
            _skip(skipped, row.log, unreadable(exc))
            used.append(0)
            unused.append("unreadable: see Skipped")
            continue
        why = _unused(samples, done)
        new = _records(row, samples, done)
        rows[row.family].extend(new)
        used.append(len(new))
        unused.append("" if new else why)
    evals["used_samples"] = used
    evals["unused"] = unused
    return LogSet(evals=evals, records={family: pd.DataFrame(r) for family, r in rows.items()}, skipped=skipped)
