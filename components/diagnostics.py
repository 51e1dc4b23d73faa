"""What a law's arithmetic failure (a math domain error, an overflow, a non-finite output) is blamed on: the
parameter or input of the largest magnitude, when it is beyond what the law can compute with."""
from __future__ import annotations

import math
from typing import Any

from .number_text import number

#: a magnitude whose square, or whose product with another large factor, leaves a double's range (1.8e308)
HUGE = 1e150


def largest_value(values: dict[str, Any]) -> tuple[str, float] | None:
    """The finite Real parameter or input of the largest magnitude, (name, value); None if there is none."""
    found = [(n, v) for n, v in values.items() if type(v) is float and math.isfinite(v)]
    return max(found, key=lambda item: abs(item[1]), default=None)


def too_large(values: dict[str, Any]) -> tuple[str, float] | None:
    """``largest_value`` if its magnitude is at least ``HUGE``, else None."""
    found = largest_value(values)
    return found if found is not None and abs(found[1]) >= HUGE else None


def blame(values: dict[str, Any]) -> str:
    """Why an output is not finite, in words: the value too large to compute with, or the inputs' range."""
    found = too_large(values)
    if found is None:
        return "inputs outside the range the law can handle?"
    return f"{found[0]} = {number(found[1])} is beyond what the law can compute with (magnitude below {number(HUGE)})"
