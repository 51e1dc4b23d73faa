"""SSD constructs the loader does not implement are refused by name, never ignored.

A construct that other SSP tools apply and mechfmu would pass over changes the physics without a sign. What
mechfmu applies: nested ``ssd:System`` elements (flattened, ``mechfmu.ssp.systems``), their parameter bindings
(``mechfmu.ssp.system_bindings``), a connection's
``ssc:LinearTransformation`` and unit conversion between connection ends (``mechfmu.ssp.connection_maps``). What it
refuses, each a problem naming the element and saying what to do, in the top system and in nested ones:

- a system by file (a component whose ``type`` is an SSP definition or package): put its components into an
  ``ssd:System`` among the elements; a component of any other ``type`` than an FMU;
- a component's ``implementation`` other than ``any``: mechfmu's master chooses each FMU's interface by the
  coupling algorithm (co-simulation, or Model Exchange under the monolithic master), so a demand for one is not
  honoured;
- an SSD of another version of SSP than 1.0;
- a connection with another transformation (``ssc:MapTransformation``, ``ssc:BooleanMappingTransformation``,
  ``ssc:IntegerMappingTransformation``) or with more than one: convert in the model, or give one
  ``ssc:LinearTransformation``;
- an ``ssd:Connector`` whose declared type (``ssc:Real``, ``ssc:Integer``, ...) is not its variable's, or
  whose declared ``unit`` is not its variable's unit (a variable without a unit, a signal, takes the declared
  one): declare the variable's type and unit, or none.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

SSD = "http://ssp-standard.org/SSP1/SystemStructureDescription"
#: a component ``type`` that is a system, not an FMU (SSP 1.0, 5.3.2)
SYSTEM_TYPES = ("application/x-ssp-definition", "application/x-ssp-package")
#: what an ssd:Connection may hold that changes nothing mechfmu computes
CONNECTION_EXTRAS = ("Annotations", "ConnectionGeometry")
#: the transformation mechfmu applies (``mechfmu.ssp.connection_maps``), at most one per connection
APPLIED_TRANSFORMATION = "LinearTransformation"
#: the component ``type`` of an FMU (SSP 1.0's default)
FMU_TYPE = "application/x-fmu-sharedlibrary"
#: the type elements of an ssd:Connector
CONNECTOR_TYPES = ("Real", "Integer", "Boolean", "String", "Enumeration", "Binary")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _prefixed(element: ET.Element) -> str:
    return ("ssd:" if element.tag.startswith(f"{{{SSD}}}") else "ssc:") + _local(element.tag)


def system_problems(system: ET.Element) -> list[str]:
    """Systems by file, connection transformations and signal dictionaries in ``system`` (the SSD's top
    ssd:System) and its nested systems."""
    problems = []
    elements = system.find(f"{{{SSD}}}Elements")
    for element in elements if elements is not None else ():
        kind = _local(element.tag)
        if kind == "System":
            problems += system_problems(element)
        if kind == "Component":
            names = [c.get("name") for c in element.iterfind(f"{{{SSD}}}Connectors/{{{SSD}}}Connector")]
            twice = sorted({n for n in names if names.count(n) > 1}, key=str)
            if twice:
                problems.append(f"component {element.get('name')!r}: ssd:Connector {', '.join(map(repr, twice))} "
                                "declared twice; declare each once")
        if kind == "Component" and element.get("type") in SYSTEM_TYPES:
            problems.append(f"component {element.get('name')!r} is a system ({element.get('type')}, "
                            f"{element.get('source')!r}), not an FMU: mechfmu does not read systems from files; "
                            "put its components into an ssd:System among the elements")
        elif kind == "Component" and element.get("type", FMU_TYPE) != FMU_TYPE:
            problems.append(f"component {element.get('name')!r} has type {element.get('type')!r}: mechfmu runs FMUs "
                            f"({FMU_TYPE}) only")
        if kind == "Component" and element.get("implementation", "any") != "any":
            problems.append(f"component {element.get('name')!r}: implementation={element.get('implementation')!r} "
                            "is not honoured by mechfmu (its master chooses each FMU's interface by the coupling "
                            "algorithm: co-simulation, or Model Exchange under the monolithic master); remove the "
                            "attribute (any)")
        elif kind == "SignalDictionaryReference":
            problems.append(f"ssd:SignalDictionaryReference {element.get('name')!r} is not read by mechfmu: "
                            "connect the components directly")
    connections = system.find(f"{{{SSD}}}Connections")
    for connection in connections if connections is not None else ():
        applied = [child for child in connection if _local(child.tag) == APPLIED_TRANSFORMATION]
        for child in connection:
            if _local(child.tag) in CONNECTION_EXTRAS or (len(applied) == 1 and child is applied[0]):
                continue
            attributes = ", ".join(f"{k}={v}" for k, v in child.attrib.items())
            problems.append(f"connection {connection.get('startElement')}.{connection.get('startConnector')} -> "
                            f"{connection.get('endElement')}.{connection.get('endConnector')}: {_prefixed(child)}"
                            f"{f' ({attributes})' if attributes else ''} is not applied by mechfmu (the value "
                            "would pass unchanged): give one ssc:LinearTransformation (factor, offset), convert in "
                            "the model, or remove it if the value is to pass as it is")
    return problems


def version_problem(root: ET.Element) -> str | None:
    """Why the SSD ``root`` is not read as SSP 1.0 (its ``version``), None if it is."""
    version = root.get("version", "")
    if version == "1.0" or version.startswith("1.0-"):  # 1.0 and its pre-releases (1.0-beta1) share the schema
        return None
    return (f"the SSD is version {version!r} of SSP; mechfmu reads SSP 1.0 (version=\"1.0\") and would misread "
            "what a later version adds")


def declared_type(connector: ET.Element) -> tuple[str, str | None] | None:
    """The type an ``ssd:Connector`` declares (Real, Integer, ...) and its ``unit``; None if it declares none."""
    declared = next((child for child in connector if _local(child.tag) in CONNECTOR_TYPES), None)
    return None if declared is None else (_local(declared.tag), declared.get("unit"))


def connector_problem(component: str, name: str, declared: tuple[str, str | None], variable: Any,
                      unit: str | None) -> str | None:
    """Why the connector ``name`` of ``component`` declares another type or unit than its ``variable`` has
    (``unit``: the variable's, None for none: then any declared unit is the unit of its values); None if it
    does not."""
    kind, declared_unit = declared
    if kind != variable.type:
        return (f"{component}: connector {name!r} is declared ssc:{kind}, but the variable is a {variable.type}: "
                f"declare ssc:{variable.type}")
    if kind == "Real" and declared_unit is not None and unit is not None and declared_unit != unit:
        return (f"{component}: connector {name!r} is declared in {declared_unit!r}, but the variable is in "
                f"{unit!r} (the FMU's values are in {unit!r} whatever the connector says): declare unit={unit!r} "
                "or no unit; a connection between ends in different units converts them")
    return None
