"""Connections that change the value they carry: SSP linear transformations and unit conversion.

A connection delivers ``factor·value + offset`` to its input (``Connection.factor``/``offset``; 1 and 0 pass
the value unchanged). Two things set them, each exact on the decimal texts (``fractions.Fraction``) and rounded
once to doubles:

- ``ssc:LinearTransformation factor=".." offset=".."`` on an ``ssd:Connection`` (SSP 1.0; defaults 1 and 0).
  Through a nested system's connectors the transformations of the connections on the way compose:
  ``a2·(a1·x + b1) + b2``.
- Unit conversion: a connection end's unit is its variable's, or, for a variable without one (a signal),
  its ``ssd:Connector``'s declared unit. Two ends in different units of the same dimension convert as SSP
  parameters do (``mechfmu.ssp.units``): ``factor_s·x + offset_s = factor_t·y + offset_t``; different
  dimensions are refused. Units are the SI units our components declare, the FMU's ``UnitDefinitions``
  and the SSD's ``ssd:Units``.

A connection whose ``suppressUnitConversion`` is true delivers its output's number unconverted (its
transformation still applies). A connection with both a transformation and ends in different units is
refused: SSP leaves open whether the transformation works on the converted value, so the file must say it in
one place. Only a ``Real`` connection can be transformed.
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
import zipfile
from fractions import Fraction
from pathlib import Path
from typing import Any

from mechfmu.ssp.constructs import SSD
from mechfmu.ssp.units import SSC, UnitDefinition, parse_units, si_units
from mechfmu.ssp.xsd_numbers import exact_decimal, to_double

#: (factor, offset) exactly
Map = tuple[Fraction, Fraction]
IDENTITY: Map = (Fraction(1), Fraction(0))


def linear_transformation(connection: ET.Element, label: str) -> Map:
    """The ``ssc:LinearTransformation`` of an ``ssd:Connection`` (``IDENTITY`` without one). ValueError naming
    the connection ``label``, the attribute and its text for a factor or offset that is not an xs:double number
    or is beyond the double range, or a factor whose double is zero."""
    transformation = connection.find(f"{{{SSC}}}LinearTransformation")
    if transformation is None:
        return IDENTITY
    found = []
    for attribute, default in (("factor", "1"), ("offset", "0")):
        text = transformation.get(attribute, default)
        try:
            value = exact_decimal(text)
            to_double(value, attribute)
        except ValueError as exc:
            raise ValueError(f"connection {label}: ssc:LinearTransformation {attribute} = {text!r} is not a finite "
                             f"xs:double number ({exc})") from None
        found.append(value)
    if to_double(found[0], "factor") == 0.0:  # 0, or so small (1e-330) that its double is 0
        raise ValueError(f"connection {label}: ssc:LinearTransformation factor = {transformation.get('factor')!r} "
                         "is 0 as a double and would deliver the offset alone whatever the output; give a factor "
                         "whose double is nonzero (at least 5e-324 in size)")
    return found[0], found[1]


def compose(outer: Map, inner: Map) -> Map:
    """``outer(inner(x))`` as one map."""
    return outer[0] * inner[0], outer[0] * inner[1] + outer[1]


def unit_map(source: str, target: str, known: dict[str, UnitDefinition]) -> Map:
    """The map from a value in ``source`` to the same quantity in ``target``. ValueError if a unit is not known
    or the dimensions differ."""
    for unit in (source, target):
        if unit not in known:
            raise ValueError(f"unit {unit!r} is not defined (no ssc:Unit of the SSD, UnitDefinition of the FMU or "
                             "SI unit of that name): define it in ssd:Units")
    s, t = known[source], known[target]
    if s.exponents != t.exponents:
        raise ValueError(f"unit mismatch {source} -> {target} (different dimensions)")
    return s.factor / t.factor, (s.offset - t.offset) / t.factor


def fmu_units(fmu: Path) -> dict[str, UnitDefinition]:
    """The ``UnitDefinitions`` of an FMU's modelDescription, exact on their texts ({} for a file that is not a
    readable FMU: the scenario's checks report that)."""
    try:
        with zipfile.ZipFile(fmu) as archive:
            root = ET.fromstring(archive.read("modelDescription.xml"))
    except (OSError, KeyError, zipfile.BadZipFile, ET.ParseError):
        return {}
    return parse_units(root.find("UnitDefinitions"), namespace="")


def known_units(*definitions: dict[str, UnitDefinition]) -> dict[str, UnitDefinition]:
    """Our SI units, then each of ``definitions`` (later ones win)."""
    known = si_units()
    for defined in definitions:
        known.update(defined)
    return known


def as_doubles(transform: Map, label: str) -> tuple[float, float]:
    """(factor, offset) rounded once to doubles; ValueError naming the connection beyond the double range or for
    a factor whose double is 0 (the transformations on the way compose to a factor too small for a double)."""
    factor = to_double(transform[0], f"the factor of connection {label}")
    if factor == 0.0:
        raise ValueError(f"the factor of connection {label} is {float(transform[0])!r} as a double: the output would "
                         "not reach the input")
    return factor, to_double(transform[1], f"the offset of connection {label}")


def converted(con: Any, kind: str, units: tuple[str | None, str | None], fmus: tuple[Path, Path],
              defined: dict[str, UnitDefinition]) -> tuple[Any, str | None]:
    """``con`` (a ``scenario.Connection`` of variables of type ``kind``) with the conversion between its ends'
    ``units`` (None: no unit, which connects to any) made part of its factor and offset, or ``con`` and the
    problem why not. ``fmus``: the FMUs of its ends (their UnitDefinitions), ``defined``: the SSD's units."""
    transformed = (con.factor, con.offset) != (1.0, 0.0)
    if transformed and kind != "Real":
        return con, f"connection {con}: ssc:LinearTransformation on a {kind} connection; it applies to Real only"
    source, target = units
    if source is None or target is None or source == target or con.suppress_unit_conversion:
        return con, None
    if transformed:
        return con, (f"connection {con}: its ends are in different units ({source} -> {target}) and it has a "
                     "ssc:LinearTransformation; SSP leaves open whether that applies before or after the unit "
                     "conversion: remove the transformation, or give ends in one unit")
    try:
        transform = unit_map(source, target, known_units(fmu_units(fmus[0]), fmu_units(fmus[1]), defined))
        factor, offset = as_doubles(transform, str(con))
    except ValueError as exc:
        return con, f"connection {con}: {exc}"
    return dataclasses.replace(con, factor=factor, offset=offset), None


def write_conversions(system: ET.Element, connections: list[Any]) -> None:
    """In an SSD's top ``system`` (an element tree being exported), every connection between two of its
    components whose ends convert units gets that conversion as its ``ssc:LinearTransformation``, and its end
    connectors lose their declared unit: a tool that applies transformations but not units (libcosim) then
    runs what mechfmu runs, and none converts twice."""
    ssd = f"{{{SSD}}}"
    maps = {(c.source, c.source_variable, c.target, c.target_variable): (c.factor, c.offset) for c in connections}
    components = {e.get("name"): e for e in system.iterfind(f"{ssd}Elements/{ssd}Component")}
    for connection in system.iterfind(f"{ssd}Connections/{ssd}Connection"):
        ends = tuple(connection.get(k, "") for k in ("startElement", "startConnector", "endElement", "endConnector"))
        transform = maps.get(ends)  # type: ignore[arg-type]
        if (transform is None or transform == (1.0, 0.0) or connection.find(f"{{{SSC}}}LinearTransformation")
                is not None):
            continue
        ET.SubElement(connection, f"{{{SSC}}}LinearTransformation", factor=repr(transform[0]),
                      offset=repr(transform[1]))
        for component, name in ((ends[0], ends[1]), (ends[2], ends[3])):
            for connector in components[component].iterfind(f"{ssd}Connectors/{ssd}Connector[@name='{name}']"):
                for declared in connector:
                    declared.attrib.pop("unit", None)
