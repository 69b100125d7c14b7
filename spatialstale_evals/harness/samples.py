"""What a task runs on as Inspect samples (``SampleSet``: the benchmark's
instances, ``InstanceSet``; lifelong's lifetimes subclass it too), how a
solver finds a sample's own, and the sample's typed store (``SampleState``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import TaskState
from inspect_ai.util import StoreModel

from spatialstale_evals.harness.loggable import record_replacements
from spatialstale_evals.harness.prompts import PROMPT_VERSION, SAMPLE_INPUT
from spatialstale_evals.world import dataset as world_dataset
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.regimes import validate_regime

#: (instance, the sample's parameters) -> the sample's (input, target) as
#: ``inspect view`` shows them: a summary of what the model is asked, with the
#: lake as the agent first sees it, and the truth in a line. Never sent to a
#: model. Each family's is its ``explain.sample_text``, handed over by its task.
SampleText = Callable[[Instance, Mapping[str, Any]], tuple[str, str]]


def load_instances(dataset: str | Path | None, regime: str, size: str | None = None) -> list[Instance]:
    """Verified instances (checksums checked) of one regime, of ``size`` (the
    dataset's folder of that size: ``world.dataset.resolve``)."""
    validate_regime(regime)
    return world_dataset.load(dataset, regime, size)


class Sampled(Protocol):
    """What a sample is made of (an instance, a lifetime): its identity."""

    @property
    def id(self) -> str: ...
    @property
    def regime(self) -> str: ...
    @property
    def seed(self) -> int: ...


Item = TypeVar("Item", bound=Sampled)


def folder_name(dataset: str | Path | None) -> str:
    """A sample set's name starts with its dataset folder's (the canonical set's version without one)."""
    return Path(dataset).name if dataset is not None else world_dataset.DATASET_VERSION


@dataclass(frozen=True, eq=False)
class SampleSet(Generic[Item]):
    """What a task runs on, handed to its solver by id.

    Samples carry only the id, not the item: Inspect deep-copies, walks and
    re-serialises sample metadata several times per sample, and an instance
    (9 KB on 8x8) made that the largest part of the harness's own cost
    (docs/performance.md). Inspect logs a solver argument like this one by
    its ``name``. A family's set says what it loads (``load``), which truth
    its samples' metadata show (``truth``) and how they read (its ``samples``).
    """

    name: str
    by_id: Mapping[str, Item]

    @property
    def first(self) -> Item:
        """The first item (every item of a set has the same grid size)."""
        return next(iter(self.by_id.values()))

    def truth(self, item: Item, params: Mapping[str, Any]) -> dict[str, Any]:
        """The truth a sample's metadata shows after the parameters (none by default)."""
        return {}

    def dataset(
        self,
        task: str,
        params: Mapping[str, Any],
        shown: Callable[[Item], tuple[str, str]],
        prompt_version: str = PROMPT_VERSION,
    ) -> MemoryDataset:
        """One sample per item: its input and target ``shown(item)`` (what
        ``inspect view`` shows; the solvers build the model's messages
        themselves), its metadata the item's identity, every parameter, the
        versions and the item's ``truth``."""
        samples = [
            Sample(
                id=item.id,
                input=text[0],
                target=text[1],
                metadata={
                    "instance_id": item.id,
                    "regime": item.regime,
                    "seed": item.seed,
                    **params,
                    "prompt_version": prompt_version,
                    "dataset_version": world_dataset.DATASET_VERSION,
                    **self.truth(item, params),
                },
            )
            for item in self.by_id.values()
            for text in [shown(item)]
        ]
        return MemoryDataset(samples, name=f"spatialstale-{task}")

    def begin(self, state: TaskState) -> Item:
        """The sample's item; also records which episode is running (``SampleState.episode``)."""
        state.store_as(SampleState).episode = [state.sample_id, state.epoch]
        return self.by_id[str(state.metadata["instance_id"])]


@dataclass(frozen=True, eq=False)
class InstanceSet(SampleSet[Instance]):
    """The benchmark's instances a task runs on. The instance itself is
    logged once per sample, in the sample's store (``INSTANCE_KEY``), when
    the solver stops."""

    #: The SHA-256 of the instance file read (``world.dataset.content_sha256``).
    sha256: str = ""

    @classmethod
    def load(cls, dataset: str | Path | None, regime: str, size: str | None = None) -> InstanceSet:
        """The instances of ``regime`` and ``size`` in ``dataset``. A folder of
        one's own asked for at the default size (the paper's 8x8, the tasks'
        default) is read at its own size, whatever it is: a set generated at
        12x12 runs with ``dataset=`` alone.
        The name is the folder's (``spatialstale-v1/L1``), a size sub-folder's
        included (``spatialstale-v1/16x16/L1``): Inspect's task identity
        hashes it, so a folder's own size keeps the name it had before sizes
        existed."""
        if dataset is not None and size == world_dataset.SIZES[0]:
            size = None
        instances = load_instances(dataset, regime, size)
        folder = folder_name(dataset)
        if size is not None and world_dataset.own_size(world_dataset.resolve(dataset)) != size:
            folder += f"/{size}"
        digest = world_dataset.content_sha256(dataset, regime, size)
        return cls(f"{folder}/{regime}", {inst.id: inst for inst in instances}, digest)

    @property
    def size(self) -> str:
        """The grid size of the instances (``16x16``)."""
        return world_dataset.size_name(self.first.height, self.first.width)

    def truth(self, item: Instance, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"windows": window_truth(item)}

    def samples(
        self,
        task: str,
        params: Mapping[str, Any],
        listed: Mapping[str, Any] | None = None,
        text: SampleText | None = None,
    ) -> MemoryDataset:
        """One sample per instance, its metadata holding every parameter. Its
        input and target are ``text`` of the instance (the family's
        ``explain.sample_text``, handed over by its task), the input closed by
        the ``listed`` parameters (default: every parameter; the tasks list
        theirs and the factors set away from their defaults); without
        ``text``, the task, the instance id and those parameters are the input."""
        named = ", ".join(f"{k}={v}" for k, v in (params if listed is None else listed).items())

        def shown(inst: Instance) -> tuple[str, str]:
            if text is not None:
                input_text, target = text(inst, params)
                return f"{input_text}\n\nOptions: {named}", target
            return SAMPLE_INPUT.format(task=task, instance_id=inst.id, params=named), ""

        return self.dataset(task, params, shown)


def window_truth(instance: Instance) -> list[dict[str, Any]]:
    """Ground truth per detection window, as the sample metadata shows it."""
    return [{"step": w.step, "thaw": w.thaw, "freeze": w.freeze} for w in instance.windows]


class SampleState(StoreModel):
    """What every family's solver keeps in the sample's store.

    The suite's per-sample state is typed: one ``StoreModel`` per family
    (``<Family>State`` in the family's ``state.py``), read and written with
    ``TaskState.store_as``; Inspect keys each field ``<Class>:<field>`` in the store.

    Attributes:
        episode: ``[sample id, epoch]`` of the episode being played. A model
            provider cannot otherwise tell which sample it serves through
            Inspect's public API, and the scripted ``random`` agent needs that
            to vary between epochs yet repeat exactly between runs.
        instance_json: The sample's instance: its line of the dataset's JSONL
            (``world.dataset.instance_line``), as text.
    """

    episode: list[Any] | None = None
    instance_json: str | None = None


#: The store keys of ``SampleState``'s fields (how a log shows them).
EPISODE_KEY = "SampleState:episode"
INSTANCE_KEY = "SampleState:instance_json"
#: Where logs of earlier task versions keep the instance.
LEGACY_INSTANCE_KEY = "instance"


def record_instance(state: TaskState, instance: Instance) -> None:
    """Log the instance in the sample's store as one JSON text, byte for byte
    its line in the dataset file (``json.loads`` gives ``Instance.to_json()``).

    Text, not the nested dict: Inspect walks every node of a stored value
    several times per sample (the store and state diffs at the end of each
    span, the realtime buffer, condensing, a depth check), and the instance's
    ~475 nodes were the largest part of the harness's own logging cost; one
    string is one node (README, Performance)."""
    state.store_as(SampleState).instance_json = world_dataset.instance_line(instance)
    record_replacements(state.metadata)


def stored_instance(state: TaskState) -> Instance | None:
    """The instance ``record_instance`` logged in the sample's store (None: not yet logged)."""
    line = state.store_as(SampleState).instance_json
    return Instance.from_json(json.loads(line)) if line else None
