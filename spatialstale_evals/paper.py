"""Every number the paper reports, in one place
(docs/specification.md#change-regimes and #reference-numbers-from-the-paper).

A leaf module (it imports nothing), so the world (Table 1, for the dataset
statistics and the stale-count bands of the regimes), the tasks and the
report all read the same values. Keyed so that a report row can look up the
value for its model, regime, strategy and modality.

A model matches a paper model when its Inspect name contains the paper model's
key (case-insensitive): ``openai/gpt-4o`` and ``openai/gpt-4o-2024-08-06`` match
``gpt-4o``; ``anthropic/claude-sonnet-4-5`` matches ``claude``. The paper's
numbers are for its own model versions; a match puts them beside ours for
orientation, it does not claim the versions are the same.
"""

from __future__ import annotations

#: Table 1: mean, sd, min and max of the stale ratio over the paper's 50 seeds
#: per regime (8x8; L3 at the end of the episode's schedule).
TABLE1: dict[str, tuple[float, float, float, float]] = {
    "L1": (0.094, 0.011, 0.078, 0.109),
    "L2": (0.141, 0.014, 0.109, 0.172),
    "L3": (0.143, 0.028, 0.078, 0.219),
}
#: The grid the paper's Table 1 (and every reported number) is for.
GRID = (8, 8)
#: The episode's step budget on that grid (docs/specification.md#the-world).
STEP_BUDGET = 50

#: Inspect model name fragment -> the paper's name for it. Order matters: the
#: first fragment found in the (lower-cased) model name wins.
PAPER_MODELS: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "GPT-4o"),
    ("claude", "Claude-Sonnet-4.6"),
    ("qwen", "Qwen3.6-Plus"),
    ("glm", "GLM-5.1"),
    ("internvl3-2b", "InternVL3-2B"),
    ("internvl3-8b", "InternVL3-8B"),
)

#: Navigation, (paper model, strategy, regime, modality) -> (success %, death %).
#: GPT-4o: text, L2, 250 episodes per cell. Claude: L1 (the paper gives no modality;
#: the paper's navigation runs are text).
NAVIGATION: dict[tuple[str, str, str, str], tuple[float, float]] = {
    ("GPT-4o", "no_filter", "L2", "text"): (14.4, 74.4),
    ("GPT-4o", "no_memory", "L2", "text"): (28.8, 28.0),
    ("GPT-4o", "omcd", "L2", "text"): (32.8, 31.6),
    ("Claude-Sonnet-4.6", "no_memory", "L1", "text"): (68.8, 16.0),
    ("Claude-Sonnet-4.6", "omcd", "L1", "text"): (60.0, 20.8),
}

#: OMCD success gain over no_filter in percentage points, (paper model, regime).
#: L1 and L3 are stated in the paper; L2 is the difference of the L2 table
#: values (32.8 - 14.4).
OMCD_GAIN: dict[tuple[str, str], float] = {
    ("GPT-4o", "L1"): 14.4,
    ("GPT-4o", "L2"): 18.4,
    ("GPT-4o", "L3"): 24.4,
}

#: Mean steps by outcome, (paper model, strategy, outcome) -> steps. The paper
#: does not state the regime.
STEPS: dict[tuple[str, str, str], float] = {
    ("GPT-4o", "no_filter", "death"): 8.5,
    ("GPT-4o", "no_filter", "success"): 14.5,
    ("Claude-Sonnet-4.6", "no_filter", "death"): 7.8,
    ("Claude-Sonnet-4.6", "no_filter", "success"): 14.6,
    ("Claude-Sonnet-4.6", "no_memory", "death"): 16.1,
}

#: Detection F1 averaged over regimes, (paper model, modality) -> value as printed.
DETECTION_F1: dict[tuple[str, str], str] = {
    ("GPT-4o", "text"): "> 0.88",
    ("Claude-Sonnet-4.6", "text"): "> 0.88",
    ("Qwen3.6-Plus", "text"): "> 0.88",
    ("GLM-5.1", "text"): "> 0.88",
    ("InternVL3-2B", "text"): "~0.22",
    ("InternVL3-8B", "text"): "~0.31",
    ("Qwen3.6-Plus", "image"): "0.887",
    ("GLM-5.1", "image"): "0.067",
}

#: Vision minus text detection F1, paper model -> difference.
VISION_MINUS_TEXT: dict[str, float] = {
    "Qwen3.6-Plus": -0.011,
    "Claude-Sonnet-4.6": -0.134,
    "GPT-4o": -0.598,
    "GLM-5.1": -0.830,
}

#: Recall by change direction, (paper model, regime, modality, direction) -> (recall, N).
DIRECTION_RECALL: dict[tuple[str, str, str, str], tuple[float, int]] = {
    ("Claude-Sonnet-4.6", "L2", "image", "thaw"): (0.945, 436),
    ("Claude-Sonnet-4.6", "L2", "image", "freeze"): (0.636, 121),
}

ALPHA = 0.001  # the paper's significance level for the paired tests

#: Not this paper: STALE's reported pass rates (Chao et al., 2026, upstream
#: README), judged by upstream's own
#: judge and rubric: shown beside the stale task's table (for a model of the
#: same name) and the probe table, for orientation only. (system, conflict
#: type or ``all``) -> STALE dimension (``dim1``..``dim3``) or ``overall`` (the
#: mean of the six type x dimension cells) -> pass rate. The best plain model
#: is not named in the sources; its report gives only premise resistance.
STALE_REFERENCE: dict[tuple[str, str], dict[str, float]] = {
    ("CUPMem", "T1"): {"dim1": 0.91, "dim2": 0.78, "dim3": 0.32},
    ("CUPMem", "T2"): {"dim1": 0.89, "dim2": 0.75, "dim3": 0.43},
    ("CUPMem", "all"): {"overall": 0.680},
    ("best plain model", "T1"): {"dim2": 0.30},
    ("best plain model", "T2"): {"dim2": 0.14},
    ("best plain model", "all"): {"overall": 0.552},
    ("GPT-4o-mini", "all"): {"overall": 0.087},
}


def stale_system(model: str) -> str | None:
    """The system of STALE's published numbers a given Inspect model name is, if any
    (``openai/gpt-4o-mini`` -> ``GPT-4o-mini``; ``openai/gpt-4o`` -> None)."""
    name = model.lower()
    return next((system for system, _ in STALE_REFERENCE if system.lower() in name), None)


#: Detection cost per instance (GPT-4o, L1, text), batch size B -> (calls, tokens).
DETECTION_COST: dict[int, tuple[int, int]] = {1: (64, 18_700), 10: (7, 3_100), 20: (4, 2_200)}


def paper_model(model: str) -> str | None:
    """The paper's model a given Inspect model name corresponds to, if any."""
    name = model.lower()
    return next((paper for key, paper in PAPER_MODELS if key in name), None)


#: The paper's audited strategy and the raw-memory baseline its gain is
#: measured against: OMCD gain = success(omcd) - success(no_filter); the
#: correlation and path-conditioned analyses use the audited strategy's episodes.
AUDITED, BASELINE = "omcd", "no_filter"
