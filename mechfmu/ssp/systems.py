"""Nested SSP systems flattened into one system of components.

The components of an ``ssd:System`` among the elements (recursively) become components of the scenario named
by their path, the names joined with ``/`` (``body/mass``): mechfmu reads ``COMPONENT.VARIABLE`` (result
columns, ``--param``, studies) up to the first dot and variable names hold dots (``flange_a.s``), so a dotted
path would be ambiguous. A nested system's name, or a name within one, holding ``/`` is refused, as is a nested
system named like another element of its system. Connections meeting at a nested
system's ``ssd:Connector`` become one connection from the producing component's output to each consuming
component's input; a system connector that feeds a component but is fed by nothing is refused by name.
A connection with the top system's own connectors (no ``startElement``/``endElement``) is kept as it is
written, so the scenario's checks refuse its unknown component ``''``. The ``ssc:LinearTransformation``s of the
connections on the way from an output to an input compose into that connection's (``mechfmu.ssp.connection_maps``);
a nested system's connector is a junction and converts no unit. A connection whose ``suppressUnitConversion`` is
true (xs:boolean: ``true``/``1``) makes the connection through it deliver the output's value unconverted.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from mechfmu.ssp.connection_maps import IDENTITY, Map, as_doubles, compose, linear_transformation

SSD = "http://ssp-standard.org/SSP1/SystemStructureDescription"
SEPARATOR = "/"

#: an end of a connection: (is a system connector, component or system path, connector)
End = tuple[bool, str, str]
#: a way along connections: its transformation and whether unit conversion is suppressed on it
Way = tuple[Map, bool]
BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def flatten(system: ET.Element, problems: list[str]
            ) -> tuple[list[tuple[str, ET.Element]], list[tuple[str, str, str, str, float, float, bool]]]:
    """The components of ``system`` and its nested systems by path and the connections between components
    (source, output, target, input, factor, offset, unit conversion suppressed: the input receives
    factor·output + offset); the problems found are added to ``problems``."""
    components: list[tuple[str, ET.Element]] = []
    edges: list[tuple[End, End, Way]] = []
    _collect(system, "", components, edges, problems)
    feeds: dict[End, list[tuple[End, Way]]] = {}
    for start, end, way in edges:
        feeds.setdefault(start, []).append((end, way))
    fed = {end for _, end, _ in edges}
    connections = []
    for start, end, way in edges:
        if not start[0]:
            for target, (path_map, suppressed) in _consumers(end, way, feeds, set()):
                label = f"{start[1]}.{start[2]} -> {target[1]}.{target[2]}"
                try:
                    connections.append((start[1], start[2], target[1], target[2], *as_doubles(path_map, label),
                                        suppressed))
                except ValueError as exc:
                    problems.append(str(exc))
    for start in dict.fromkeys(s for s, _, _ in edges if s[0] and s not in fed):
        if any(not e[0] for e, _ in _consumers(start, (IDENTITY, False), feeds, set())):
            problems.append(f"connector {start[2]!r} of system {start[1]!r} is fed by nothing: connect an output to "
                            f"it in the system that holds {start[1]!r}")
    return components, connections


def _consumers(end: End, way: Way, feeds: dict[End, list[tuple[End, Way]]], seen: set[End]) -> list[tuple[End, Way]]:
    """The component inputs ``end`` reaches through system connectors (``end`` itself if it is one), each with
    the way there (``way``: that to ``end``): the transformations composed, unit conversion suppressed if any
    connection on it suppresses it."""
    if not end[0]:
        return [(end, way)]
    if end in seen:
        return []
    seen.add(end)
    return [found for following, step in feeds.get(end, [])
            for found in _consumers(following, (compose(step[0], way[0]), step[1] or way[1]), feeds, seen)]


def _collect(system: ET.Element, prefix: str, components: list[tuple[str, ET.Element]],
             edges: list[tuple[End, End, Way]], problems: list[str]) -> None:
    """Add the components and connection ends of ``system`` (path ``prefix``, '' for the top system)."""
    systems = set()
    found = system.find(f"{{{SSD}}}Elements")
    elements = list(found) if found is not None else []
    for element in elements:
        kind, name = element.tag.rsplit("}", 1)[-1], element.get("name", "")
        if SEPARATOR in name and (prefix or kind == "System"):
            problems.append(f"{kind} {name!r} in system {prefix.rstrip(SEPARATOR) or system.get('name')!r}: the name "
                            f"of a nested system or of its element must not hold {SEPARATOR!r} (it joins the names "
                            "of a component's path); rename it")
        if kind == "Component":
            components.append((prefix + name, element))
        elif kind == "System" and name in {e.get("name") for e in elements if e is not element}:
            problems.append(f"ssd:System {prefix + name!r}: another element of its system has its name; rename one")
        elif kind == "System":
            systems.add(name)
            _collect(element, f"{prefix}{name}{SEPARATOR}", components, edges, problems)
    connections = system.find(f"{{{SSD}}}Connections")
    for connection in connections if connections is not None else ():
        ends: list[End] = []
        for side in ("start", "end"):
            owner, connector = connection.get(f"{side}Element", ""), connection.get(f"{side}Connector", "")
            if not owner and prefix:
                ends.append((True, prefix.rstrip(SEPARATOR), connector))
            else:
                ends.append((owner in systems, prefix + owner, connector))
        label = f"{'.'.join(ends[0][1:])} -> {'.'.join(ends[1][1:])}"
        try:
            transform = linear_transformation(connection, label)
        except ValueError as exc:
            problems.append(str(exc))
            transform = IDENTITY
        suppress = connection.get("suppressUnitConversion", "false").strip()
        if suppress not in BOOLEANS:
            problems.append(f"connection {label}: suppressUnitConversion = {suppress!r} is not an xs:boolean "
                            "(true, false, 1 or 0)")
        edges.append((ends[0], ends[1], (transform, BOOLEANS.get(suppress, False))))
