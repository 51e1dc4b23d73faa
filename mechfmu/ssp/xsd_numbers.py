"""Numbers of scenario files read by their XML Schema lexical forms, in bounded time and range.

``xs:double``: ``(+|-)?([0-9]+(.[0-9]*)?|.[0-9]+)([Ee](+|-)?[0-9]+)?``, ``(+|-)?INF`` or ``NaN``;
``xs:integer``: ``(+|-)?[0-9]+``; ``xs:boolean``: ``true``, ``false``, ``1``, ``0``. XML whitespace around
the text is collapsed (the schema's whitespace facet); anything else Python would accept (``1_000``,
``infinity``, ``nan``, non-ASCII digits) is refused.

A decimal text is read through its digits and decimal exponent, never by building the exact value of a
huge exponent: a finite value beyond the double range (one that rounds to ±inf, above about ±1.8e308) is an
error, a value below ``10**-TINY_EXPONENT`` is zero (``float`` underflows far earlier, at about 2.5e-324, and
a unit conversion, whose factors lie between 4.9e-324 and 1.8e308, cannot lift it back: 1e-1000 · 1.8e308 /
4.9e-324 < 1e-368), and at most ``MAX_DIGITS`` significant digits are read (the exact decimal value of any
double has fewer than 770).
``exact_decimal`` gives the text's exact value (``fractions.Fraction``), ``read_double`` the double that
``float`` gives for the same text, bit for bit.
"""
from __future__ import annotations

import re
from fractions import Fraction

DOUBLE_FORM = re.compile(r"(?P<sign>[+-]?)(?:(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]*))?|\.(?P<frac2>[0-9]+))"
                         r"(?:[Ee](?P<exp>[+-]?[0-9]+))?")
SPECIAL_DOUBLES = {"INF": float("inf"), "+INF": float("inf"), "-INF": float("-inf"), "NaN": float("nan")}
INTEGER_FORM = re.compile(r"[+-]?[0-9]+")
BOOLEANS = {"true": True, "false": False, "1": True, "0": False}
XML_WHITESPACE = " \t\n\r"
MAX_DIGITS = 1000
TINY_EXPONENT = 1000
MAX_INTEGER_DIGITS = 30
#: the smallest magnitude that rounds to infinity: DBL_MAX plus half its unit in the last place
OVERFLOW = Fraction(2**1024 - 2**970)
DOUBLE_HINT = ("a decimal number such as 1.5e-3 (ASCII digits, no spaces or '_' inside), "
               "or INF, -INF, NaN")


def _decimal(text: str) -> tuple[int, int, int] | str:
    """(sign, significant digits as an integer, decimal exponent of the last digit) of an xs:double
    decimal text, 'INF'/'NaN' for a special one; ValueError for any other text."""
    text = text.strip(XML_WHITESPACE)
    if text in SPECIAL_DOUBLES:
        return text
    match = DOUBLE_FORM.fullmatch(text)
    if match is None:
        raise ValueError(f"not an xs:double: {DOUBLE_HINT}")
    whole = match["int"] or ""
    fraction = (match["frac"] or match["frac2"] or "").rstrip("0")
    digits = (whole + fraction).lstrip("0")
    sign = -1 if match["sign"] == "-" else 1
    if not digits:
        return sign, 0, 0
    stripped = digits.rstrip("0")
    if len(stripped) > MAX_DIGITS:
        raise ValueError(f"more than {MAX_DIGITS} significant digits")
    exponent_text = (match["exp"] or "0").lstrip("+")
    negative = exponent_text.startswith("-")
    exponent_digits = exponent_text.lstrip("-").lstrip("0")
    if len(exponent_digits) > 6:  # far beyond any bound below; int() of it could be slow or refused
        exponent = -10**7 if negative else 10**7
    else:
        exponent = -int(exponent_digits or "0") if negative else int(exponent_digits or "0")
    return sign, int(stripped), exponent - len(fraction) + len(digits) - len(stripped)


def _too_large() -> ValueError:
    return ValueError("beyond the range of a double (about ±1.8e308)")


def exact_decimal(text: str) -> Fraction:
    """The exact value of a finite xs:double decimal text; zero below ``10**-TINY_EXPONENT``. ValueError
    for another text, INF or NaN, or a value beyond the double range."""
    parts = _decimal(text)
    if isinstance(parts, str):
        raise ValueError(f"{parts} is not a finite number")
    sign, digits, exponent = parts
    leading = exponent + len(str(digits)) - 1  # decimal exponent of the leading digit
    if digits == 0 or leading < -TINY_EXPONENT:
        return Fraction(0)
    if leading > 308:
        raise _too_large()
    value = Fraction(sign * digits * 10**exponent) if exponent >= 0 else Fraction(sign * digits, 10**-exponent)
    if abs(value) >= OVERFLOW:
        raise _too_large()
    return value


def read_double(text: str) -> float:
    """The double ``float(text)`` gives for an xs:double text (INF and NaN included). ValueError for
    another text or a finite value beyond the double range."""
    parts = _decimal(text)
    if isinstance(parts, str):
        return SPECIAL_DOUBLES[parts]
    sign, digits, exponent = parts
    leading = exponent + len(str(digits)) - 1
    if digits == 0 or leading < -TINY_EXPONENT:
        return 0.0 * sign
    if leading > 308:
        raise _too_large()
    value = float(text.strip(XML_WHITESPACE))
    if value in (float("inf"), float("-inf")):
        raise _too_large()
    return value


def to_double(value: Fraction, what: str) -> float:
    """``value`` rounded to a double; ValueError naming ``what`` if it is beyond the double range."""
    if abs(value) >= OVERFLOW:
        raise ValueError(f"{what} is beyond the range of a double (about ±1.8e308)")
    return float(value)


def read_integer(text: str) -> int:
    """The value of an xs:integer text of at most ``MAX_INTEGER_DIGITS`` digits; ValueError otherwise."""
    text = text.strip(XML_WHITESPACE)
    if INTEGER_FORM.fullmatch(text) is None:
        raise ValueError("not an xs:integer: ASCII digits with an optional sign, such as -3")
    if len(text.lstrip("+-").lstrip("0")) > MAX_INTEGER_DIGITS:
        raise ValueError(f"more than {MAX_INTEGER_DIGITS} digits")
    return int(text)


def read_boolean(text: str) -> bool:
    """The value of an xs:boolean text (true, false, 1, 0); ValueError otherwise."""
    value = BOOLEANS.get(text.strip(XML_WHITESPACE))
    if value is None:
        raise ValueError("not an xs:boolean: true, false, 1 or 0")
    return value
