"""SSP parameter bindings of a component or a system: inline ``ssd:ParameterValues``, external ``.ssv`` files,
``.ssm`` parameter mappings, typed values and units.

For each ``ssd:ParameterBinding``: the parameter set is inline or the binding's ``source`` (an
``.ssv`` file relative to the SSD; inside an archive too, which is unpacked), never both; a ``prefix`` is
prepended to every name of the set before the names are matched or mapped (SSP 1.0: a set written for one
component, bound at its system with ``prefix="mass."``); an ``ssd:ParameterMapping`` (inline or an ``.ssm``
source) renames parameters and may apply an ``ssc:LinearTransformation`` (factor, offset); an entry's
``suppressUnitConversion`` takes the value as it is, in the parameter's unit. Values are parsed by their
declared type with no coercion, by their XML Schema forms (``mechfmu.ssp.xsd_numbers``: an ``ssv:Boolean``
is true, false, 1 or 0; an ``ssv:Integer`` an integer; an ``ssv:Real`` a decimal, INF or NaN, within the
double range); a parameter given twice in one parameter set is refused; a ``unit`` on an ``ssv:Real`` is
converted to the parameter's unit through the units of the SSD (``ssd:Units``) and the parameter set
(``ssv:Units``), exactly (``mechfmu.ssp.units``). Refused by name: a binding or mapping of another ``type``
than SSP's parameter set and mapping, a ``sourceBase="component"`` (a file inside the FMU), an
``ssv:Enumeration`` or ``ssv:Binary`` value, an ``.ssv``/``.ssm`` file whose root is not a parameter set or
mapping.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from mechfmu.components.base import coerce
from mechfmu.components.number_text import number
from mechfmu.ssp.fmu_sources import confined, leads_outside, source_path
from mechfmu.ssp.units import UnitDefinition, convert, parse_units
from mechfmu.ssp.xsd_numbers import exact_decimal, read_boolean, read_double, read_integer, to_double

NS = {
    "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
    "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
    "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
    "ssm": "http://ssp-standard.org/SSP1/SystemStructureParameterMapping",
}
#: the MIME types SSP 1.0 gives a parameter binding's source and a parameter mapping (the only ones it defines)
SET_TYPE, MAPPING_TYPE = "application/x-ssp-parameter-set", "application/x-ssp-parameter-mapping"
#: a mapping entry: source name -> (target name, linear transformation (factor, offset) or None, unit conversion
#: suppressed)
Entries = dict[str, tuple[str, tuple[Fraction, Fraction] | None, bool]]
BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def typed(kind: str, text: str) -> Any:
    """The value of ``text`` as an SSP ``kind`` (Real, Integer, Boolean, String); ValueError otherwise."""
    if kind == "Real":
        try:
            return read_double(text)
        except ValueError as exc:
            raise ValueError(f"not a Real ({exc})") from None
    if kind == "Integer":
        try:
            return coerce("Integer", read_integer(text))
        except ValueError as exc:
            raise ValueError(f"not an Integer ({exc})") from None
    if kind == "Boolean":
        try:
            return read_boolean(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a Boolean (true, false, 1 or 0)") from None
    return text


def _transform_part(entry: ET.Element, linear: ET.Element, attribute: str, default: str) -> Fraction:
    """A LinearTransformation's factor or offset, exact; ValueError naming the mapping entry and the text."""
    text = linear.get(attribute, default)
    try:
        return exact_decimal(text)
    except ValueError as exc:
        raise ValueError(f"parameter mapping of {entry.get('source')!r}: LinearTransformation {attribute} = "
                         f"{text!r}: {exc}") from None


def source_file(folder: Path, source: str, outside: bool) -> Path:
    """An ``.ssv``/``.ssm`` source (a URI reference, ``mechfmu.ssp.fmu_sources.source_path``) relative to the SSD's
    ``folder``; ValueError if it lies outside that folder (the scenario's, or the unpacked archive) and not
    ``outside``, or has a scheme other than ``file:``."""
    source = source_path(source)
    path = confined(folder, source, outside)
    if path is None:
        raise ValueError(f"{leads_outside(folder, source)}; put "
                         "the file into the scenario's folder (or archive), or, if the scenario is trusted, allow "
                         "sources outside it: outside_sources=True")
    return path


def _sourced(element: ET.Element, what: str, mime: str) -> None:
    """ValueError if a binding or mapping ``element`` has a ``type`` other than ``mime`` or a ``sourceBase`` other
    than the SSD."""
    if element.get("type", mime) != mime:
        raise ValueError(f"{what} of type {element.get('type')!r} is not read by mechfmu (only {mime}, SSP's own)")
    if element.get("sourceBase", "SSD") != "SSD":
        raise ValueError(f"{what} with sourceBase={element.get('sourceBase')!r} (a file inside the component's FMU) "
                         "is not read by mechfmu: put the file beside the SSD and remove sourceBase")


def _mapping(binding: ET.Element, folder: Path, outside: bool) -> Entries:
    """source name -> (target name, linear transformation (factor, offset) or None, unit conversion suppressed)."""
    element = binding.find("ssd:ParameterMapping", NS)
    if element is None:
        return {}
    _sourced(element, "an ssd:ParameterMapping", MAPPING_TYPE)
    source = element.get("source")
    root = (ET.parse(source_file(folder, source, outside)).getroot() if source
            else element.find("ssm:ParameterMapping", NS))
    if root is None or root.tag != f"{{{NS['ssm']}}}ParameterMapping":
        raise ValueError(f"parameter mapping {source or '(inline)'}: no ssm:ParameterMapping")
    entries: Entries = {}
    for entry in root.iterfind("ssm:MappingEntry", NS):
        linear = entry.find("ssc:LinearTransformation", NS)
        others = [c.tag.split("}")[1] for c in entry if c is not linear and c.tag.endswith("Transformation")]
        if others:
            raise ValueError(f"parameter mapping of {entry.get('source')!r}: {others[0]} is not supported "
                             "(only ssc:LinearTransformation)")
        transform = (None if linear is None else (_transform_part(entry, linear, "factor", "1"),
                                                  _transform_part(entry, linear, "offset", "0")))
        source_name, target_name = entry.get("source"), entry.get("target")
        if not source_name or not target_name:
            raise ValueError("an ssm:MappingEntry needs both source and target (SSP 1.0)")
        if source_name in entries:
            raise ValueError(f"parameter mapping: {source_name!r} is mapped twice; keep one ssm:MappingEntry")
        suppress = entry.get("suppressUnitConversion", "false").strip()
        if suppress not in BOOLEANS:
            raise ValueError(f"parameter mapping of {source_name!r}: suppressUnitConversion = {suppress!r} is not an "
                             "xs:boolean (true, false, 1 or 0)")
        entries[source_name] = (target_name, transform, BOOLEANS[suppress])
    return entries


def binding_values(component: ET.Element, folder: Path, ssd_units: dict[str, UnitDefinition],
                   target_unit: Callable[[str], str | None], outside: bool = False
                   ) -> Iterator[tuple[str, Any, str] | str]:
    """(parameter name, value, SSP type) for every bound parameter of ``component``, or a problem text; a
    source file outside the SSD's folder is a problem unless ``outside``."""
    for binding in component.iterfind("ssd:ParameterBindings/ssd:ParameterBinding", NS):
        source = binding.get("source")
        try:
            _sourced(binding, "an ssd:ParameterBinding", SET_TYPE)
            if source and binding.find("ssd:ParameterValues", NS) is not None:
                raise ValueError("it has both a source and inline ssd:ParameterValues (SSP 1.0 allows one): keep one")
            pset = (ET.parse(source_file(folder, source, outside)).getroot() if source
                    else binding.find("ssd:ParameterValues/ssv:ParameterSet", NS))
            mapping = _mapping(binding, folder, outside)
            units = {**ssd_units, **parse_units(None if pset is None else pset.find("ssv:Units", NS))}
        except (OSError, ET.ParseError, ValueError, LookupError) as exc:
            yield f"parameter binding {source or '(inline)'}: {exc}"
            continue
        if pset is None or pset.tag != f"{{{NS['ssv']}}}ParameterSet":
            yield f"parameter binding {source or '(inline)'}: no ssv:ParameterSet"
            continue
        prefix = binding.get("prefix", "")
        given: set[str] = set()
        mapped: dict[str, str] = {}  # the names after prefix and mapping, each with its name in the set
        for param in pset.iterfind("ssv:Parameters/ssv:Parameter", NS):
            name = param.get("name", "")
            if name in given:
                yield (f"parameter binding {source or '(inline)'}: parameter {name!r} is given twice in one "
                       "parameter set; keep one value")
                continue
            given.add(name)
            name = prefix + name
            value = next((v for v in param if v.tag.split("}")[1] in ("Real", "Integer", "Boolean", "String")), None)
            if value is None:
                others = [v.tag.split("}")[1] for v in param if v.tag.startswith(f"{{{NS['ssv']}}}")]
                yield (f"parameter {name!r}: {f'an ssv:{others[0]} value is not applied by mechfmu' if others else ''}"
                       f"{'' if others else 'no value element'} (an ssv:Real, Integer, Boolean or String is)")
                continue
            kind, text, unit = value.tag.split("}")[1], value.get("value", ""), value.get("unit")
            original, (name, transform, suppressed) = name, mapping.get(name, (name, None, False))
            if name in mapped:
                yield (f"parameter binding {source or '(inline)'}: {name!r} is given twice in one parameter set "
                       f"(as {mapped[name]!r} and as {original!r}, through its mapping); keep one value")
                continue
            mapped[name] = original
            try:
                if transform is not None:
                    if kind != "Real":
                        raise ValueError("a linear transformation needs an ssv:Real")
                    text = repr(to_double(transform[0] * exact_decimal(text) + transform[1],
                                          "the linearly transformed value"))
                if unit is not None and kind == "Real" and not suppressed:
                    target = target_unit(name)
                    yield name, (typed("Real", text) if target is None or unit == target
                                 else convert(text, unit, target, units)), kind
                else:
                    yield name, typed(kind, text), kind
            except (ValueError, ZeroDivisionError) as exc:
                yield f"parameter {name} = {text!r}{' ' + unit if unit else ''}: {exc}"


def value_problem(component: str, name: str, value: Any, variable: Any, model: str | None = None) -> str | None:
    """Why ``component.name = value`` is out of the variable's declared [min, max] (None if it is not); for one of
    our components (``model``, its class name) a bound its class declares exclusive (a mass > 0) excludes its own
    value too, as the component would at instantiation."""
    if variable.type != "Real":
        return None
    lo = float(variable.min) if variable.min is not None else None
    hi = float(variable.max) if variable.max is not None else None
    exclusive = lo is not None and value == lo and exclusive_minimum(model, name)
    if (lo is not None and value < lo) or (hi is not None and value > hi) or exclusive:
        unit = f" {variable.unit}" if variable.unit else ""
        return (f"{component}: parameter {name} = {number(value)} is out of range "
                f"{'(' if exclusive_minimum(model, name) else '['}{number(lo) if lo is not None else '-inf'}, "
                f"{number(hi) if hi is not None else 'inf'}]{unit}"
                + (f": it must be > {number(lo)}" if exclusive else ""))
    return None


def exclusive_minimum(model: str | None, name: str) -> bool:
    """Whether our component ``model`` declares the minimum of its parameter ``name`` exclusive."""
    from mechfmu.components import COMPONENTS
    cls = COMPONENTS.get(model or "")
    return cls is not None and any(p.name == name and p.min_exclusive for p in cls.parameters)
