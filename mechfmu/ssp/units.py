"""Units of SSP parameter values: ``ssc:Unit`` definitions and exact conversion.

A unit is its SI base-unit exponents with a factor and an offset (SSP/FMI ``BaseUnit``):
``value_SI = factor·value + offset``. A value given in one unit converts to another with the same
exponents; different exponents (kg to m) cannot be converted and are refused. The arithmetic is exact
on the decimal text (``fractions.Fraction``) and rounded once, so ``5000`` g is exactly the double
``5.0`` kg and ``0.3`` mm exactly the double ``0.0003`` m: a scenario in other units gives the SI
scenario's results bit for bit. Factors, offsets and values are read by their XML Schema forms in bounded
time (``mechfmu.ssp.xsd_numbers``); a factor must be nonzero as a double; a result beyond the double range is
refused.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mechfmu.ssp.xsd_numbers import exact_decimal, read_integer, to_double

#: SI base units (and rad, as FMI and our components use it), in the order exponents are kept
BASE = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")
SSC = "http://ssp-standard.org/SSP1/SystemStructureCommon"
#: a factor below the smallest subnormal double is zero as a double: no unit
SMALLEST_DOUBLE = Fraction(2) ** -1074


@dataclass(frozen=True)
class UnitDefinition:
    exponents: tuple[int, ...]
    factor: Fraction = Fraction(1)
    offset: Fraction = Fraction(0)


def si_units() -> dict[str, UnitDefinition]:
    """The units our components declare (components/base.py UNITS), all coherent SI (factor 1)."""
    from mechfmu.components.base import UNITS
    return {name: UnitDefinition(tuple(exponents.get(b, 0) for b in BASE)) for name, exponents in UNITS.items()}


def parse_units(parent: ET.Element | None, namespace: str = SSC) -> dict[str, UnitDefinition]:
    """The ``ssc:Unit`` definitions under ``parent`` (an ``ssd:Units`` or ``ssv:Units`` element); with
    ``namespace=""`` the ``Unit`` elements of an FMI modelDescription's ``UnitDefinitions`` (same attributes)."""
    units = {}
    tag = f"{{{namespace}}}" if namespace else ""
    for unit in ([] if parent is None else parent.iterfind(f"{tag}Unit")):
        base = unit.find(f"{tag}BaseUnit")
        attrib = {} if base is None else base.attrib
        name = unit.get("name", "")
        if name in units:
            raise ValueError(f"unit {name!r} is defined twice: which definition is meant is undefined; define it once")
        factor = _base_number(name, attrib, "factor", "1", exact_decimal)
        if abs(factor) < SMALLEST_DOUBLE:
            raise ValueError(f"unit {name!r}: BaseUnit factor = {attrib.get('factor')!r} is zero as a double; "
                             "give a nonzero factor (at least 4.9e-324 in magnitude)")
        units[name] = UnitDefinition(tuple(_base_number(name, attrib, b, "0", read_integer) for b in BASE), factor,
                                     _base_number(name, attrib, "offset", "0", exact_decimal))
    return units


def _base_number(unit: str, attrib: dict[str, str], attribute: str, default: str, read: Callable[[str], Any]) -> Any:
    """``attribute`` of a unit's BaseUnit read by ``read``; ValueError naming the unit, attribute and text."""
    text = attrib.get(attribute, default)
    try:
        return read(text)
    except ValueError as exc:
        what = "an integer exponent" if read is read_integer else "a decimal number"
        raise ValueError(f"unit {unit!r}: BaseUnit {attribute} = {text!r} is not {what} ({exc})") from None


def convert(text: str, unit: str, target: str, defined: dict[str, UnitDefinition]) -> float:
    """The value written as ``text`` in ``unit``, in ``target``; ``defined`` are the file's units
    (our SI units are known too). ValueError says why a conversion does not exist."""
    known = {**si_units(), **defined}
    if unit not in known:
        raise ValueError(f"unit {unit!r} is not defined (no ssc:Unit of that name, not an SI unit we know)")
    if target not in known:
        raise ValueError(f"the parameter's unit {target!r} is not known")
    source, goal = known[unit], known[target]
    if source.exponents != goal.exponents:
        raise ValueError(f"unit {unit!r} cannot be converted to {target!r} (different dimensions)")
    value = exact_decimal(text) * source.factor + source.offset
    return to_double((value - goal.offset) / goal.factor, f"the value in {target!r}")
