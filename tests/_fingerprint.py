"""Fingerprints of scripted runs: what every model call was sent, what every
sample recorded, how it was scored.

``tests/fixtures/fingerprints.json`` holds them for a reference version of
the code (which commit, and why some fields were captured again: CHANGELOG.md);
``tests/test_determinism.py`` runs the same configurations on the current code
and compares, so a change that should alter nothing sent, recorded or scored
is shown to alter nothing. The names
below list what differs from the reference on purpose. The module writes the
fixture (``python tests/_fingerprint.py`` with ``PYTHONPATH`` at a checkout of
the reference) and uses only public task functions and Inspect's own API, so
it runs on the reference and on the current code alike.

Images are hashed by their decoded pixels, not their PNG bytes (which depend
on the zlib build Pillow uses), so the fixture is the same on any machine.

Call and message hashes are taken over content with each run of adjacent text
parts joined into one part by a newline (``_merge_text``), which is how the
prompts send a user message that holds an image; text content is one string,
so only the image ``navigate`` runs are affected (their memory notes before
the caption). Their token counts agree either way: the scripted provider
counts ceil(characters / 4) per part, and the paper palette's caption is 247
characters (3 mod 4), so one part of notes, newline and caption counts what
two parts would (another caption length could move a call's count by one).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from PIL import Image

FIXTURE = Path(__file__).parent / "fixtures" / "fingerprints.json"
LIMIT = 2
REGIMES = ("L1", "L2", "L3")
STRATEGIES = ("no_memory", "no_filter", "self_verify", "omcd", "oracle")
#: Score keys whose meaning differs from the reference on purpose (S and G entries
#: are not in the valid-SAFE control): compared apart, against an independent count.
CHANGED_KEYS = ("valid_safe", "valid_safe_flagged")
#: Sample metadata keys the reference does not record, or records with another
#: value (``prompt_version`` moved as strings were added, while at these settings
#: every call is the reference's, which the call hashes prove); left out of the
#: metadata hash.
ADDED_METADATA = (
    "view_radius",
    "filter_mode",
    "prompt_version",
    # the factors: at their defaults every prompt is the reference's but the
    # navigator's framing line, which ``PAPER_ARGS`` restores
    "memory_style",
    "memory_framing",
    "memory_position",
    "distractors",
    "image_labels",
    "image_palette",
    "image_cell_px",
    "image_marker",
    # structured_output (off: no call changes, the config included; tests/test_structured.py)
    "structured_output",
    # size (8x8 by default: the same instances, the same solver name)
    "size",
)
#: Recorded by the navigate samples and not by the reference's (the audit's
#: ``output`` and ``threshold``; ``binary`` sends every call unchanged, the edit
#: strings are only added); detect samples record them in the reference too, and
#: keep them in the hash.
ADDED_TASK_METADATA = {"navigate": ("output", "threshold")}
#: Count keys the reference lacks (the distractor notes, 0 without them):
#: left out of the hashes and value comparisons, checked to be 0.
ADDED_COUNTS = ("distractors", "distractors_flagged")
#: Keys the reference's navigate audit records lack (how many entries a
#: judgement judged, the distractor counts) and its episode records lack (how
#: the view showed a death's entry, the trajectory map); left out of the
#: score-metadata hash.
ADDED_SCORE_METADATA = ("judged", *ADDED_COUNTS, "death_note", "map")
#: Where a sample's counts are (``harness/score_counts.py``): every count a
#: sample's score value held in the reference, which now shows a few headline
#: values only; the fingerprint's ``value`` is the counts, from there or, in
#: the reference, from the value, and the score-metadata hash leaves them out.
COUNTS = "counts"
#: A navigate score explanation draws the trajectory map after its first
#: paragraph, which the reference's does not; the fingerprint keeps the first paragraph.
EXPLANATION_PARAGRAPHS = 1
#: detect's sample messages are the audit conversation, the reference's a
#: placeholder input: their hash is not compared; instead the fingerprint
#: says whether they are the model calls' own prompts and replies in order.
CHANGED_MESSAGES = ("detect",)
#: detect's score answer, empty in the reference, names the entries flagged
#: (``inspect view``'s ANSWER column): the fingerprint records the reference's
#: None for an answer that names every flagged entry, and the answer itself otherwise.
ADDED_ANSWER = ("detect",)

#: Arguments every fingerprinted navigate run gets where the task has them:
#: the reference's navigator prompt has the "memory may be out of date" line,
#: which the default prompt leaves out (the paper has none) and
#: ``memory_framing="warn"`` sends, so it must send the reference's prompts byte for byte.
PAPER_ARGS = {"navigate": {"memory_framing": "warn"}}


def configurations() -> list[tuple[str, str, dict[str, Any]]]:
    """(name, model, task arguments) of every fingerprinted run: every task,
    regime and strategy, with each scripted agent where it behaves differently."""
    runs: list[tuple[str, str, dict[str, Any]]] = []
    for regime in REGIMES:
        for modality in ("text", "image"):
            for agent in ("observer", "random"):
                runs.append(("detect", agent, {"regime": regime, "modality": modality}))
        runs.append(("detect", "observer", {"regime": regime, "output": "continuous"}))
        runs.append(("detect", "random", {"regime": regime, "batch_size": 64}))
        for strategy in STRATEGIES:
            for agent in ("observer", "memory", "random"):
                runs.append(("navigate", agent, {"regime": regime, "strategy": strategy, "epochs": 1}))
            runs.append(
                ("navigate", "memory", {"regime": regime, "strategy": strategy, "modality": "image", "epochs": 1})
            )
    runs.append(("navigate", "random", {"regime": "L3", "strategy": "omcd", "epochs": 2, "history": 2}))
    runs.append(("navigate", "memory", {"regime": "L2", "strategy": "no_filter", "max_steps": 6, "epochs": 1}))
    return runs


def key(family: str, model: str, args: dict[str, Any]) -> str:
    return f"{family} {model} " + " ".join(f"{k}={v}" for k, v in sorted(args.items()))


def _pixels(uri: str) -> str:
    img = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    return f"image:{img.mode}:{img.size}:{hashlib.sha256(img.tobytes()).hexdigest()}"


def merged_parts(family: str, args: dict[str, Any]) -> bool:
    """Whether a run's prompts hold a run of adjacent text parts in the
    reference (the image navigator's notes and caption; ``no_memory`` has no notes)."""
    return family == "navigate" and args.get("modality") == "image" and args.get("strategy") != "no_memory"


def _merge_text(parts: list[Any]) -> list[Any]:
    """A message's content parts with each run of adjacent text parts as one,
    joined by a newline (what the prompts send)."""
    merged: list[Any] = []
    for part in parts:
        if part.get("type") == "text" and merged and merged[-1].get("type") == "text":
            merged[-1] = {**merged[-1], "text": merged[-1]["text"] + "\n" + part["text"]}
        else:
            merged.append(part)
    return merged


def _is_content(value: list[Any]) -> bool:
    return bool(value) and all(isinstance(v, dict) and v.get("type") in ("text", "image") for v in value)


def _normalise(value: Any) -> Any:
    """JSON with image data URIs replaced by a hash of their pixels, and
    content lists with adjacent text parts merged (``_merge_text``)."""
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v) for v in (_merge_text(value) if _is_content(value) else value)]
    if isinstance(value, str) and value.startswith("data:image/"):
        return _pixels(value)
    return value


def _drop(value: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {k: _drop(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_drop(v, keys) for v in value]
    return value


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(_normalise(value), sort_keys=True, default=str).encode()).hexdigest()[:16]


def fingerprint(log: Any) -> dict[str, Any]:
    """Per (sample, epoch): hashes of each model call's input and tools, of the
    sample's messages, metadata and score metadata; the score's counts in full."""
    from inspect_ai.log import resolve_sample_attachments

    out: dict[str, Any] = {}
    family = log.eval.task.split("/")[-1]
    added = ADDED_METADATA + ADDED_TASK_METADATA.get(family, ())
    dropped = CHANGED_KEYS + ADDED_SCORE_METADATA + (COUNTS,)
    for sample in log.samples or []:
        s = resolve_sample_attachments(sample, "full")
        events = [e for e in s.events if e.event == "model"]
        calls = [
            digest(
                {
                    "input": [m.model_dump(mode="json", exclude={"id"}) for m in e.input],
                    "tools": [t.model_dump(mode="json") for t in e.tools],
                }
            )
            for e in events
        ]
        (score,) = (s.scores or {}).values()
        flagged = [w["flagged"] for w in (score.metadata or {}).get("windows", [])]
        answer = score.answer
        if family in ADDED_ANSWER and answer is not None and all(e in answer for ids in flagged for e in ids):
            answer = None
        out[f"{s.id}/{s.epoch}"] = {
            "calls": calls,
            "messages": digest([m.model_dump(mode="json", exclude={"id"}) for m in s.messages]),
            "messages_are_calls": _dumps(s.messages) == _dumps(_conversation(events)),
            "metadata": digest(_drop(s.metadata, added)),
            "value": (score.metadata or {}).get(COUNTS, score.value),
            "answer": answer,
            "explanation": "\n\n".join((score.explanation or "").split("\n\n")[:EXPLANATION_PARAGRAPHS]),
            "score_metadata": digest(_drop(score.metadata, dropped)),
            "flagged": flagged,
        }
    return out


def _conversation(events: list[Any]) -> list[Any]:
    """The first call's system message, then each call's last input message and its reply."""
    if not events:
        return []
    return [events[0].input[0], *(m for e in events for m in (e.input[-1], e.output.message))]


def _dumps(messages: list[Any]) -> list[Any]:
    return [m.model_dump(mode="json", exclude={"id"}) for m in messages]


def _supported(task: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The ``args`` the task function has (the reference's lacks the newer parameters)."""
    import inspect

    names = inspect.signature(task).parameters
    return {k: v for k, v in args.items() if k in names}


def run_all(log_dir: str | Path) -> dict[str, Any]:
    from inspect_ai import eval as inspect_eval

    from spatialstale_evals.detect import detect
    from spatialstale_evals.navigate import navigate

    factories = {"detect": detect, "navigate": navigate}
    results: dict[str, Any] = {}
    for agent in ("observer", "memory", "random"):
        runs = [(f, m, a) for f, m, a in configurations() if m == agent]
        tasks = [factories[f](**a, **_supported(factories[f], PAPER_ARGS.get(f, {}))) for f, _, a in runs]
        logs = inspect_eval(
            tasks,
            model=f"spatialstale/{agent}",
            model_args={"seed": 3} if agent == "random" else {},
            log_dir=str(Path(log_dir) / agent),
            limit=LIMIT,
            display="none",
            max_tasks=8,
            log_realtime=False,  # the logs are read when finished; the live-viewing buffer costs a third of the CPU
        )
        for (family, model, args), log in zip(runs, logs):
            assert log.status == "success", (family, model, args, log.error)
            metrics = {n: m.value for s in log.results.scores for n, m in s.metrics.items()}
            results[key(family, model, args)] = {"samples": fingerprint(log), "metrics": metrics}
    return results


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        data = run_all(tmp)
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}: {len(data)} runs", file=sys.stderr)
