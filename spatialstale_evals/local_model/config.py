"""Where the local model is served and under which names: read by the provider
(the client side) and the server (the process side), so neither imports the other."""

from __future__ import annotations

#: The Inspect model provider of the local server: ``spatialstale-local/<model>``.
PROVIDER = "spatialstale-local"
#: An environment variable naming the server's base URL (overrides the default port's).
BASE_URL_VAR = "SPATIALSTALE_LOCAL_BASE_URL"
HOST = "127.0.0.1"  # loopback only: the server has no API key
DEFAULT_PORT = 8765
MODEL_ALIAS = "smollm2"
#: The Inspect model name of the local model.
INSPECT_MODEL = f"{PROVIDER}/{MODEL_ALIAS}"


def base_url(port: int = DEFAULT_PORT) -> str:
    """The server's OpenAI-compatible base URL on ``port``."""
    return f"http://{HOST}:{port}/v1"
