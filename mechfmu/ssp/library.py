"""Typed component classes for writing systems: one class per model of ``mechfmu.components.COMPONENTS``,
``Mass(m=5.0)``, with the model's declared parameters as keyword arguments.

A parameter is checked when it is given, with the checks the FMU makes when the value is set: its name is
declared (else ``TypeError`` naming the valid ones), its value has the declared type (Real, Integer, Boolean,
String) and lies in the declared range (else ``ValueError`` naming model, parameter, value and range). A value
is kept as the declared type reads it (``Mass(m=5)`` holds ``m = 5.0``); parameters not given keep the FMU's
start values and are not written to the scenario. ``help(Mass)`` lists every parameter with unit, start
value and range, and the ports.
"""
from __future__ import annotations

import functools
import inspect
import keyword
from typing import Any, ClassVar

from mechfmu.components import COMPONENTS
from mechfmu.components.base import Component, ComponentError, Param
from mechfmu.ssp.close_names import suggestion, unknown  # noqa: F401 (names of this module too)


def groups(declared: list[str]) -> dict[str, list[str]]:
    """Dotted parameter names by group: ``{"inertia": ["xx", "yy", ...]}`` for ``inertia.xx``, ..."""
    found: dict[str, list[str]] = {}
    for name in declared:
        group, dot, member = name.partition(".")
        if dot:
            found.setdefault(group, []).append(member)
    return found


def expanded(declared: list[str], parameters: dict[str, Any],
             members: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """``parameters`` with each group given as a whole (``position_start={"y": 0.5}``, or every member in
    declared order: ``position_start=(0.0, 0.5, 0.0)``) written as its dotted members, in the order given;
    ``members``: ``groups(declared)``, if known."""
    members = groups(declared) if members is None else members
    flat: dict[str, Any] = {}
    for name, value in parameters.items():
        if name not in members:
            flat[name] = value
            continue
        if isinstance(value, dict):
            given = value
        elif isinstance(value, (tuple, list)) and len(value) == len(members[name]):
            given = dict(zip(members[name], value))
        else:
            raise ValueError(f"{name} = {value!r}: give a dict of its members ({', '.join(members[name])}) or "
                             f"a sequence of {len(members[name])} values")
        for member, member_value in given.items():
            if member not in members[name]:
                raise TypeError(unknown("member", member, name, members[name]))
            flat[f"{name}.{member}"] = member_value
    return flat


def checked_parameters(model: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` of ``model`` as its FMU reads them (declared type), in the order given; raises
    ``TypeError`` for an undeclared name and ``ValueError`` for a value of the wrong type or out of range,
    naming model, parameter and value, also for what the component checks only as it initializes (a table's rows,
parameters checked together; not a file it reads: that at the run). A group of dotted parameters may be given as
a whole (``expanded``)."""
    implementation = COMPONENTS[model]
    declared, kinds, members = _declarations(implementation)
    probe: Component | None = None  # made at the first value: a model without values given needs none
    values = {}
    for name, value in expanded(declared, parameters, members).items():
        if name not in declared:
            raise TypeError(unknown("parameter", name, model, [n for n in declared if "." not in n])
                            + " (and the start values of its inputs)")
        kind = kinds.get(name, "Real")
        if isinstance(value, bool) and kind != "Boolean":  # a bool is an int to Python, not a number to a model
            raise ValueError(f"{model}: {name} = {value!r} must be a number ({kind}), not a Boolean")
        if probe is None:
            probe = implementation(model)
        try:
            probe.set(name, value)
        except ComponentError as exc:
            raise ValueError(str(exc).replace(f"{model} '{model}': ", f"{model}: ", 1)) from None
        values[name] = probe.values[name]
    if probe is not None and not probe.values.get("tableOnFile", False):  # a file is read where the run is
        try:  # what only initialization checks (a table's rows, ...), checked where it is given
            probe.initialize(0.0)
        except ComponentError as exc:
            raise ValueError(str(exc).replace(f"{model} '{model}': ", f"{model}: ", 1)) from None
    return values


@functools.cache
def _declarations(implementation: type[Component]) -> tuple[list[str], dict[str, str], dict[str, list[str]]]:
    """A model's settable names (parameters, then inputs), its parameters' types and its dotted groups
    (``groups``), found once per model (read only)."""
    declared = [p.name for p in implementation.parameters] + [i.name for i in implementation.inputs]
    return declared, {p.name: p.type for p in implementation.parameters}, groups(declared)


def _range(p: Param) -> str:
    low = "" if p.min is None else f"{'>' if p.min_exclusive else '>='} {p.min:g}"
    high = "" if p.max is None else f"<= {p.max:g}"
    return ", ".join(x for x in (low, high) if x)


def describe(implementation: type[Component]) -> str:
    """The class's docstring: what the model is, its parameters (unit, start value, range) and its ports."""
    lines = [f"{implementation.__name__}: {implementation.description}", "",
             f"Source: {implementation.source}", "", "Parameters (keyword arguments):"]
    for p in implementation.parameters:
        limits = _range(p)
        lines.append(f"    {p.name}: {p.type}, {p.unit}, start {p.default!r}{', ' + limits if limits else ''}"
                     f" -- {p.description}")
    lines += [f"    {i.name}: input, {i.unit}, start {i.start!r} -- {i.description}"
              for i in implementation.inputs if "." not in i.name]
    ports = sorted({v.name.split(".")[0] for v in (*implementation.inputs, *implementation.outputs)})
    lines += ["", "Ports (attributes of the placed component): " + ", ".join(ports)]
    return "\n".join(lines)


class ComponentModel:
    """A component of a model, with its parameter values, to be placed in a ``System`` under a name."""

    model: ClassVar[str]
    implementation: ClassVar[type[Component]]

    def __init__(self, **parameters: Any) -> None:
        self.parameters = checked_parameters(self.model, parameters)

    def __repr__(self) -> str:
        given = ", ".join(f"{name}={value!r}" for name, value in self.parameters.items())
        return f"{self.model}({given})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.parameters == self.parameters  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


def _signature(implementation: type[Component]) -> inspect.Signature:
    """Keyword-only parameters with their start values; a dotted group (``inertia.xx``, ...) as one keyword
    whose default is the dict of its members' start values; then the inputs that are not ports (``f_drive``),
    whose start value is the value an unconnected input keeps. A name that is a Python keyword (``lambda``)
    is given as ``**{"lambda": 0.0}``."""
    defaults: dict[str, Any] = {}
    for p in implementation.parameters:
        group, dot, member = p.name.partition(".")
        if dot:
            defaults.setdefault(group, {})[member] = p.default
        else:
            defaults[p.name] = p.default
    defaults.update({i.name: i.start for i in implementation.inputs if "." not in i.name})
    return inspect.Signature([inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
                              for name, default in defaults.items() if not keyword.iskeyword(name)])


def _model_class(name: str, implementation: type[Component]) -> type[ComponentModel]:
    cls = type(name, (ComponentModel,), {"model": name, "implementation": implementation,
                                         "__doc__": describe(implementation), "__module__": __name__})
    cls.__signature__ = _signature(implementation)  # type: ignore[attr-defined]
    return cls


#: every model's class, by model name
MODELS: dict[str, type[ComponentModel]] = {name: _model_class(name, cls) for name, cls in COMPONENTS.items()}


def model_class(name: str) -> type[ComponentModel]:
    """The class of model ``name``; ``ValueError`` naming the valid models if there is none."""
    if name not in MODELS:
        raise ValueError(unknown("model", name, "mechfmu", list(MODELS)))
    return MODELS[name]


def __getattr__(name: str) -> type[ComponentModel]:
    if name in MODELS:
        return MODELS[name]
    raise AttributeError(unknown("model", name, "mechfmu.ssp.library", list(MODELS)))
