"""Parameter overrides: ``COMPONENT.PARAMETER=VALUE`` from the command line (``--param``), a study, or
``simulate(parameters={"COMPONENT": {"PARAMETER": value}})``, typed and range-checked as the SSD's
bound values are (``mechfmu.ssp.scenario``): a text from the command line or a study is read as the
variable's declared type (Real, Integer, Boolean: true/false/1/0, String), a Python value must be of
it (``coerce``), a Real must be finite and lie in [min, max]; an
unknown component or parameter is refused with the valid names listed; one of our components is then checked as
it would initialize with its values (``initialization_problem``: a table's rows, a user function's syntax). Every
problem is reported at once, as a ``ScenarioError``, before anything runs.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from mechfmu.components.base import ComponentError, coerce
from mechfmu.fmu.declarations import component_class
from mechfmu.fmu.locations import fmu_backend
from mechfmu.ssp.elements import ComponentSpec
from mechfmu.ssp.parameters import typed, value_problem
from mechfmu.ssp.scenario import Scenario, ScenarioError, component_variables

#: causalities an override may set (an SSD binds parameters and the start values of inputs)
SETTABLE = ("parameter", "input")


def parse_assignments(items: list[str], option: str = "--param") -> dict[str, dict[str, str]]:
    """``["mass.m=2", "stops.useLimitStops=true"]`` -> ``{"mass": {"m": "2"}, "stops": {...}}``: the
    component is the text before the first dot, the value the text after the first ``=``."""
    found: dict[str, dict[str, str]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        component, dot, name = target.strip().partition(".")
        if not sep or not dot or not component or not name or not value.strip():
            raise ValueError(f"{option} {item!r}: use COMPONENT.PARAMETER=VALUE, e.g. {option} mass.m=2.5")
        given = found.setdefault(component, {})
        if name.strip() in given:
            raise ValueError(f"{option} {target.strip()} is given twice ({given[name.strip()]!r} and "
                             f"{value.strip()!r}): give it once")
        given[name.strip()] = value.strip()
    return found


def check_overrides(scenario: Scenario, overrides: dict[str, dict[str, Any]] | None,
                    local: bool = False, texts: bool = False, initialization: bool = True) -> dict[str, dict[str, Any]]:
    """The overrides with typed values; ScenarioError listing every unknown name, mistyped or
    out-of-range value, and (``initialization``) what the component refuses as it initializes. With ``texts``
    (command line, study axes) a text is read as the parameter's type; otherwise a value must already be of it
    (``True`` for a Boolean, not ``"true"``)."""
    problems: list[str] = []
    checked: dict[str, dict[str, Any]] = {}
    for component, values in _split_at_components(scenario, overrides or {}).items():
        spec = scenario.components.get(component)
        if spec is None:
            problems.append(f"unknown component {component!r}; the scenario's components are "
                            f"{', '.join(sorted(scenario.components))}")
            continue
        try:
            variables = component_variables(spec, local)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        settable = sorted(n for n, v in variables.items() if v.causality == "parameter")
        for name, value in values.items():
            variable = variables.get(name)
            if variable is None or variable.causality not in SETTABLE:
                what = "unknown parameter" if variable is None else f"{variable.causality} (not settable)"
                problems.append(f"{component}.{name}: {what}; the parameters of {component} are "
                                f"{', '.join(settable)}")
                continue
            if isinstance(value, bool) and variable.type == "Real":
                problems.append(f"{component}.{name} = {value!r} is a Boolean, not a {variable.type}")
                continue
            try:
                if texts and isinstance(value, str):
                    value = typed(variable.type, value)
                else:
                    value = coerce(variable.type, value)
            except ValueError as exc:
                problems.append(f"{component}.{name} = {value!r}{':' if texts else ''} {exc}")
                continue
            except (TypeError, OverflowError):
                problems.append(f"{component}.{name} = {value!r} is not a {variable.type}")
                continue
            if variable.type == "Real" and not math.isfinite(value):
                problems.append(f"{component}.{name} = {value!r} must be finite")
                continue
            problem = value_problem(component, name, value, variable, Path(spec.fmu).stem)
            if problem is not None:
                problems.append(problem)
                continue
            checked.setdefault(component, {})[name] = value
    for component, values in checked.items() if initialization else ():
        problem = initialization_problem(scenario.components[component], values, scenario.start_time, local)
        if problem is not None:
            problems.append(problem)
    if problems:
        raise ScenarioError(scenario.folder, problems)
    return checked


def initialization_problem(spec: ComponentSpec, overrides: dict[str, Any], start_time: float,
                           local: bool = False) -> str | None:
    """Why one of our components, given its SSD values and ``overrides``, would refuse to initialize (a table's
    rows, a user function's syntax, parameters checked together), None if it would not or is not ours (its FMU is
    not mechfmu's, unless ``local``). A table read from a file is read where the run is: not checked here."""
    if not local and fmu_backend(spec.fmu) is None:
        return None
    try:
        implementation = component_class(spec.fmu)
    except ValueError:
        return None
    probe = implementation(spec.name)
    try:
        for name, value in {**spec.parameters, **overrides}.items():
            probe.set(name, value)
        if probe.values.get("tableOnFile", False):
            return None
        probe.initialize(start_time)
    except ComponentError as exc:
        return str(exc)
    return None


def _split_at_components(scenario: Scenario, overrides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``overrides`` with each ``COMPONENT.PARAMETER`` split after the longest component name of the scenario it
    starts with: a component whose name holds a dot (``mass.1``, which SSP allows) is found from
    ``mass.1.m=2``, which ``parse_assignments`` split at the first dot."""
    split: dict[str, dict[str, Any]] = {}
    for component, values in overrides.items():
        for name, value in values.items():
            owner = component
            if component not in scenario.components:
                full = f"{component}.{name}"
                known = [c for c in scenario.components if full.startswith(f"{c}.")]
                if known:
                    owner = max(known, key=len)
                    name = full[len(owner) + 1:]
            split.setdefault(owner, {})[name] = value
    return split
