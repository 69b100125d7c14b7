"""The launcher: ``python -m spatialstale_evals.local_model <llama_cpp.server args>``.

This is ``LAUNCHER`` in ``server.py``, the command :func:`start` runs:
llama-cpp-python's own server (``python -m llama_cpp.server``) with
:data:`~spatialstale_evals.local_model.chat_format.CHAT_FORMAT` registered
first, since chat formats live in a registry inside the server process.
"""

from __future__ import annotations

import sys

from spatialstale_evals.local_model.chat_format import register_chat_format


def serve(argv: list[str] | None = None) -> None:
    """``python -m spatialstale_evals.local_model <llama_cpp.server args>``:
    llama-cpp-python's server with :data:`CHAT_FORMAT` registered."""
    register_chat_format()
    # llama_cpp: llama-cpp-python, see register_chat_format for why the linter needs telling.
    from llama_cpp.server.__main__ import (  # inspect-evals-lint: ignore[IECQ004] -- llama-cpp-python, [local] extra
        main as server_main,
    )

    sys.argv = ["llama_cpp.server", *(sys.argv[1:] if argv is None else argv)]
    server_main()


if __name__ == "__main__":
    serve()
