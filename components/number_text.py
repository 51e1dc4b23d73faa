"""Numbers in messages, as an engineer writes them (standard library only: this package runs inside FMUs).

``number(x)``: a value the user gave (a parameter, a step, a stop time): the shortest text that reads back as
the value, unless that takes more than ``DIGITS`` significant digits (a value computed in floating point,
``-40 * 9.81`` = -392.40000000000003, prints as -392.4); integers as integers (1.0 too: 1), any other value
(a text) as its ``repr``. ``measured(x)``: a time or a measurement the run computed, ``%.6g`` (t = 191.015 s).
``with_unit(text, unit)``: the number and its unit once, none for a dimensionless one ("1" or "")."""
from __future__ import annotations

import math
from typing import Any

#: significant digits a value the user gave prints with at most
DIGITS = 12


def number(x: Any) -> str:
    """``x`` as the user would write it (see the module): ``1`` (1 or 1.0), ``0.003``, ``-392.4``, ``1e-09``,
    ``'text'``; a list or tuple of numbers each so (``[0, 0.1, 1]``, ``(1,)``)."""
    if isinstance(x, (list, tuple)):
        inner = ", ".join(number(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return repr(x)
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return repr(x)  # inf, -inf, nan: as Python and the SSD (xs:double's INF aside) write them
    text = repr(x).removesuffix(".0")  # 1, not 1.0
    digits = text.split("e")[0].replace("-", "").replace(".", "").lstrip("0")
    return text if len(digits) <= DIGITS else f"{x:.{DIGITS}g}"


def measured(x: float) -> str:
    """A time or a measurement the run computed: six significant digits."""
    return f"{x:.6g}"


def with_unit(text: str, unit: str | None) -> str:
    """``text`` and its ``unit`` once ("0.5 m"), the number alone where the unit is none ("1" or "")."""
    return f"{text} {unit}" if unit and unit != "1" else text
