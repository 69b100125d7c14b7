"""Damaged copies of a canonical instance file, re-hashed as an attacker (or a
hand edit) would, run through ``inspect_ai.eval`` with ``-T dataset=<copy>``:
each must be refused before any model call with an error naming the file, the
line and the field. And a hypothesis strategy mutating one field of one line
with a hostile value: a clear error naming the line, or it loads exactly as
written and equals the original (or, one event or entry removed, is a smaller
valid instance). The same for the ``lifelong`` task's lifetime files (each
kind of damage run through ``inspect_ai.eval`` of ``lifelong``, and the
mutation strategy over their lines). The canonical files are only read."""

from __future__ import annotations

import copy
import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from spatialstale_evals.detect import detect
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.world import dataset, lifetimes
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
        ("count", 0, "count: must be an integer in 1..10000"),
        ("height", 100_000, "height: must be an integer in 2..128"),
        ("master_seed", -5, "master_seed: must be an integer in 0.."),
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



# -- the lifelong task's lifetime files ------------------------------------------------

LIFE_DIR = CANON / "lifelong"
LIFE_MANIFEST = json.loads((LIFE_DIR / "MANIFEST.json").read_text(encoding="utf-8"))
LIFE_LINES = {r: (LIFE_DIR / f"{r}.jsonl").read_text(encoding="utf-8").splitlines() for r in ("L0", "L1", "L3")}
LIFE_ORIGINAL = {r: lifetimes.load(None, r) for r in LIFE_LINES}


def write_life_copy(folder: Path, regime: str, lines: list[str], manifest: dict | None = None) -> Path:
    """A dataset folder holding the canonical instance file of ``regime`` and, in
    ``lifelong/``, its lifetime file as ``lines`` with the manifest re-hashed."""
    write_copy(folder, regime, (CANON / f"{regime}.jsonl").read_text(encoding="utf-8").splitlines())
    life = folder / "lifelong"
    life.mkdir(exist_ok=True)
    table = copy.deepcopy(manifest or LIFE_MANIFEST)
    raw = ("\n".join(lines) + "\n" if lines else "").encode("utf-8")
    (life / f"{regime}.jsonl").write_bytes(raw)
    table["files"][f"{regime}.jsonl"]["sha256"] = hashlib.sha256(raw).hexdigest()
    (life / "MANIFEST.json").write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    return folder


def life_edited(regime: str, change: Callable[[list[dict]], Any]) -> list[str]:
    data = [json.loads(line) for line in LIFE_LINES[regime]]
    out = change(data)
    return out if out is not None else [json.dumps(d, separators=(",", ":")) for d in data]


def episode(i: int, k: int, key: str, value: Any) -> Callable[[list[dict]], None]:
    return lambda d: setitem(d[i]["episodes"][k], key, value)


#: The first L0 lifetime (no changes anywhere) whose goal has ice on both neighbours.
BOXABLE = next(i for i, line in enumerate(LIFE_LINES["L0"]) if json.loads(line)["g0"][6][7:] == "F"
               and json.loads(line)["g0"][7][6] == "F")  # fmt: skip


def goal_boxed_in(d: list[dict]) -> None:
    """Lifetime ``BOXABLE`` with both neighbours of the goal flipped to holes before episode 3."""
    d[BOXABLE]["episodes"][2]["changes"] = [[6, 7], [7, 6]]


#: kind -> (regime, edit, line, the field the error must name): the issue's reproductions and more
LIFE_DAMAGE: dict[str, tuple[str, Callable[[list[dict]], Any], int, str]] = {
    "change_wrapping_to_the_last_row": ("L1", episode(0, 1, "changes", [[-1, 0]]), 1, "episodes[1].changes[0]"),
    "change_off_grid": ("L1", episode(3, 2, "changes", [[99, 99]]), 4, "episodes[2].changes[0]"),
    "change_on_the_start": ("L1", episode(2, 1, "changes", [[0, 0]]), 3, "episodes[1].changes[0]"),
    "change_listed_twice": ("L1", episode(2, 1, "changes", [[0, 1], [0, 1]]), 3, "episodes[1].changes[1]"),
    "change_as_text": ("L1", episode(2, 1, "changes", [["1", 2]]), 3, "episodes[1].changes[0][0]"),
    "goal_boxed_in": ("L0", goal_boxed_in, BOXABLE + 1, "episodes[2].changes"),
    "max_steps_negative": ("L1", lambda d: setitem(d[5], "max_steps", -3), 6, "max_steps"),
    "max_steps_zero": ("L0", lambda d: setitem(d[5], "max_steps", 0), 6, "max_steps"),
    "max_steps_float": ("L0", lambda d: setitem(d[5], "max_steps", 3.7), 6, "max_steps"),
    "max_steps_bool": ("L0", lambda d: setitem(d[5], "max_steps", True), 6, "max_steps"),
    "seed_as_text": ("L0", lambda d: setitem(d[5], "seed", "1"), 6, "seed"),
    "seed_of_another_instance": ("L0", lambda d: setitem(d[5], "seed", d[6]["seed"]), 6, "seed"),
    "regime_mismatch": ("L1", lambda d: setitem(d[7], "regime", "L2"), 8, "regime"),
    "height_100": ("L1", lambda d: setitem(d[7], "height", 100), 8, "height"),
    "duplicated_line": ("L1", lambda d: [LIFE_LINES["L1"][0], *LIFE_LINES["L1"][:-1]], 2, "id"),
    "a_line_too_many": ("L1", lambda d: [*LIFE_LINES["L1"], LIFE_LINES["L1"][-1]], 51, "id"),
    "ids_swapped": ("L1", lambda d: [LIFE_LINES["L1"][1], LIFE_LINES["L1"][0], *LIFE_LINES["L1"][2:]], 1, "id"),
    "episodes_missing_one": ("L3", lambda d: d[4]["episodes"].pop() and None, 5, "episodes"),
    "event_step_zero": ("L3", lambda d: setitem(d[4]["episodes"][2]["events"][0], "step", 0), 5,
                        "episodes[2].events[0].step"),
    "event_cell_off_grid": ("L3", lambda d: setitem(d[4]["episodes"][3]["events"][0], "cells", [[8, 0]]), 5,
                            "episodes[3].events[0].cells[0]"),
    "first_episode_not_the_instance": ("L3", lambda d: d[4]["episodes"][0]["events"].pop() and None, 5,
                                       "episodes[0].events"),
    "not_json": ("L0", lambda d: [LIFE_LINES["L0"][0][:-1], *LIFE_LINES["L0"][1:]], 1, "(line)"),
}


@pytest.mark.parametrize("kind", list(LIFE_DAMAGE))
def test_each_lifetime_damage_is_refused_before_any_call_naming_file_line_and_field(kind: str, tmp_path: Path) -> None:
    regime, change, line, field = LIFE_DAMAGE[kind]
    folder = write_life_copy(tmp_path / "damaged", regime, life_edited(regime, change))
    model, calls = counting_model()
    with pytest.raises(DatasetError) as exc:
        inspect_eval(lifelong, task_args={"dataset": str(folder), "regime": regime, "episodes": 2}, model=model,
                     display="none", log_dir=str(tmp_path / "logs"))
    assert calls == []
    assert f"{folder / 'lifelong' / f'{regime}.jsonl'}:{line}: {field}:" in str(exc.value), str(exc.value)


def test_a_short_lifetime_file_and_a_bad_episodes_count_are_refused_with_the_counts(tmp_path: Path) -> None:
    folder = write_life_copy(tmp_path / "short", "L1", LIFE_LINES["L1"][:-1])
    with pytest.raises(DatasetError, match="holds 49 lifetimes; MANIFEST.json .files.L1.jsonl. lists 50"):
        lifetimes.load(folder, "L1")
    for value in ("ten", 0, 11, 2.0):
        manifest = copy.deepcopy(LIFE_MANIFEST) | {"episodes": value}
        folder = write_life_copy(tmp_path / f"m{value}", "L1", LIFE_LINES["L1"], manifest)
        with pytest.raises(DatasetError, match=r"lifelong/MANIFEST.json: episodes: must be an integer in 1..10"):
            lifetimes.load(folder, "L1")


def test_lifetimes_shorter_than_the_runs_episodes_are_refused_before_any_call(tmp_path: Path) -> None:
    """The issue's reproduction: lifetimes of 2 episodes run with ``-T episodes=3``
    made model calls, then failed with an IndexError; now refused up front, and
    the same files run with ``episodes=2`` (the positive control)."""
    two = life_edited("L0", lambda d: [e["episodes"].__delitem__(slice(2, None)) for e in d] and None)
    folder = write_life_copy(tmp_path / "two", "L0", two, copy.deepcopy(LIFE_MANIFEST) | {"episodes": 2})
    model, calls = counting_model()
    with pytest.raises(DatasetError) as exc:
        inspect_eval(lifelong, task_args={"dataset": str(folder), "regime": "L0", "episodes": 3}, model=model,
                     display="none", log_dir=str(tmp_path / "logs"))
    assert calls == []
    assert "MANIFEST.json: episodes: the lifetimes hold 2 episodes each; the run asks for 3" in str(exc.value)
    loaded = lifetimes.load(folder, "L0", episodes=2)
    assert [len(life.episodes) for life in loaded] == [2] * 50
    assert [life.episodes for life in loaded] == [life.episodes[:2] for life in LIFE_ORIGINAL["L0"]]


def test_an_unchanged_lifetime_copy_loads_equal_to_the_canonical_set(tmp_path: Path) -> None:
    folder = write_life_copy(tmp_path / "same", "L3", LIFE_LINES["L3"])
    assert lifetimes.load(folder, "L3") == LIFE_ORIGINAL["L3"]


def life_leaves(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a leaf or a container of a lifetime line: no field is free
    (the id, seed and budget must be those of the line's instance)."""
    out = [path] if path else []
    if isinstance(value, dict):
        out += [p for k, v in value.items() for p in life_leaves(v, (*path, k))]
    elif isinstance(value, list):
        out += [p for i, v in enumerate(value) for p in life_leaves(v, (*path, i))]
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mutated_lifetime_line_is_refused_naming_it_or_loads_as_written(data: st.DataObject, tmp_path: Path) -> None:
    regime = data.draw(st.sampled_from(sorted(LIFE_LINES)))
    index = data.draw(st.integers(0, len(LIFE_LINES[regime]) - 1))
    line = json.loads(LIFE_LINES[regime][index])
    path = data.draw(st.sampled_from(life_leaves(line)))
    new = data.draw(HOSTILE | st.just("__delete__"))
    target = line
    for key in path[:-1]:
        target = target[key]
    if new == "__delete__":
        del target[path[-1]]
    else:
        target[path[-1]] = new
    lines = list(LIFE_LINES[regime])
    lines[index] = json.dumps(line)
    folder = write_life_copy(Path(tempfile.mkdtemp(dir=tmp_path)), regime, lines)
    try:
        loaded = lifetimes.load(folder, regime)
    except DatasetError as exc:
        assert f"lifelong/{regime}.jsonl:{index + 1}: " in str(exc), str(exc)
        return
    # Loaded: exactly what the file says, the other lines as before; only a
    # change or an event of a later episode removed may make another valid lifetime.
    assert loaded[index].to_json() == line, (path, new)
    assert loaded[:index] + loaded[index + 1 :] == LIFE_ORIGINAL[regime][:index] + LIFE_ORIGINAL[regime][index + 1 :]
    assert loaded == LIFE_ORIGINAL[regime] or (new == "__delete__" and isinstance(path[-1], int)), (path, new)
