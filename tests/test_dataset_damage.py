"""Damaged copies of a canonical instance file, re-hashed as an attacker (or a
hand edit) would, run through ``inspect_ai.eval`` with ``-T dataset=<copy>``:
each must be refused before any model call with an error naming the file, the
line and the field. And a hypothesis strategy mutating one field of one line
with a hostile value: a clear error naming the line, or it loads exactly as
written and equals the original (or, one event or entry removed, is a smaller
valid instance). The canonical files are only read."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from spatialstale_evals.detect import detect
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.world import dataset
from spatialstale_evals.world.dataset import DatasetError

CANON = Path(str(dataset.CANONICAL_DIR))
MANIFEST = json.loads((CANON / "MANIFEST.json").read_text(encoding="utf-8"))
LINES = {r: (CANON / f"{r}.jsonl").read_text(encoding="utf-8").splitlines() for r in ("L1", "L2", "L3")}
ORIGINAL = {r: dataset.load(None, r) for r in LINES}
LAST = len(json.loads(LINES["L3"][1])["events"]) - 1


def write_copy(folder: Path, regime: str, lines: list[str], manifest: dict | None = None) -> Path:
    """``regime``'s file of the canonical 8x8 set in ``folder`` as ``lines``, and the
    manifest re-hashed (its size list dropped: no sub-folders here; the other
    regimes' files are not read)."""
    folder.mkdir(parents=True, exist_ok=True)
    table = copy.deepcopy(MANIFEST)
    table.pop("sizes", None)
    raw = ("\n".join(lines) + "\n" if lines else "").encode("utf-8")
    (folder / f"{regime}.jsonl").write_bytes(raw)
    table["files"][f"{regime}.jsonl"]["sha256"] = hashlib.sha256(raw).hexdigest()
    (folder / "MANIFEST.json").write_text(json.dumps(manifest or table, indent=2) + "\n", encoding="utf-8")
    return folder


def edited(regime: str, change: Callable[[list[dict]], Any]) -> list[str]:
    """The regime's lines after ``change`` edits their JSON in place (or returns new raw lines)."""
    data = [json.loads(line) for line in LINES[regime]]
    out = change(data)
    return out if out is not None else [json.dumps(d, separators=(",", ":")) for d in data]


def setitem(obj: Any, key: Any, value: Any) -> None:
    obj[key] = value


def memory(i: int, entry: int, **fields: Any) -> Callable[[list[dict]], None]:
    return lambda d: d[i]["memory"][entry].update(fields)


def boxed_goal(d: list[dict]) -> None:
    """Holes on both neighbours of the goal in ``grid`` (g0, and the memory written on it, untouched)."""
    rows = [list(r) for r in d[4]["grid"]]
    rows[6][7], rows[7][6] = "H", "H"
    d[4]["grid"] = ["".join(r) for r in rows]


#: An ice entry's text, as the dataset format writes it.
ICE = "[{id}] SAFE at ({cell}): Frozen ice - safe to walk"
#: kind -> (regime, edit, line, the field the error must name)
DAMAGE: dict[str, tuple[str, Callable[[list[dict]], Any], int, str]] = {
    "duplicate_instance_id": ("L2", lambda d: setitem(d[1], "id", d[0]["id"]), 2, "id"),
    "event_cell_off_grid": ("L3", lambda d: setitem(d[0]["events"][0], "cells", [[8, 3]]), 1, "events[0].cells[0]"),
    "negative_event_cell": ("L3", lambda d: setitem(d[0]["events"][0], "cells", [[-2, -3]]), 1, "events[0].cells[0]"),
    "entry_at_minus_one": ("L2", memory(3, 0, row=-1, col=-1), 4, "memory[0].row"),
    "entry_off_grid": ("L2", memory(3, 9, row=8), 4, "memory[9].row"),
    "max_steps_zero": ("L1", lambda d: setitem(d[5], "max_steps", 0), 6, "max_steps"),
    "max_steps_negative": ("L1", lambda d: setitem(d[5], "max_steps", -5), 6, "max_steps"),
    "claim_maybe": ("L2", memory(0, 3, claim="MAYBE"), 1, "memory[3].claim"),
    "empty_memory": ("L2", lambda d: setitem(d[2], "memory", []), 3, "memory"),
    "no_memory": ("L2", lambda d: None if d[2].pop("memory") else None, 3, "memory"),
    "regime_mismatch": ("L2", lambda d: setitem(d[7], "regime", "L1"), 8, "regime"),
    "negative_event_step": ("L3", lambda d: setitem(d[1]["events"][0], "step", -3), 2, "events[0].step"),
    "event_step_past_budget": ("L3", lambda d: setitem(d[1]["events"][-1], "step", 50), 2, f"events[{LAST}].step"),
    "float_row": ("L2", memory(0, 5, row=0.0), 1, "memory[5].row"),
    "duplicate_memory_id": ("L2", memory(0, 1, id="mem_000", text=ICE.format(id="mem_000", cell="0,1")), 1,
                            "memory[1].id"),
    "text_contradicts_fields": ("L2", memory(0, 2, text=ICE.format(id="mem_002", cell="0,2")), 1, "memory[2].text"),
    "claim_false_of_g0": ("L2", memory(0, 1, claim="DANGER"), 1, "memory[1].claim"),
    "boxed_in_goal": ("L2", boxed_goal, 5, "grid"),
    "height_as_text": ("L2", lambda d: setitem(d[0], "height", "eight"), 1, "height"),
    "deeply_nested_line": ("L2", lambda d: ["[" * 100_000] + LINES["L2"][1:], 1, "(line)"),
}


def counting_model() -> tuple[Any, list[int]]:
    calls: list[int] = []

    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        calls.append(1)
        out = ModelOutput.from_content(model="mockllm/model", content="{}")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=reply, memoize=False), calls


TASKS = {"detect": detect, "navigate": navigate, "probe": probe}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_each_damage_kind_is_refused_before_any_call_naming_file_line_and_field(kind: str, tmp_path: Path) -> None:
    regime, change, line, field = DAMAGE[kind]
    folder = write_copy(tmp_path / "damaged", regime, edited(regime, change))
    model, calls = counting_model()
    task = TASKS[("detect", "navigate", "probe")[len(kind) % 3]]  # spread the kinds over the tasks
    with pytest.raises(DatasetError) as exc:
        inspect_eval(task, task_args={"dataset": str(folder), "regime": regime}, model=model, display="none",
                     log_dir=str(tmp_path / "logs"))
    assert calls == []
    assert f"{folder / f'{regime}.jsonl'}:{line}: {field}:" in str(exc.value), str(exc.value)


def test_an_empty_file_and_a_short_file_are_refused_with_the_counts(tmp_path: Path) -> None:
    for name, lines in (("empty", []), ("short", LINES["L2"][:-1])):
        folder = write_copy(tmp_path / name, "L2", lines)
        with pytest.raises(DatasetError) as exc:
            dataset.load(folder, "L2")
        assert f"holds {len(lines)} instances" in str(exc.value) and "lists 50" in str(exc.value)


@pytest.mark.parametrize(
    "key,value,message",
    [
        ("files", "L2.jsonl", "a files table"),
        ("height", "eight", "height: must be an integer"),
        ("count", 0, "count: must be an integer of at least 1"),
    ],
)
def test_a_manifest_field_of_the_wrong_type_is_named(key: str, value: Any, message: str, tmp_path: Path) -> None:
    folder = write_copy(tmp_path / "m", "L2", LINES["L2"])
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    manifest[key] = value
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError) as exc:
        dataset.load(folder, "L2")
    assert message in str(exc.value) and "MANIFEST.json" in str(exc.value)


def test_a_manifest_files_entry_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    folder = write_copy(tmp_path / "m", "L2", LINES["L2"])
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    manifest["files"]["L1.jsonl"] = "abc"
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match=r"files\.L1\.jsonl"):
        dataset.load(folder, "L2")


def test_an_unchanged_copy_loads_equal_to_the_canonical_set(tmp_path: Path) -> None:
    folder = write_copy(tmp_path / "same", "L3", LINES["L3"])
    assert dataset.load(folder, "L3") == ORIGINAL["L3"]


# -- hypothesis: one hostile value in one field of one line ---------------------------

#: Values no field of a valid line may hold where an other value was (ints are out of every range).
HOSTILE = st.one_of(
    st.integers(max_value=-2),
    st.integers(min_value=10_001, max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=6),
    st.just([]),
    st.just({}),
    st.just([[[[[[]]]]]]),
)
#: Fields whose other values are other, valid instances (a renamed instance, another seed, a
#: relabelled provenance): not damage, so not mutated.
FREE = {"seed", "source"}


def leaves(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a leaf or a container in ``value`` (dict keys and list indices)."""
    out = [path] if path and path[-1] not in FREE and path != ("id",) else []
    if isinstance(value, dict):
        out += [p for k, v in value.items() for p in leaves(v, (*path, k))]
    elif isinstance(value, list):
        out += [p for i, v in enumerate(value) for p in leaves(v, (*path, i))]
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mutated_line_is_refused_naming_it_or_loads_as_written(data: st.DataObject, tmp_path: Path) -> None:
    regime = data.draw(st.sampled_from(sorted(LINES)))
    index = data.draw(st.integers(0, len(LINES[regime]) - 1))
    line = json.loads(LINES[regime][index])
    path = data.draw(st.sampled_from(leaves(line)))
    new = data.draw(HOSTILE | st.just("__delete__"))
    target = line
    for key in path[:-1]:
        target = target[key]
    if new == "__delete__":
        del target[path[-1]]
    else:
        target[path[-1]] = new
    lines = list(LINES[regime])
    lines[index] = json.dumps(line)
    folder = write_copy(tmp_path / f"h{data.draw(st.integers(0, 10**9))}", regime, lines)
    try:
        loaded = dataset.load(folder, regime)
    except DatasetError as exc:
        assert f"{regime}.jsonl:{index + 1}: " in str(exc), str(exc)
        return
    # Loaded: exactly what the file says (nothing coerced or repaired on the way
    # in), the other lines as before. The rules are the generator's, not the
    # seed's: a line with one event or one entry fewer is another valid
    # instance, the only mutation that may load as something new.
    assert loaded[index].to_json() == line, (path, new)
    assert loaded[:index] + loaded[index + 1 :] == ORIGINAL[regime][:index] + ORIGINAL[regime][index + 1 :]
    assert loaded == ORIGINAL[regime] or (new == "__delete__" and isinstance(path[-1], int)), (path, new)
