"""Nested SSP systems flattened into one system of components.

The components of an ``ssd:System`` among the elements (recursively) become components of the scenario named
by their path, the names joined with ``/`` (``body/mass``): mechfmu reads ``COMPONENT.VARIABLE`` (result
columns, ``--param``, studies) up to the first dot and variable names hold dots (``flange_a.s``), so a dotted
path would be ambiguous. A nested system's name, or a name within one, holding ``/`` is refused, as is a nested
system named like another element of its system. Connections meeting at a nested
system's ``ssd:Connector`` become one connection from the producing component's output to each consuming
component's input; a system connector that feeds a component but is fed by nothing is refused by name.
A connection with the top system's own connectors (no ``startElement``/``endElement``) is kept as it is
written, so the scenario's checks refuse its unknown component ``''``.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

SSD = "http://ssp-standard.org/SSP1/SystemStructureDescription"
SEPARATOR = "/"

#: an end of a connection: (is a system connector, component or system path, connector)
End = tuple[bool, str, str]


def flatten(system: ET.Element, problems: list[str]
            ) -> tuple[list[tuple[str, ET.Element]], list[tuple[str, str, str, str]]]:
    """The components of ``system`` and its nested systems by path and the connections between components
    (source, output, target, input); the problems found are added to ``problems``."""
    components: list[tuple[str, ET.Element]] = []
    edges: list[tuple[End, End]] = []
    _collect(system, "", components, edges, problems)
    feeds: dict[End, list[End]] = {}
    for start, end in edges:
        feeds.setdefault(start, []).append(end)
    fed = {end for _, end in edges}
    connections = []
    for start, end in edges:
        if not start[0]:
            for target in _consumers(end, feeds, set()):
                connections.append((start[1], start[2], target[1], target[2]))
    for start in dict.fromkeys(s for s, _ in edges if s[0] and s not in fed):
        if any(not e[0] for e in _consumers(start, feeds, set())):
            problems.append(f"connector {start[2]!r} of system {start[1]!r} is fed by nothing: connect an output to "
                            f"it in the system that holds {start[1]!r}")
    return components, connections


def _consumers(end: End, feeds: dict[End, list[End]], seen: set[End]) -> list[End]:
    """The component inputs ``end`` reaches through system connectors (``end`` itself if it is one)."""
    if not end[0]:
        return [end]
    if end in seen:
        return []
    seen.add(end)
    return [target for following in feeds.get(end, []) for target in _consumers(following, feeds, seen)]


def _collect(system: ET.Element, prefix: str, components: list[tuple[str, ET.Element]],
             edges: list[tuple[End, End]], problems: list[str]) -> None:
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
        edges.append((ends[0], ends[1]))
