"""What a provider's prompt cache can reuse (docs/performance.md: "Prompt
prefixes"): for every model call, the share of its input that equals the start
of the previous call's input in the same sample, per task, modality and kind
of call.

    python benchmarks/studies/prefix_cache.py [--seeds 10]

The calls are the ones the tasks make (scripted ``observer``, logs read back
with their attachments resolved),
counted as the scripted provider counts tokens (ceil(characters / 4) per text
part, tool calls included, 255 per image; ``harness/tokens.py``). A call's messages are compared part by part in order
(the system message, then each turn's content parts): parts equal to the
previous call's count whole, the first that differs counts its common
character prefix if it is text (an image matches whole or not at all), and
nothing after it does. Tool definitions are left out (the same ``move`` tool
on every navigation step). The first call of a sample has no previous call and
is not counted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Iterator

from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ChatMessage, ContentImage, ContentText

from spatialstale_evals.detect import detect
from spatialstale_evals.harness.tokens import CHARS_PER_TOKEN, IMAGE_TOKENS, count_text_tokens
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe


def parts(messages: list[ChatMessage]) -> Iterator[tuple[str, str]]:
    """(kind, content) of every part, in order: text, an image by its data, and
    an assistant turn's tool calls as their text (as ``count_input_tokens``
    counts them)."""
    for message in messages:
        yield "role", message.role
        if isinstance(message.content, str):
            yield "text", message.content
        else:
            for part in message.content:
                if isinstance(part, ContentText):
                    yield "text", part.text
                elif isinstance(part, ContentImage):
                    yield "image", part.image
        for call in getattr(message, "tool_calls", None) or []:
            yield "text", call.function + json.dumps(call.arguments)


def tokens(kind: str, content: str) -> float:
    """A part's tokens as the scripted provider counts them (``harness/tokens.py``)."""
    return IMAGE_TOKENS if kind == "image" else (0 if kind == "role" else count_text_tokens(content))


def shared(previous: list[ChatMessage], current: list[ChatMessage]) -> tuple[float, float]:
    """(tokens of ``current`` that start like ``previous``, tokens of ``current``)."""
    total = sum(tokens(k, c) for k, c in parts(current))
    same = 0.0
    for (k0, c0), (k1, c1) in zip(parts(previous), parts(current)):
        if (k0, c0) == (k1, c1):
            same += tokens(k1, c1)
            continue
        if k0 == k1 == "text":
            same += _common(c0, c1) // CHARS_PER_TOKEN  # the whole tokens of the common start
        break
    return same, total


def _common(a: str, b: str) -> int:
    """Length of the common start of two strings."""
    return len(os.path.commonprefix([a, b]))


TASKS = {
    ("detect", "text"): lambda: detect(regime="L3"),
    ("detect", "image"): lambda: detect(regime="L3", modality="image"),
    ("navigate", "text"): lambda: navigate(regime="L2", strategy="omcd", epochs=1),
    ("navigate", "image"): lambda: navigate(regime="L2", strategy="omcd", modality="image", epochs=1),
    ("navigate, history=2", "text"): lambda: navigate(regime="L2", strategy="no_filter", history=2, epochs=1),
    ("probe", "text"): lambda: probe(regime="L2"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    print("| task | modality | calls | kind of call | prefix share: mean | median | min |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as log_dir:
        for (name, modality), make in TASKS.items():
            (log,) = inspect_eval(
                make(), model="spatialstale/observer", limit=args.seeds, log_dir=log_dir, display="none"
            )
            shares: dict[str, list[float]] = defaultdict(list)
            for sample in (resolve_sample_attachments(s, "full") for s in log.samples or []):
                calls = [e for e in sample.events if e.event == "model"]
                for before, now in zip(calls, calls[1:]):
                    kind = "navigation step" if now.tools else "audit / question"
                    same, total = shared(before.input, now.input)
                    shares[kind].append(same / total if total else math.nan)
            for kind, values in sorted(shares.items()):
                print(
                    f"| {name} | {modality} | {len(values)} | {kind} | {statistics.mean(values):.0%} "
                    f"| {statistics.median(values):.0%} | {min(values):.0%} |"
                )


if __name__ == "__main__":
    main()
