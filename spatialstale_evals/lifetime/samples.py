"""Lifetimes as Inspect samples, and how the solver finds a sample's lifetime."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset

from spatialstale_evals.harness.samples import SampleSet, folder_name, load_instances
from spatialstale_evals.lifetime.explain import sample_text
from spatialstale_evals.lifetime.prompts import PROMPT_VERSION
from spatialstale_evals.world import dataset as world_dataset
from spatialstale_evals.world import lifetimes
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.lifetimes import Lifetime


@dataclass(frozen=True, eq=False)
class LifetimeSet(SampleSet[Lifetime]):
    """The lifetimes a task runs on (``by_id``), with the instances they are
    built on, handed to the solver by id as navigate's instances are."""

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
        digests = {
            world_dataset.DIGEST_KEY: world_dataset.content_sha256(dataset, regime),
            lifetimes.DIGEST_KEY: lifetimes.content_sha256(dataset, regime),
        }
        return cls(f"{folder_name(dataset)}/{lifetimes.LIFETIME_DIR}/{regime}", lives, instances, digests)

    def truth(self, item: Lifetime, params: Mapping[str, Any]) -> dict[str, Any]:
        """How many cells change and events fire in each episode played."""
        played = item.episodes[: params["episodes"]]
        return {"changes": [len(w.changes) for w in played], "events": [len(w.events) for w in played]}

    def samples(self, params: Mapping[str, Any]) -> MemoryDataset:
        """One sample per lifetime; its input and target what ``inspect view``
        shows (``explain.sample_text``, which says what the parameters mean; the
        solver builds the model's messages itself)."""
        return self.dataset(
            "lifelong", params, lambda life: sample_text(life, self.instances[life.id], params), PROMPT_VERSION
        )

    def instance(self, life: Lifetime) -> Instance:
        """The instance ``life`` is built on."""
        return self.instances[life.id]
