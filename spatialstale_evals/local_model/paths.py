"""Where the local model keeps its files: ``$SPATIALSTALE_STATE_DIR``
(default ``~/.cache/spatialstale``), for the server's state and output
(``server.py``) and the fetched weights (``weights.py``)."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """``$SPATIALSTALE_STATE_DIR``, default ``~/.cache/spatialstale`` (created if missing)."""
    folder = Path(os.environ.get("SPATIALSTALE_STATE_DIR") or Path.home() / ".cache" / "spatialstale")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
