"""The matrix's pass-through of Inspect's eval-set options (``runs/options.py``):
each value read by its keyword's type, refusals that name the matrix option to
use, and no abbreviation of the matrix's own options."""

from __future__ import annotations

import pytest

from spatialstale_evals import cli
from spatialstale_evals.runs.options import eval_set_options


@pytest.mark.parametrize(
    "tokens,expected",
    [
        (["--max-connections", "20"], {"max_connections": 20}),
        (["--max-connections=20"], {"max_connections": 20}),
        (["--display", "plain"], {"display": "plain"}),
        (["--system-message", "Answer: JSON only"], {"system_message": "Answer: JSON only"}),
        (["--tags", "a,b"], {"tags": ["a", "b"]}),
        (["--no-fail-on-error"], {"fail_on_error": False}),
        (["--fail-on-error", "0.1"], {"fail_on_error": 0.1}),
        (["--log-images"], {"log_images": True}),
        (["--log-images", "false"], {"log_images": False}),
        (["--temperature", "-1"], {"temperature": -1}),
        (["--seed", "42", "--retry-attempts", "3"], {"seed": 42, "retry_attempts": 3}),
        (["--metadata", "{a: 1}"], {"metadata": {"a": 1}}),
        (["--system-message="], {"system_message": ""}),
    ],
)
def test_each_value_is_read_by_its_type(tokens: list[str], expected: dict) -> None:
    assert eval_set_options(tokens) == expected


@pytest.mark.parametrize(
    "tokens,message",
    [
        (["--display", "fancy"], "must be one of full, conversation"),
        (["--no-display"], "not an option of inspect_ai.eval_set"),
        (["--limit", "3"], "use --seeds"),
        (["--log-dir-allow-dirty"], "always allows"),
        (["--solver", "x"], "the tasks' own solvers"),
        (["--max-connections"], "needs a value"),
        (["--frobnicate", "1"], "not an option"),
        (["-T", "x=1"], "--factor"),
        (["--log-images", "maybe"], "is a flag"),
    ],
)
def test_bad_options_are_errors_naming_what_to_use(tokens: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        eval_set_options(tokens)


def test_matrix_options_are_not_abbreviated(capsys: pytest.CaptureFixture[str]) -> None:
    """``--seed`` is Inspect's generation seed, not ``--seeds``; ``--batch`` its batching, not ``--batch-size``."""
    argv = ["matrix", "--model", "m", "--log-dir", "/nonexistent", "--dry-run", "--tasks", "detect", "--regimes", "L1"]
    assert cli.main([*argv, "--modalities", "text", "--seed", "42"]) == 0
    out = capsys.readouterr().out
    assert "seeds: all" in out and "| detect L1 text | 50 |" in out
    assert cli.main([*argv, "--modalities", "text", "--batch", "100"]) == 0
    assert "audit batch size: 10" in capsys.readouterr().out
    assert cli.main([*argv, "--modalities", "text", "--seed", "forty"]) == 2
    assert "error" in capsys.readouterr().err
