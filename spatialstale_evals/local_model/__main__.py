"""The launcher: ``python -m spatialstale_evals.local_model --model FILE --port N ...``.

This is ``LAUNCHER`` in ``server.py``, the command :func:`~spatialstale_evals.local_model.server.start`
runs. It serves the GGUF file with llama.cpp's own C++ server from the
prebuilt ``xllamacpp`` wheel (no compiler needed), which has no command line
of its own: ``xllamacpp.Server`` starts the HTTP server in this process,
whose main thread then waits for a signal. SIGTERM or SIGKILL end it (no
handler: nothing here needs cleaning up); no state is kept here (``server.py`` records the PID).

The server renders prompts with the model's own chat template (jinja). Tool
calls are not the server's business: SmolLM2's template has no tool syntax,
so llama.cpp ignores ``tools``; the Inspect provider (``provider.py``) asks
for them with a grammar instead.
"""

from __future__ import annotations

import argparse
import signal
import sys


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m spatialstale_evals.local_model", description=__doc__)
    parser.add_argument("--model", required=True, help="the GGUF file")
    parser.add_argument("--alias", required=True, help="the model id /v1/models lists")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, required=True, help="context window in tokens")
    parser.add_argument("--threads", type=int, required=True, help="threads for prompt and generation")
    return parser.parse_args(argv)


def serve(argv: list[str] | None = None) -> None:
    """Start llama.cpp's server on ``--host``:``--port`` and wait for a signal."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.n_ctx
    params.n_parallel = 1  # one slot: one request at a time, as the quickstart sends them
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.use_jinja = True  # the model's own chat template
    params.ui = False  # no web UI: an API for Inspect only
    server = xllamacpp.Server(params)
    print(f"serving {args.model} as {args.alias} at {server.listening_address}", flush=True)
    while True:  # SIGTERM and SIGKILL keep their default action: the process ends at once
        signal.pause()


if __name__ == "__main__":
    serve()
