"""The hosted path's failures in plain words: what ``spatialstale quickstart
--model ...`` prints, instead of a traceback, when the model cannot be reached.

Inspect reports a missing API key or provider package as a
``PrerequisiteError`` whose message holds Rich markup (``[bold]...``), which
its own CLI renders and a plain ``print`` would show raw; and a base URL where
nothing listens makes every call retry, silently, for minutes. The quickstart
checks the URL once with a short timeout before its first task, and prints
either error as one or two lines."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from inspect_ai._util.error import PrerequisiteError  # inspect-evals-lint: ignore[IECQ001] -- not exported publicly

#: Seconds the connection check waits for the server at ``--model-base-url``.
CONNECT_TIMEOUT = 5.0

__all__ = ["CONNECT_TIMEOUT", "HostedError", "PrerequisiteError", "check_reachable", "plain_message"]


class HostedError(Exception):
    """The hosted model cannot be used as given; the message says how to fix it."""


def plain_message(error: PrerequisiteError) -> str:
    """A ``PrerequisiteError``'s message as plain text (its Rich markup rendered away)."""
    from rich.text import Text

    message = error.message
    text = Text.from_markup(message) if isinstance(message, str) else message
    plain = text.plain if isinstance(text, Text) else str(text)
    joined = " ".join(line.strip() for line in plain.strip().splitlines() if line.strip())
    return joined.removeprefix("ERROR:").strip()  # the quickstart says "error:" itself


def check_reachable(base_url: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise :class:`HostedError` unless something accepts a connection at
    ``base_url``'s host and port within ``timeout`` seconds (no request is sent)."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HostedError(f"--model-base-url {base_url!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise HostedError(
            f"nothing answers at {base_url} ({reason}, waited up to {timeout:.0f} s): start the server there, "
            "or pass the address it listens on as --model-base-url"
        ) from None
