"""Checking a serialized FMU state before it is applied (``fmi2DeSerializeFMUstate``): it must have the
structure and types of a fresh instance's state, finite numbers, every parameter in its range (an Integer within 32
bits), times that agree with its phase (the native runtime's rules, components/native/runtime.c read_state: before
initialization no accepted time or the start's, after it the last event <= the last accepted point <= the time)
and, for an initialized state, pass the component's own rules; a state that does not is refused with the reason.
The FMU's loader has already checked the blob's checksum (components/native/fmi2_functions.c)."""
from __future__ import annotations

import math

from .base import INT32, Component
from .model_exchange import NO_TIME
from .number_text import number


def _number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _shape_problem(value, reference, path: str) -> str | None:
    """Why ``value`` does not have the structure and types of ``reference`` (None if it has)."""
    if isinstance(reference, dict):
        if not isinstance(value, dict) or set(value) != set(reference):
            return f"{path} must be an object with exactly the keys {sorted(reference)}"
        return next((p for k in reference if (p := _shape_problem(value[k], reference[k], f"{path}.{k}"))), None)
    if isinstance(reference, list):
        if not isinstance(value, list) or len(value) != len(reference):
            return f"{path} must be a list of {len(reference)}"
        return next((p for i, (v, r) in enumerate(zip(value, reference))
                     if (p := _shape_problem(v, r, f"{path}[{i}]"))), None)
    if type(reference) is float:
        return None if _number(value) else f"{path} = {value!r} must be a finite number"
    return None if type(value) is type(reference) else f"{path} = {value!r} must be a {type(reference).__name__}"


def state_problem(component_cls: type[Component], snapshot) -> str | None:
    """Why ``snapshot`` is not a state of ``component_cls`` (None if it is): the keys and types of a
    fresh instance's state, finite numbers, every parameter in its range and, for an initialized
    state, the component's own rules (``Component.set_state`` on a scratch instance)."""
    scratch = component_cls("state check")
    reference = scratch.get_state()
    params = {p.name: p for p in component_cls.parameters}
    for name, p in params.items():  # a parameter's declared type, whatever its default's type
        reference["values"][name] = {"Real": 0.0, "Integer": 0, "Boolean": False, "String": ""}[p.type]
    problem = _shape_problem(snapshot, reference, "state")
    if problem:
        return problem
    for name, value in snapshot["values"].items():
        if name in params:
            if params[name].type == "Integer" and not INT32[0] <= value <= INT32[1]:
                return f"state.values.{name} = {number(value)} is not an FMI Integer (an integer of 32 bits)"
            scratch.check_range(params[name], value)  # raises ComponentError naming it
    accepted, event = snapshot["accepted"]
    time = snapshot["time"]
    if not snapshot["initialized"] and not (accepted == event and (accepted <= NO_TIME or accepted == time)):
        return "a state before initialization with the times of one after it (its phase contradicts its times)"
    if snapshot["initialized"] and not (NO_TIME < accepted and event <= accepted <= time):
        return "an initialized state without the times of one (its phase contradicts its times)"
    scratch.set_state(snapshot)
    return None
