"""The Model Exchange interface of an FMU (FMI 2.0 §3): what ``ComponentFmu`` adds for it.

A component with a Model Exchange form (components/model_exchange.py; not one with ``co_simulation_only``) is
both a Co-Simulation and a Model Exchange FMU of one ``modelIdentifier``: ``fmi2Instantiate``'s ``fmuType``
selects. The model description gets
- ``<ModelExchange>`` (before ``<CoSimulation>``, as the schema orders) and ``numberOfEventIndicators`` (the
  ``indicator.*`` outputs);
- per continuous state a local variable ``state.<name>`` and its derivative ``der(state.<name>)``
  (``derivative`` = the state's index), appended after the component's own variables, so the Co-Simulation
  variables keep their value references;
- ``ModelStructure/Derivatives`` (each derivative on the states and inputs of ``derivative_knowns``), the
  continuous states each output depends on among its ``Outputs`` dependencies (``output_states``: FMI 2.0 counts
  the states among the knowns, and an empty list means "none"), and the states and derivatives among the
  ``InitialUnknowns``.

The native loader (components/native/fmi2_functions.c) enforces FMI 2.0's Model Exchange state machine and calls the
``me_*`` methods below through one entry: ``me_<what>(values, count)`` returns a list of floats, or None after
logging why the call is refused (a wrong count, a non-finite state, a time before the last accepted point),
which the loader returns as fmi2Error with the instance unchanged.
"""
from __future__ import annotations

import math
from typing import Any
from xml.etree.ElementTree import Element, SubElement

from pythonfmu import Fmi2Causality, Fmi2Initial, Fmi2Variability, Real
from pythonfmu.enums import Fmi2Status

from .partials import state_variable


def state_names(component_cls: Any) -> list[str]:
    return [state_variable(name) for name in component_cls.continuous_states]


#: a state's unit -> its derivative's
RATE_UNITS = {"m": "m/s", "m/s": "m/s2", "rad": "rad/s", "rad/s": "rad/s2", "1": "1/s"}


def state_variables(component_cls: Any) -> list[tuple[str, str, str]]:
    """(name, unit, description) of the state and derivative variables, states first."""
    names = list(zip(component_cls.continuous_states, state_names(component_cls), component_cls.state_units))
    return ([(variable, unit, f"Continuous state {name}") for name, variable, unit in names]
            + [(f"der({variable})", RATE_UNITS[unit], f"Time derivative of {name}") for name, variable, unit in names])


class ModelExchangeFmu:
    """Mixin of ``ComponentFmu`` (which provides ``component``, ``component_class``, ``log`` and
    ``register_variable``)."""

    component: Any
    component_class: Any
    instance_name: str

    def _register_model_exchange(self) -> dict[str, Any]:
        """Register the state and derivative variables; their getters by name (``ComponentFmu._read``)."""
        getters: dict[str, Any] = {}
        if self.component_class.co_simulation_only:
            return getters
        component = self.component
        for index, variable in enumerate(state_names(self.component_class)):
            def state(index: int = index) -> float:
                return component.get_continuous_states()[index]

            def derivative(index: int = index) -> float:
                return component.derivatives()[index]
            texts = {name: (unit, text) for name, unit, text in state_variables(self.component_class)}
            for full, getter in ((variable, state), (f"der({variable})", derivative)):
                unit, text = texts[full]
                self._units[full] = (unit, None)  # type: ignore[attr-defined]
                self.register_variable(Real(full, causality=Fmi2Causality.local,  # type: ignore[attr-defined]
                                            variability=Fmi2Variability.continuous, initial=Fmi2Initial.calculated,
                                            description=text, getter=getter), nested=False)
                getters[full] = getter
        return getters

    def _model_exchange_xml(self, root: Element, index_of: dict[Any, int], structure: Element,
                            initial: Element | None) -> None:
        """The Model Exchange parts of the model description (module docstring)."""
        cls = self.component_class
        if cls.co_simulation_only:
            return
        cosim = root.find("CoSimulation")
        assert cosim is not None
        me = Element("ModelExchange", {k: v for k, v in cosim.attrib.items()
                                       if k in ("modelIdentifier", "canGetAndSetFMUstate", "canSerializeFMUstate",
                                                "needsExecutionTool", "providesDirectionalDerivative")})
        me.set("completedIntegratorStepNotNeeded", "false")
        root.insert(list(root).index(cosim), me)
        root.set("numberOfEventIndicators", str(len(cls.indicator_names())))
        states = state_names(cls)
        variables = {node.get("name"): node for node in root.find("ModelVariables") or ()}
        for variable in states:
            real = variables[f"der({variable})"].find("Real")
            assert real is not None
            real.set("derivative", str(index_of[variable]))
        if not states:
            return
        outputs = structure.find("Outputs")
        for node in outputs if outputs is not None else ():  # an output's states are among its knowns
            name = next(n for n, i in index_of.items() if i == int(node.get("index", "0")))
            given = [int(i) for i in (node.get("dependencies") or "").split()]
            found = sorted(set(given + [index_of[state_variable(s)] for s in cls.output_states().get(name, ())]))
            node.set("dependencies", " ".join(map(str, found)))
            if found:
                node.set("dependenciesKind", " ".join("dependent" for _ in found))
        derivatives = Element("Derivatives")
        for name, variable in zip(cls.continuous_states, states):
            known = sorted(index_of[k] for k in cls.derivative_knowns()[name])
            SubElement(derivatives, "Unknown", index=str(index_of[f"der({variable})"]),
                       dependencies=" ".join(map(str, known)))
        position = 1 if structure.find("Outputs") is not None else 0
        structure.insert(position, derivatives)
        if initial is None:
            initial = SubElement(structure, "InitialUnknowns")
        parameters = [index_of[p.name] for p in cls.parameters]
        for index in sorted([index_of[v] for v in states] + [index_of[f"der({v})"] for v in states]):
            SubElement(initial, "Unknown", index=str(index),
                       dependencies=" ".join(map(str, sorted(parameters + [index_of[i.name] for i in cls.inputs]))))
        ordered = sorted(initial, key=lambda node: int(node.get("index", "0")))
        for node in list(initial):
            initial.remove(node)
        initial.extend(ordered)

    # --- the calls of the native loader: a list of floats, or None (refused, logged) ------------------
    def _refused(self, function: str, problem: Exception | str) -> None:
        # a native component's refusal is logged in the runtime's words, as its native FMU logs it
        self.log(getattr(problem, "logged", "") or f"{self.instance_name}: {function}: {problem}",  # type: ignore
                 Fmi2Status.error)

    def me_open(self, values: list[float], count: int) -> list[float] | None:
        reason = self.component_class.co_simulation_only
        if reason:
            self._refused("fmi2Instantiate", f"{self.component_class.__name__} has no Model Exchange form: {reason}; "
                                             "instantiate it as fmi2CoSimulation")
            return None
        self.component.in_model_exchange = True
        return []

    def _counted(self, function: str, what: str, values: list[float], count: int) -> list[float] | None:
        if count != len(values):
            self._refused(function, f"{what} = {count}, but {self.component_class.__name__} has {len(values)} "
                                    f"({', '.join(self._what(what)) or 'none'})")
            return None
        return values

    def _what(self, what: str) -> list[str]:
        cls = self.component_class
        return cls.indicator_names() if what == "ni" else list(cls.continuous_states)

    def _evaluate(self, function: str, what: str, evaluate: Any, count: int) -> list[float] | None:
        try:
            values = [float(v) for v in evaluate()]
        except Exception as exc:  # a law that fails at these states and inputs: named, never raised
            self._refused(function, exc)
            return None
        if self._counted(function, what, values, count) is None:
            return None
        bad = [n for n, v in zip(self._what(what), values) if not math.isfinite(v)]
        if bad:
            self._refused(function, f"{', '.join(bad)} not finite at t = {self.component.time!r} (states or inputs "
                                    "outside the range the law can handle?)")
            return None
        return values

    def me_set_time(self, values: list[float], count: int) -> list[float] | None:
        try:
            self.component.set_time(values[0])
        except Exception as exc:
            self._refused("fmi2SetTime", exc)
            return None
        return []

    def me_set_states(self, values: list[float], count: int) -> list[float] | None:
        try:
            self.component.set_continuous_states(values)
        except Exception as exc:
            self._refused("fmi2SetContinuousStates", exc)
            return None
        return []

    def me_get_states(self, values: list[float], count: int) -> list[float] | None:
        return self._evaluate("fmi2GetContinuousStates", "nx", self.component.get_continuous_states, count)

    def me_nominals(self, values: list[float], count: int) -> list[float] | None:
        return self._evaluate("fmi2GetNominalsOfContinuousStates", "nx",
                              lambda: [1.0] * len(self.component_class.continuous_states), count)

    def me_derivatives(self, values: list[float], count: int) -> list[float] | None:
        return self._evaluate("fmi2GetDerivatives", "nx", self.component.derivatives, count)

    def me_indicators(self, values: list[float], count: int) -> list[float] | None:
        return self._evaluate("fmi2GetEventIndicators", "ni", self.component.event_indicators, count)

    def me_new_discrete_states(self, values: list[float], count: int) -> list[float] | None:
        """[flags, nextEventTimeDefined, nextEventTime]: the flags 1 valuesOfContinuousStatesChanged plus 2
        newDiscreteStatesNeeded (a native law's own, ``discrete_flags``; a Python component's True: 1)."""
        try:
            changed = self.component.update_discrete_states()
            upcoming = self.component.next_time_event()
        except Exception as exc:
            self._refused("fmi2NewDiscreteStates", exc)
            return None
        flags = float(getattr(self.component, "discrete_flags", 1.0 if changed else 0.0))
        return [flags, 0.0 if upcoming is None else 1.0, 0.0 if upcoming is None else upcoming]

    def directional_derivative(self, values: list[float], count: int) -> list[float] | None:
        """fmi2GetDirectionalDerivative: ``values`` = (nUnknown, nKnown, their value references, the seeds)."""
        nu, nk = int(values[0]), int(values[1])
        names = []
        for reference in values[2:2 + nu + nk]:
            variable = self.vars.get(int(reference))  # type: ignore[attr-defined]
            if variable is None:
                self._refused("fmi2GetDirectionalDerivative", f"valueReference {int(reference)}: no such variable")
                return None
            names.append(variable.name)
        try:
            return self.component.directional_derivative(names[:nu], names[nu:], values[2 + nu + nk:])
        except Exception as exc:  # a bad unknown or known, or a law that fails at the moved point: named
            self._refused("fmi2GetDirectionalDerivative", exc)
            return None

    def me_completed_step(self, values: list[float], count: int) -> list[float] | None:
        self.component.completed_integrator_step()
        return []
