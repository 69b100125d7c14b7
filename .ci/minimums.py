"""The declared lower bound of every direct dependency in pyproject.toml, one
pin a line (``name==version``): what ``.ci/lower-bounds`` installs. Read from
``[project].dependencies`` itself, so a bound changed there is the bound tested."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def minimums(path: Path = PYPROJECT) -> list[str]:
    """``name==version`` for each dependency's ``>=`` bound; an error for one without."""
    pins = []
    for requirement in tomllib.loads(path.read_text(encoding="utf-8"))["project"]["dependencies"]:
        found = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)", requirement)
        if found is None:
            sys.exit(f"{path}: {requirement!r} declares no lower bound")
        pins.append(f"{found.group(1)}=={found.group(2)}")
    return pins


if __name__ == "__main__":
    print("\n".join(minimums()))
