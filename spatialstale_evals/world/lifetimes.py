"""Lifetimes: one lake over several navigation episodes, changing between them.

A lifetime is what the ``lifelong`` task plays as one sample: ``MAX_EPISODES``
episodes on one lake, same start and goal. Lifetime ``i`` of a regime is built
on instance ``i`` of the canonical set (same seed, so the same ``g0`` and
memory): episode 1 is the instance itself (its pre-game changes, its L3
schedule), so the instance's memory is already stale by the regime when the
agent starts. Before every later episode the regime's own draw is applied
again, to the lake as the previous episode left it, from a random stream of
its own per boundary (``boundary_rng``):

* L0 never changes (the control: notes cannot go stale);
* L1 flips 5-7 scattered cells, L2 a cluster of 12-16 (7-11 kept), at every
  boundary: the paper's rates, per boundary;
* L3 changes nothing between episodes; each episode has an online schedule of
  its own, drawn on the lake it starts on.

The world runs on without the agent: the lake an episode leaves is its start
grid with its *whole* schedule applied, however early the agent died, so a
lifetime is fixed before any model call and every agent meets the same lakes.
Every grid an agent meets keeps a path from start to goal (each draw checks it).

On disk a lifetime is one compact JSON line holding ``g0`` and, per episode,
the cells flipped before it (``changes``; episode 1: the instance's pre-game
changes against ``g0``) and its L3 events; every grid follows from these.
The set lives in the dataset folder's ``lifelong/`` sub-folder with a manifest
of its own (sha256 per file), beside the instances it is built on, whose files
it leaves untouched. Nothing here imports Inspect.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from spatialstale_evals.world import dataset
from spatialstale_evals.world.grid import Cell, Grid, flip_cells, validate_grid
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.regimes import Event, get_regime, grid_after_events, validate_regime
from spatialstale_evals.world.validate import LineError, check_lifetime_line

#: Episodes stored per lifetime (the task's ``episodes`` may be at most this).
MAX_EPISODES = 10
#: 1.0.0: the first lifetimes.
LIFETIME_GENERATOR_VERSION = "1.0.0"
#: The sub-folder of a dataset folder that holds its lifetimes.
LIFETIME_DIR = "lifelong"
#: Tag of the boundary draws' random streams (``boundary_rng``).
LIFETIME_STREAM = 30


def boundary_rng(seed: int, stream: int, episode: int) -> np.random.Generator:
    """The stream of the changes before ``episode`` (2, 3, ...) of the lifetime
    of ``seed`` under the regime whose stream is ``stream``: four words, so it
    never coincides with an instance's two-word streams."""
    return np.random.default_rng([seed, LIFETIME_STREAM, stream, episode])


def differing(a: Grid, b: Grid) -> tuple[Cell, ...]:
    """Cells whose type differs between two grids of one size, row-major."""
    return tuple((r, c) for r, (ra, rb) in enumerate(zip(a, b)) for c, (x, y) in enumerate(zip(ra, rb)) if x != y)


@dataclass(frozen=True)
class EpisodeWorld:
    """One episode's lake: the grid it starts on, the cells flipped since the
    previous episode ended (``changes``) and its online events."""

    grid: Grid
    changes: tuple[Cell, ...]
    events: tuple[Event, ...]

    @cached_property
    def end_grid(self) -> Grid:
        """The lake once every event of the schedule has fired."""
        return grid_after_events(self.grid, self.events)

    def grid_at(self, step: int) -> Grid:
        """The lake after ``step`` moves of this episode."""
        return grid_after_events(self.grid, self.events, upto_step=step)

    def to_json(self) -> dict[str, Any]:
        return {"changes": [list(c) for c in self.changes], "events": [e.to_json() for e in self.events]}


@dataclass(frozen=True)
class Lifetime:
    """One lake's lifetime: its instance's identity and every episode's world."""

    id: str
    regime: str
    seed: int
    height: int
    width: int
    max_steps: int
    g0: Grid
    episodes: tuple[EpisodeWorld, ...]

    def instance_for(self, instance: Instance, episode: int) -> Instance:
        """``instance`` (this lifetime's) as the env plays episode ``episode``
        (1-based): its start grid and its schedule."""
        world = self.episodes[episode - 1]
        return replace(instance, grid=world.grid, events=world.events)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "regime": self.regime,
            "seed": self.seed,
            "height": self.height,
            "width": self.width,
            "max_steps": self.max_steps,
            "g0": list(self.g0),
            "episodes": [e.to_json() for e in self.episodes],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Lifetime:
        """A lifetime from its JSON line, every grid rebuilt (``load`` checks the
        line first: ``validate.check_lifetime_line``)."""
        g0 = validate_grid(data["g0"])
        worlds: list[EpisodeWorld] = []
        previous_end = g0
        for item in data["episodes"]:
            changes = tuple((int(r), int(c)) for r, c in item["changes"])
            grid = flip_cells(previous_end, changes)
            world = EpisodeWorld(grid, changes, tuple(Event.from_json(e) for e in item["events"]))
            worlds.append(world)
            previous_end = world.end_grid
        return cls(
            id=str(data["id"]),
            regime=validate_regime(str(data["regime"])),
            seed=int(data["seed"]),
            height=int(data["height"]),
            width=int(data["width"]),
            max_steps=int(data["max_steps"]),
            g0=g0,
            episodes=tuple(worlds),
        )


def generate_lifetime(instance: Instance, episodes: int = MAX_EPISODES) -> Lifetime:
    """The lifetime built on ``instance`` (module docstring)."""
    regime = get_regime(instance.regime)
    worlds = [EpisodeWorld(instance.grid, differing(instance.g0, instance.grid), tuple(instance.events))]
    for k in range(2, episodes + 1):
        before = worlds[-1].end_grid
        grid, events = regime.draw(before, boundary_rng(instance.seed, regime.stream, k), instance.max_steps)
        worlds.append(EpisodeWorld(grid, differing(before, grid), tuple(events)))
    return Lifetime(
        id=instance.id,
        regime=instance.regime,
        seed=instance.seed,
        height=instance.height,
        width=instance.width,
        max_steps=instance.max_steps,
        g0=instance.g0,
        episodes=tuple(worlds),
    )


def encode_jsonl(lifetimes: Iterable[Lifetime]) -> bytes:
    lines = [json.dumps(lt.to_json(), separators=(",", ":")) for lt in lifetimes]
    return ("\n".join(lines) + "\n").encode("utf-8")


def generate(
    master_seed: int = dataset.MASTER_SEED, count: int = dataset.DEFAULT_COUNT, height: int = 8, width: int = 8
) -> dict[str, list[Lifetime]]:
    """The lifetimes of every registered regime, on the instances of the same seed and count."""
    sets = dataset.generate(master_seed, count, height, width)
    return {regime: [generate_lifetime(inst) for inst in instances] for regime, instances in sets.items()}


def write(
    out_dir: str | Path,
    master_seed: int = dataset.MASTER_SEED,
    count: int = dataset.DEFAULT_COUNT,
    height: int = 8,
    width: int = 8,
) -> Path:
    """Write the lifetimes of a dataset folder into its ``lifelong/`` sub-folder; returns that."""
    out = Path(out_dir) / LIFETIME_DIR
    out.mkdir(parents=True, exist_ok=True)
    table = {}
    for regime, lifetimes in generate(master_seed, count, height, width).items():
        data = encode_jsonl(lifetimes)
        (out / f"{regime}{dataset.JSONL}").write_bytes(data)
        table[f"{regime}{dataset.JSONL}"] = {"sha256": dataset.sha256(data), "instances": len(lifetimes)}
    manifest = {
        "dataset_version": dataset.DATASET_VERSION,
        "generator_version": LIFETIME_GENERATOR_VERSION,
        "master_seed": master_seed,
        "count": count,
        "height": height,
        "width": width,
        "episodes": MAX_EPISODES,
        "files": table,
    }
    (out / dataset.MANIFEST).write_text(dataset.encode_manifest(manifest), encoding="utf-8")
    return out


def folder(data: str | Path | None) -> Any:
    """The ``lifelong/`` folder of dataset ``data`` (None: the canonical set)."""
    path = dataset.resolve(data) / LIFETIME_DIR
    if not (path / dataset.MANIFEST).is_file():
        raise dataset.DatasetError(
            f"{path}: no lifetimes here; make them with `spatialstale datasets generate --out <folder>`"
        )
    return path


def stored_episodes(where: Any, manifest: dict[str, Any]) -> int:
    """The episodes every lifetime of the folder holds (its manifest's ``episodes``), checked in range."""
    value = manifest.get("episodes")
    if type(value) is not int or not 1 <= value <= MAX_EPISODES:
        raise dataset.DatasetError(
            f"{where / dataset.MANIFEST}: episodes: must be an integer in 1..{MAX_EPISODES}, got {str(value)[:30]!r}"
        )
    return value


def load(data: str | Path | None, regime: str, episodes: int | None = None) -> list[Lifetime]:
    """The verified lifetimes of one regime: the checksum first, then every line
    checked (``validate.check_lifetime_line``) and matched to the instance on
    the same line of the instance file, as many as both manifests list; with
    ``episodes`` (a run's), the lifetimes must hold at least that many. Every
    problem is a ``DatasetError`` naming the file, the line and the field,
    raised before any model call."""
    validate_regime(regime)
    where = folder(data)
    manifest = dataset.read_manifest(where)
    stored = stored_episodes(where, manifest)
    if episodes is not None and episodes > stored:
        raise dataset.DatasetError(
            f"{where / dataset.MANIFEST}: episodes: the lifetimes hold {stored} episodes each; "
            f"the run asks for {episodes} (-T episodes)"
        )
    name = dataset.regime_file(where, manifest, regime)
    path = where / name
    try:
        text = dataset.verify_file(where, name, manifest).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise dataset.DatasetError(f"{path}: not UTF-8 text ({exc})") from exc
    instances = dataset.load(data, regime)
    height, width = manifest["height"], manifest["width"]
    lifetimes: list[Lifetime] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise dataset.DatasetError(f"{path}:{lineno}: (line): not a JSON object ({str(exc)[:80]})") from None
        try:
            check_lifetime_line(raw, regime, height, width, stored)
            life = Lifetime.from_json(raw)
            _matches(life, instances[len(lifetimes)] if len(lifetimes) < len(instances) else None)
        except LineError as exc:
            raise dataset.DatasetError(f"{path}:{lineno}: {exc}") from None
        lifetimes.append(life)
    listed = manifest["files"][name]["instances"]
    if len(lifetimes) != listed:
        raise dataset.DatasetError(
            f"{path}: holds {len(lifetimes)} lifetimes; {dataset.MANIFEST} (files.{name}) lists {listed}"
        )
    if len(lifetimes) != len(instances):
        raise dataset.DatasetError(f"{path}: holds {len(lifetimes)} lifetimes for {len(instances)} instances")
    return lifetimes


def _matches(life: Lifetime, instance: Instance | None) -> None:
    """A lifetime is built on the instance of its line: the same id, seed, budget
    and ``g0``, and its first episode is the instance's own grid and schedule."""
    if instance is None:
        raise LineError("id", f"{life.id!r}: a lifetime past the instance file's last line")
    if life.id != instance.id:
        raise LineError("id", f"{life.id!r}, but this line's instance is {instance.id!r} (one lifetime per instance, "
                        "in the instance file's order)")  # fmt: skip
    for name in ("seed", "max_steps", "g0"):
        if getattr(life, name) != getattr(instance, name):
            raise LineError(name, f"is not that of instance {instance.id}")
    first = life.episodes[0]
    if first.grid != instance.grid:
        raise LineError("episodes[0].changes", f"do not give instance {instance.id}'s grid")
    if first.events != tuple(instance.events):
        raise LineError("episodes[0].events", f"are not instance {instance.id}'s schedule")


#: The task metadata key of the SHA-256 of the lifetime file a run read (``content_sha256``).
DIGEST_KEY = "lifetimes_sha256"


def content_sha256(data: str | Path | None, regime: str) -> str:
    """The SHA-256 of the JSONL text of ``regime``'s lifetime file, as its
    manifest lists it (``load`` reads only a file that matches it)."""
    where = folder(data)
    manifest = dataset.read_manifest(where)
    return str(manifest["files"][dataset.regime_file(where, manifest, regime)]["sha256"])


def verify(data: str | Path | None) -> dict[str, int]:
    """Check every lifetime file against its manifest and that it regenerates
    byte for byte; lifetimes per file. Raises DatasetError on a mismatch."""
    where = folder(data)
    manifest = dataset.read_manifest(where)
    made = (int(manifest[k]) for k in ("master_seed", "count", "height", "width"))
    sets = generate(*made)
    counts = {}
    for name in manifest["files"]:
        stored = dataset.verify_file(where, name, manifest)
        regime = dataset.regime_of(name)
        if regime not in sets or encode_jsonl(sets[regime]) != stored:
            raise dataset.DatasetError(f"{where / name}: does not regenerate byte for byte from the manifest")
        counts[name] = len(sets[regime])
    return counts
