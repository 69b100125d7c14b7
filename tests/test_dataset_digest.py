"""Every log records the content digest of the data it ran on, and the report
groups runs by it (issue 37): runs on one content are pooled whatever folder
they read it from, runs on different contents never are, and a non-canonical
content is labelled. (A 2-instance set generated into a folder named like the
canonical one was reported as ``spatialstale-v1`` and pooled with it.)"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from spatialstale_evals import cli
from spatialstale_evals.analysis import logs
from spatialstale_evals.detect import detect
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.world import dataset

CANON = Path(str(dataset.CANONICAL_DIR))
MODEL = "spatialstale/memory"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A copy of the canonical 8x8 set (same contents, another path) and a
    2-instance set generated into a folder named like the canonical one."""
    root = tmp_path_factory.mktemp("sets")
    same = root / "copy"
    same.mkdir()
    for name in ("MANIFEST.json", "L1.jsonl"):
        shutil.copy(CANON / name, same / name)
    other = root / "elsewhere" / dataset.DATASET_VERSION
    assert cli.main(["datasets", "generate", "--out", str(other), "--count", "2"]) == 0
    return {"same": same, "other": other}


def test_logs_record_the_sha256_of_the_files_read(tmp_path: Path, folders: dict[str, Path]) -> None:
    (canonical, other) = inspect_eval(
        [detect(regime="L1"), detect(regime="L1", dataset=str(folders["other"]))],
        model=MODEL, limit=1, display="none", log_dir=str(tmp_path), log_realtime=False,
    )  # fmt: skip
    assert canonical.eval.metadata["dataset_sha256"] == sha256(CANON / "L1.jsonl")
    assert other.eval.metadata["dataset_sha256"] == sha256(folders["other"] / "L1.jsonl")
    (life,) = inspect_eval(lifelong(regime="L2", episodes=1), model="spatialstale/diligent", limit=1,
                           display="none", log_dir=str(tmp_path / "life"), log_realtime=False)  # fmt: skip
    assert life.eval.metadata["dataset_sha256"] == sha256(CANON / "L2.jsonl")
    assert life.eval.metadata["lifetimes_sha256"] == sha256(CANON / "lifelong" / "L2.jsonl")


def test_the_report_pools_one_content_and_keeps_other_contents_apart(tmp_path: Path, folders) -> None:
    inspect_eval(
        [
            detect(regime="L1"),
            detect(regime="L1", dataset=str(folders["same"])),
            detect(regime="L1", dataset=str(folders["other"])),
        ],
        model=MODEL, limit=2, display="none", log_dir=str(tmp_path), log_realtime=False,
    )  # fmt: skip
    loaded = logs.load(tmp_path)
    by_config = loaded.detect.groupby("config")["instance_id"].apply(sorted).to_dict()
    digest = sha256(folders["other"] / "L1.jsonl")
    label = f"dataset=sha256:{digest[:12]} (not canonical)"
    # the canonical run and the run on a copy of it are one configuration (each instance counted once)
    assert by_config == {"": ["L1-000", "L1-001"], label: ["L1-000", "L1-001"]}
    assert len({k for k in loaded.evals["key"]}) == 2
