"""An FMU instantiated as fmi2ModelExchange, seen as its component's Model Exchange form.

``ModelExchangeView(slave)`` offers the calls the monolithic master makes of an in-process component
(components/model_exchange.py: ``set_time``, ``set_continuous_states``, ``derivatives``, ``event_indicators``,
``update_discrete_states``, ...) as FMI 2.0 Model Exchange calls of ``slave`` (an ``FmuSlave`` made with
``model_exchange=True``), through its one error path (``FmuSlave._call``: a refused call is a ``SlaveError``
with the FMU's message; each call counted and timed as the FMI function it makes). Modes follow FMI 2.0 §3.2.3:
after initialization the instance is in event mode; ``update_discrete_states`` goes through event mode
(fmi2EnterEventMode, fmi2NewDiscreteStates, fmi2EnterContinuousTimeMode) and keeps the nextEventTime it reports.
"""
from __future__ import annotations

import ctypes
from typing import Any

from mechfmu.components.number_text import measured


class ModelExchangeView:
    co_simulation_only = ""

    def __init__(self, slave: Any):
        description = slave.model_description
        self.slave, self._fmu = slave, slave._fmu
        self.continuous_states = tuple(d.variable.derivative.name for d in description.derivatives)
        self._derivatives = [d.variable.name for d in description.derivatives]
        self._indicators = [v.name for v in description.modelVariables
                            if v.causality == "output" and v.name.startswith("indicator.")]
        n, ni = len(self.continuous_states), description.numberOfEventIndicators
        self._x, self._dx, self._z = (ctypes.c_double * n)(), (ctypes.c_double * n)(), (ctypes.c_double * ni)()
        self._continuous = False
        self._next: float | None = None
        self.time = 0.0

    def state_variables(self) -> list[str]:
        return list(self.continuous_states)

    def derivative_variables(self) -> list[str]:
        return list(self._derivatives)

    def provides_directional_derivative(self) -> bool:
        return bool(self.slave.provides_directional_derivative())

    def directional_derivative(self, unknowns: list[str], knowns: list[str], seeds: list[float]) -> list[float]:
        return list(self.slave.directional_derivative(unknowns, knowns, seeds))

    def indicator_names(self) -> list[str]:
        return list(self._indicators)

    def set_time(self, t: float) -> None:
        self.slave._call("fmi2SetTime", lambda: f"fmi2SetTime({measured(t)} s)", self._fmu.setTime, t)
        self.time = t

    def set_continuous_states(self, values: list[float]) -> None:
        for i, value in enumerate(values):
            self._x[i] = value
        self.slave._call("fmi2SetContinuousStates", "fmi2SetContinuousStates",
                         self._fmu.setContinuousStates, self._x, len(values))

    def get_continuous_states(self) -> list[float]:
        self.slave._call("fmi2GetContinuousStates", "fmi2GetContinuousStates",
                         self._fmu.getContinuousStates, self._x, len(self._x))
        return list(self._x)

    def derivatives(self) -> list[float]:
        self.slave._call("fmi2GetDerivatives", "fmi2GetDerivatives",
                         self._fmu.getDerivatives, self._dx, len(self._dx))
        return list(self._dx)

    def event_indicators(self) -> list[float]:
        if not len(self._z):
            return []
        self.slave._call("fmi2GetEventIndicators", "fmi2GetEventIndicators",
                         self._fmu.getEventIndicators, self._z, len(self._z))
        return list(self._z)

    def update_discrete_states(self) -> bool:
        if self._continuous:
            self.slave._call("fmi2EnterEventMode", "fmi2EnterEventMode",
                             self._fmu.enterEventMode)
        info = self.slave._call("fmi2NewDiscreteStates", "fmi2NewDiscreteStates",
                                self._fmu.newDiscreteStates)
        self.slave._call("fmi2EnterContinuousTimeMode", "fmi2EnterContinuousTimeMode",
                         self._fmu.enterContinuousTimeMode)
        self._continuous = True
        self._next = info[5] if info[4] else None
        return bool(info[0] or info[3])  # another event iteration needed, or the states set anew

    def next_time_event(self) -> float | None:
        return self._next

    def completed_integrator_step(self) -> None:
        self.slave._call("fmi2CompletedIntegratorStep", "fmi2CompletedIntegratorStep",
                         self._fmu.completedIntegratorStep)
