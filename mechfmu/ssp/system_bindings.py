"""Parameter bindings of a system (the ``ssd:ParameterBindings`` of the top ``ssd:System`` or of a nested one),
applied to the components they name.

SSP 1.0 names a system's parameters hierarchically: ``mass.m`` is parameter ``m`` of the system's element
``mass``, ``body.mass.m`` that of component ``mass`` of the nested system ``body``; a binding's ``prefix``
(``mass.``) turns a set written for one component into such names. Values are read as a component's are
(``mechfmu.ssp.parameters.binding_values``: inline or ``.ssv``, prefix, ``.ssm`` mapping, units, types).

Precedence, as SSP 1.0 gives it (``ssd:ParameterBinding``): at one level a later binding over an earlier one; a
binding of an enclosing system over one of its nested systems and over the component's own. So the component's
own bindings are applied first, then those of its systems from the innermost to the top.

A name that resolves to no element is refused by name (SSP would ignore it: a misspelt name would leave the
default in place without a sign), as is a name of a system's connector (mechfmu does not parameterize a
system's connectors: bind the input of the component it feeds) and one that leads into an element without
parameters. A name that reaches a component but none of its variables is refused by the scenario's checks, as
a component's own binding is.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from mechfmu.ssp.elements import ComponentSpec
from mechfmu.ssp.parameters import NS, binding_values
from mechfmu.ssp.systems import SEPARATOR
from mechfmu.ssp.units import UnitDefinition


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def nested_systems(system: ET.Element, path: str = "") -> list[tuple[str, ET.Element]]:
    """``system`` and every system nested in it (depth first, each before those it holds), each with the path
    of its components (``''`` for the top system, ``body/`` for its system ``body``)."""
    found = [(path, system)]
    for element in system.iterfind("ssd:Elements/ssd:System", NS):
        found += nested_systems(element, f"{path}{element.get('name', '')}{SEPARATOR}")
    return found


def resolve(system: ET.Element, name: str) -> tuple[str, str]:
    """The component (its path within ``system``) and variable a hierarchical parameter ``name`` of ``system``
    names; ValueError saying why it names none."""
    elements = [e for e in system.iterfind("ssd:Elements/*", NS) if e.get("name")]
    matches = [e for e in elements if name.startswith(f"{e.get('name')}.")]
    if not matches:
        if name in {c.get("name") for c in system.iterfind("ssd:Connectors/ssd:Connector", NS)}:
            raise ValueError(f"{name!r} is a connector of the system: mechfmu does not give a system's connectors "
                             "values; bind the input of the component it feeds")
        known = ", ".join(repr(e.get("name")) for e in elements) or "none"
        raise ValueError(f"{name!r} names no element of the system (its elements: {known}); a system's parameter "
                         "is named ELEMENT.PARAMETER, e.g. mass.m")
    if len(matches) > 1:
        raise ValueError(f"{name!r} is ambiguous: it may name a parameter of "
                         f"{' or of '.join(repr(e.get('name')) for e in matches)}; rename one of them")
    element = matches[0]
    own, rest = element.get("name", ""), name[len(element.get("name", "")) + 1:]
    kind = _local(element.tag)
    if kind == "Component":
        return own, rest
    if kind == "System":
        inner, variable = resolve(element, rest)
        return f"{own}{SEPARATOR}{inner}", variable
    raise ValueError(f"{name!r} names a parameter of the ssd:{kind} {own!r}, which has none")


def apply_system_bindings(system: ET.Element, folder: Path, units: dict[str, UnitDefinition],
                          components: dict[str, ComponentSpec], unit: Callable[[ComponentSpec, str], str | None],
                          outside: bool = False) -> list[str]:
    """Apply the bindings of ``system`` (the SSD's top ``ssd:System``) and of its nested systems to
    ``components`` (already holding their own bindings' values), innermost system first; the problems found,
    each naming the system and the parameter. ``unit(spec, variable)``: a variable's unit (None: a signal)."""
    problems: list[str] = []
    for path, element in reversed(nested_systems(system)):
        label = f"system {path.rstrip(SEPARATOR) or element.get('name', '')!r}"

        def target(name: str, element: ET.Element = element, path: str = path) -> str | None:
            try:
                owner, variable = resolve(element, name)
            except ValueError:
                return None  # reported below, with the value
            spec = components.get(path + owner)
            return None if spec is None else unit(spec, variable)

        for item in binding_values(element, folder, units, target, outside):
            if isinstance(item, str):
                problems.append(f"{label}: {item}")
                continue
            name, value, kind = item
            try:
                owner, variable = resolve(element, name)
            except ValueError as exc:
                problems.append(f"{label}: parameter binding: {exc}")
                continue
            spec = components.get(path + owner)
            if spec is None:  # a component the loader refused (reported there)
                continue
            spec.parameters[variable], spec.kinds[variable] = value, kind
    return problems
