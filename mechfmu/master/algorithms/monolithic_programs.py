"""The monolithic master's compiled exchange (``mechfmu.master.exchange``): the programs that put its components at
a point, read their derivatives and indicators and complete an integrator step, each in one call."""
from __future__ import annotations

from typing import Any

from mechfmu.master.constraint_forces import AlgebraicView, clocked
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.exchange import (
    COMPLETED_STEP,
    GET_DERIVATIVES,
    GET_INDICATORS,
    SET_STATES,
    SET_TIME,
    Program,
    library,
)
from mechfmu.master.exchange_plans import add_transfer, compilable


class CompiledExchange:
    """The programs of ``mechfmu.master.algorithms.monolithic.Monolithic`` (its ``components``, their parts
    ``slices`` of the state vector and its constraints' ``forces``)."""

    components: list[Any]
    slices: list[slice]
    forces: Any
    owners: list[Any]
    clocked: list[Any]

    def _compiled(self, system: CoupledSystem) -> dict[str, Program] | None:
        """Where every component is an FMU the compiled exchange can call (``mechfmu.master.exchange``): the
        programs that put the components at (t, x) and pass the outputs on (``put``), that read the derivatives,
        the indicators, that complete an integrator step, and the put with the completion (``accept``) or with the
        derivatives (``evaluate``) in one: the calls ``_put``, ``_derivatives``, ``_indicators`` and ``_accept``
        make (with constraints also theirs, ``ConstraintForces.compile``); else None."""
        runner = library()
        functions = ("fmi2SetTime", "fmi2SetContinuousStates", "fmi2GetDerivatives", "fmi2GetEventIndicators",
                     "fmi2CompletedIntegratorStep")
        self.owners = list(system.slaves.values())  # each component's slave (an in-process component is its own view)
        self.clocked = clocked(self.components)
        if runner is None or not all(isinstance(c, AlgebraicView) or compilable(slave, *functions)
                                     for c, slave in zip(self.components, self.owners)):
            return None
        if self.forces is not None and not self.forces.compilable():
            return None
        programs = {name: Program(runner) for name in ("put", "derivatives", "indicators", "completed")}
        z = 0
        for component, part, slave in self._stated():
            programs["derivatives"].call(GET_DERIVATIVES, slave, part.stop - part.start, part.start)
            programs["completed"].call(COMPLETED_STEP, slave)
            count = len(component.indicator_names())
            if count:
                programs["indicators"].call(GET_INDICATORS, slave, count, z)
                z += count
        if not self._add_put(system, programs["put"]):
            return None
        programs["accept"] = Program(runner)  # put, then completed: an accepted point in one call
        programs["evaluate"] = Program(runner)  # put, then the derivatives: an evaluation at a new point in one call
        for name, code in (("accept", COMPLETED_STEP), ("evaluate", GET_DERIVATIVES)):
            self._add_put(system, programs[name])
            for _, part, slave in self._stated():
                programs[name].call(code, slave, *((part.stop - part.start, part.start)
                                                   if code == GET_DERIVATIVES else ()))
        if self.forces is not None:
            self.forces.compile(runner, lambda program: self._add_put(system, program),
                                [(slave, part) for _, part, slave in self._stated()])
        return programs

    def _stated(self) -> list[tuple[Any, slice, Any]]:
        """The components with a Model Exchange form (not constraints), their parts of x and their slaves."""
        return [(c, part, slave) for c, part, slave in zip(self.components, self.slices, self.owners)
                if not isinstance(c, AlgebraicView)]

    def _add_put(self, system: CoupledSystem, program: Program) -> bool:
        for _, part, slave in self._stated():
            program.call(SET_TIME, slave)
            program.call(SET_STATES, slave, part.stop - part.start, part.start)
        return add_transfer(program, system.ordered_plan)
