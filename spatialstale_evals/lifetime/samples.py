"""Lifetimes as Inspect samples, and how the solver finds a sample's lifetime."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import TaskState

from spatialstale_evals.harness.samples import EPISODE_KEY, load_instances
from spatialstale_evals.lifetime.explain import sample_text
from spatialstale_evals.lifetime.prompts import PROMPT_VERSION
from spatialstale_evals.world import dataset as world_dataset
from spatialstale_evals.world import lifetimes
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.lifetimes import Lifetime


@dataclass(frozen=True, eq=False)
class LifetimeSet:
    """The lifetimes a task runs on, with the instances they are built on,
    handed to the solver by id (samples carry only the id, as navigate's do)."""

    name: str
    lives: Mapping[str, Lifetime]
    instances: Mapping[str, Instance]
    #: The SHA-256s of the files read, by task metadata key (``digests``).
    sha256: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, dataset: str | Path | None, regime: str, episodes: int | None = None) -> LifetimeSet:
        """The verified lifetimes of ``regime`` in ``dataset`` (None: the
        canonical set) and their instances, checked line by line to belong
        together (``lifetimes.load``), each holding at least ``episodes``."""
        lives = {lt.id: lt for lt in lifetimes.load(dataset, regime, episodes)}
        instances = {i.id: i for i in load_instances(dataset, regime)}
        folder = Path(dataset).name if dataset is not None else world_dataset.DATASET_VERSION
        digests = {
            world_dataset.DIGEST_KEY: world_dataset.content_sha256(dataset, regime),
            lifetimes.DIGEST_KEY: lifetimes.content_sha256(dataset, regime),
        }
        return cls(f"{folder}/{lifetimes.LIFETIME_DIR}/{regime}", lives, instances, digests)

    def samples(self, params: Mapping[str, Any]) -> MemoryDataset:
        """One sample per lifetime; its input and target what ``inspect view``
        shows (``explain.sample_text``, which says what the parameters mean; the
        solver builds the model's messages itself)."""
        samples = [
            Sample(
                id=life.id,
                input=shown[0],
                target=shown[1],
                metadata={
                    "instance_id": life.id,
                    "regime": life.regime,
                    "seed": life.seed,
                    **params,
                    "prompt_version": PROMPT_VERSION,
                    "dataset_version": world_dataset.DATASET_VERSION,
                    "changes": [len(w.changes) for w in life.episodes[: params["episodes"]]],
                    "events": [len(w.events) for w in life.episodes[: params["episodes"]]],
                },
            )
            for life in self.lives.values()
            for shown in [sample_text(life, self.instances[life.id], params)]
        ]
        return MemoryDataset(samples, name="spatialstale-lifelong")

    def begin(self, state: TaskState) -> tuple[Lifetime, Instance]:
        """The sample's lifetime and instance; records which sample and epoch runs."""
        state.store.set(EPISODE_KEY, [state.sample_id, state.epoch])
        key = str(state.metadata["instance_id"])
        return self.lives[key], self.instances[key]
