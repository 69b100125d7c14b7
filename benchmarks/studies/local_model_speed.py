"""Tokens per second of the local server's two backends on this machine: the
prebuilt ``xllamacpp`` wheel (what the [local] extra installs) and
``llama-cpp-python`` compiled here (the alternative it was chosen over).

    python benchmarks/studies/local_model_speed.py [--rounds 5] [--threads 2] [--max-tokens 128]

Needs both installed (``pip install xllamacpp "llama-cpp-python[server]"``) and
the SmolLM2 weights (``spatialstale local-model start`` fetches them). Both
servers run at once on 127.0.0.1 with the same GGUF file, context, threads and
``OMP_WAIT_POLICY=PASSIVE`` (an idle server's threads sleep); the rounds
alternate between them, so both see the same load from whatever else runs on
the machine. Each request is the same raw prompt through ``/v1/completions``
(no chat template: the same tokens for both): the system and first user
message of a real navigate step (L2, text, all 64 memory notes), made by the
scripted ``observer`` agent, after a line with a fresh number so that no
prompt cache can reuse an earlier request, for ``--max-tokens`` tokens (on
this prompt SmolLM2 repeats itself to the cap on both; xllamacpp also gets
``ignore_eos``; the printed counts say). Both backends are llama.cpp underneath and
report their own timers per request: xllamacpp in the reply (``timings``),
llama-cpp-python in its server's output (``llama_perf_context_print``);
those give prompt and generation tokens/s, whatever the client's overhead.
The medians over rounds are printed, with each request's wall time.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from spatialstale_evals import local_model
from spatialstale_evals.local_model import server as lm_server

COUNTER = itertools.count(1)


def navigate_prompt() -> str:
    """A real navigate step's prompt, rendered as SmolLM2's chat template renders it."""
    from inspect_ai import eval as inspect_eval

    from spatialstale_evals.navigate import navigate

    with tempfile.TemporaryDirectory() as logs:
        (log,) = inspect_eval(
            navigate(regime="L2", strategy="no_filter", max_steps=1, epochs=1),
            model="spatialstale/observer",
            limit=1,
            log_dir=logs,
            display="none",
        )
        system, user = (log.samples or [])[0].messages[:2]
    turns = [f"<|im_start|>{m.role}\n{m.text}<|im_end|>\n" for m in (system, user)]
    return "".join(turns) + "<|im_start|>assistant\n"


def complete(port: int, prompt: str, max_tokens: int) -> tuple[float, dict]:
    """One ``/v1/completions`` request after a fresh first line; its wall time and answer."""
    body = {"prompt": f"Request {next(COUNTER)}.\n{prompt}", "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": True}  # fmt: skip
    url = f"http://{lm_server.HOST}:{port}/v1/completions"
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    began = time.perf_counter()
    with urllib.request.urlopen(request, timeout=900) as response:
        answer = json.load(response)
    return time.perf_counter() - began, answer


@contextlib.contextmanager
def llama_cpp_python_server(model: Path, port: int, threads: int) -> Iterator[Path]:
    """llama-cpp-python's own server on ``port``, stopped on exit; its output file."""
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", lm_server.HOST,
               "--port", str(port), "--n_ctx", str(local_model.N_CTX), "--n_threads", str(threads),
               "--n_threads_batch", str(threads)]  # fmt: skip
    out = lm_server.state_dir() / f"bench-llama-cpp-python-{port}.log"
    with open(out, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=lm_server.server_env())
    try:
        deadline = time.monotonic() + lm_server.START_TIMEOUT
        while local_model.models_answer(port) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama-cpp-python's server did not start; see {out}")
            time.sleep(0.25)
        yield out
    finally:
        process.terminate()
        process.wait(timeout=30)


PERF = re.compile(r"(prompt eval|\s{8}eval) time =\s+([\d.]+) ms /\s+(\d+) (tokens|runs)")


def llama_cpp_python_timings(output: Path) -> tuple[float, float]:
    """Prompt and generation tokens/s of the last request in llama-cpp-python's server output."""
    found = PERF.findall(output.read_text(encoding="utf-8", errors="replace"))
    (_, p_ms, p_n, _), (_, g_ms, g_n, _) = found[-2:]
    return int(p_n) / float(p_ms) * 1000, (int(g_n) / float(g_ms) * 1000) if float(g_ms) else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()
    prompt = navigate_prompt()
    model = local_model.ensure_gguf()
    rows: dict[str, dict[str, list[float]]] = {}
    lcp_port = lm_server.free_port()
    with (
        local_model.running_server(threads=args.threads) as xl,
        llama_cpp_python_server(model, lcp_port, args.threads) as lcp_output,
    ):
        ports = {"xllamacpp": xl.port, "llama-cpp-python": lcp_port}
        for port in ports.values():  # warm-up: load pages, first-call setup
            complete(port, prompt, 2)
        for _ in range(args.rounds):
            for backend, port in ports.items():
                wall, answer = complete(port, prompt, args.max_tokens)
                if "timings" in answer:
                    pp, tg = answer["timings"]["prompt_per_second"], answer["timings"]["predicted_per_second"]
                else:
                    pp, tg = llama_cpp_python_timings(lcp_output)
                row = rows.setdefault(backend, {"pp": [], "tg": [], "wall": [], "prompt": [], "generated": []})
                for key, value in zip(row, (pp, tg, wall, answer["usage"]["prompt_tokens"],
                                            answer["usage"]["completion_tokens"]), strict=True):  # fmt: skip
                    row[key].append(value)
    print(f"{args.rounds} interleaved rounds, {args.threads} threads, max_tokens {args.max_tokens}, "
          f"load {os.getloadavg()[0]:.1f}:")  # fmt: skip
    for backend, row in rows.items():
        m = {key: statistics.median(values) for key, values in row.items()}
        print(
            f"  {backend}: prompt {m['prompt']:.0f} tokens at {m['pp']:.0f} tokens/s, generation "
            f"{m['generated']:.0f} tokens at {m['tg']:.1f} tokens/s; {m['wall']:.1f} s a request "
            f"(per round: {', '.join(f'{p:.0f}/{g:.0f}' for p, g in zip(row['pp'], row['tg'], strict=True))})"
        )


if __name__ == "__main__":
    main()
