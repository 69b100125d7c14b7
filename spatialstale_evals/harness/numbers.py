"""Bounded integers: how every number in a model's text (or in a prompt a
scripted agent reads back) is read.

Python's ``int()`` refuses a decimal string over 4,300 digits with a
``ValueError`` (and costs time quadratic in the length below that), and a
model in a repetition loop writes such runs: ``"memory_id": "mem_<4400
digits>"``, a cell ``(1,<5000 digits>)``, a confidence of a thousand zeros.
So a number is read only when it has at most ``MAX_DIGITS`` digits (far more
than any cell, id, step, score or count of the suite needs); a longer run is
not a number the parser can use: the item holding it is unreadable and the
family counts it as such (an unknown id, an invalid verdict, an unreadable
answer), exactly as any other unreadable item.

- :data:`NUMBER`: the regex of a bounded number (a longer run does not match,
  not even its first digits).
- :func:`bounded_int`: a string of digits as an int, None past the bound.
- :func:`json_int`: the ``parse_int`` hook of the bounded JSON reader
  (``bounded_json``): a longer integer decodes to :data:`TOO_LONG`, a string
  saying so, which no reader takes for a number, a bool, a claim or an id.
- :func:`bounded_number`: a decoded JSON number as a finite float, None when it
  is not one (a bool, :data:`TOO_LONG`, an int too large for a float, NaN, inf).
"""

from __future__ import annotations

import math
from typing import Any

#: The most digits a number read from a model's text may have.
MAX_DIGITS = 18
#: A non-negative integer of at most ``MAX_DIGITS`` digits, not followed by another digit.
NUMBER = rf"\d{{1,{MAX_DIGITS}}}(?!\d)"


class TooLong(str):
    """A JSON integer with more than ``MAX_DIGITS`` digits, as the bounded reader
    decodes it: a string saying so (so a record holding it still serialises),
    which no reader takes for a number, a bool, a claim or an id."""


TOO_LONG = TooLong(f"<a number over {MAX_DIGITS} digits>")


def bounded_int(text: str) -> int | None:
    """``text`` (an optional sign, then digits) as an int; None when it has more than
    ``MAX_DIGITS`` digits or is not an integer at all."""
    digits = text.strip().lstrip("+-")
    if not 0 < len(digits) <= MAX_DIGITS or not digits.isdigit() or not digits.isascii():
        return None
    return int(text.strip())


def json_int(text: str) -> int | TooLong:
    """The JSON decoder's ``parse_int``: the integer, or ``TOO_LONG`` past ``MAX_DIGITS`` digits."""
    value = bounded_int(text)
    return TOO_LONG if value is None else value


def bounded_number(value: Any) -> float | None:
    """A decoded JSON number as a finite float; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int past float range (only from a caller's own Python value)
        return None
    return number if math.isfinite(number) else None
