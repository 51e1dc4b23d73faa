"""The automatic master ``auto``: the coupling an expert would choose for a scenario, from what its components
are, decided once they are instantiated (``choose``). It is the default wherever neither the caller nor the
scenario names an algorithm.

- Where every component has a Model Exchange form (``offers_model_exchange``; all of ours but the constraint) or
  is a constraint (an input ``lambda`` that a master must solve, with an output ``constraintEquation``;
  ``activeConnector`` not false) and gives directional derivatives: ``monolithic``, chosen for its cost. One stiff
  integrator (Radau) takes all the components' states with steps its error control sets where the dynamics are
  fast, so there is no coupling error to divide every communication step for; a constraint's force is solved at
  every point it evaluates (mechfmu/master/constraint_forces.py); its tolerance follows the run's (``ode_rtol`` =
  rtol/``ODE_MARGIN``, ``ode_atol`` = atol) and it locates every switch. On the two-mass contact model of the
  performance page it made 0.3 M component calls where linear-implicit with the substeps for the tolerance made
  5.4 M; on belt_friction 4 M where newton with its substeps made 60 M.
- Otherwise, with a constraint (one whose offset depends on time and that cannot save its state, or a caller's
  co-simulation option): ``newton`` with implicit coupling, the master that solves it.
- Otherwise ``linear-implicit``: Jacobi plus the tangents (∂f/∂s, ∂f/∂v) of every connector that outputs them,
  with which the body integrates the connector's force implicitly: a linear connector to ground adds no coupling
  error and a stiff one stays stable at any step; where there are no tangents it is Jacobi.
- Events on where a component has event indicators (``indicator.*`` outputs: a contact, a limit stop, a
  stick/slip switch), every slave can take a step again (rollback) and there is no constraint: each switch is
  located within its step and acts there, not at the step's end. With a constraint under newton the switches act
  at the steps' ends, as in Exudyn: on belt_friction (a belt drive's velocity constraint and stick/slip friction)
  switches located by newton put the mass 2e-3 m from Exudyn's solution, switches at the steps' ends 6e-4 m (the
  monolithic master, which locates them in one ODE, 4e-4 m).

Options the caller gives go to the chosen algorithm and win over these choices (``events="off"``); one the
chosen algorithm does not take is a ValueError naming it.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from mechfmu.components.ports import ACTIVE, INDICATOR
from mechfmu.master.algorithms.base import ALGORITHMS, CouplingAlgorithm, is_constraint, make_algorithm
from mechfmu.master.constraint_forces import OFFSET_FUNCTIONS
from mechfmu.master.slaves import Slave
from mechfmu.ssp.close_names import suggestion

AUTO = "auto"
#: the monolithic master's integrator runs at the run's rtol divided by this (and its atol): on the 20 shipped
#: scenarios and the performance page's two models its error then stayed 20 to 10^5 times within the run's tolerance
ODE_MARGIN = 10


def algorithm_names() -> list[str]:
    """Every name a caller or a scenario may give: the algorithms and ``auto``."""
    return sorted([*ALGORITHMS, AUTO])


@dataclass
class Choice:
    """What ``auto`` chose: the algorithm, its options and why."""
    algorithm: str
    options: dict[str, str] = field(default_factory=dict)
    reason: str = ""

    def describe(self) -> str:
        options = "".join(f" {k}={v}" for k, v in self.options.items())
        return f"auto chose {self.algorithm}{options}: {self.reason}"


def algorithm_or_auto(name: str, options: dict[str, Any]) -> CouplingAlgorithm | None:
    """The algorithm ``name`` made with ``options``, or None for auto (chosen once the slaves are there), whose
    option names are checked now: each must be one of an algorithm auto may choose (ValueError, with the closest
    name)."""
    if name.lower() != AUTO:
        return make_algorithm(name, **options)
    known = sorted(set().union(*(cls.options for cls in ALGORITHMS.values())))
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"algorithm 'auto': unknown option {unknown[0]!r}{suggestion(unknown[0], known)}; the options "
                         f"of the algorithms auto chooses from are {', '.join(known)}")
    return None


def offers_model_exchange(slave: Slave) -> bool:
    """The slave has a Model Exchange form: an FMU whose description has one, a component without
    ``co_simulation_only``."""
    description = getattr(slave, "model_description", None)
    if description is not None:
        return description.modelExchange is not None
    component = getattr(slave, "component", None)
    return component is not None and not getattr(type(component), "co_simulation_only", "no form")


def monolithic_options() -> set[str]:
    """The options a caller may give auto and still get the monolithic master: its own and the run's tolerance (any
    other, e.g. ``events``, ``substeps`` or ``adaptive``, is one of co-simulation)."""
    return (set(ALGORITHMS["monolithic"].options) - set(ALGORITHMS["jacobi"].options)) | {"rtol", "atol"}


def switching_slaves(slaves: dict[str, Slave]) -> list[str]:
    """The slaves that switch: those with event indicators (``indicator.*`` outputs)."""
    return [name for name, slave in slaves.items()
            if any(n.startswith(INDICATOR) and v.causality == "output" for n, v in slave.variables.items())]


def choose(slaves: dict[str, Slave], values: dict[str, dict[str, Any]],
           tolerance: tuple[float, float] = (1e-6, 1e-9), options: Collection[str] = ()) -> Choice:
    """The coupling for ``slaves`` whose parameter ``values`` (per slave, as the run sets them) are given, for the
    run's (rtol, atol) ``tolerance``; the caller's ``options`` other than the monolithic master's ask for
    co-simulation."""
    constraints = [name for name, slave in slaves.items()  # active as the run will set them (not yet set)
                   if is_constraint(slave) and values.get(name, {}).get(ACTIVE, True) not in (False, "false", 0)]
    switching = switching_slaves(slaves)
    rollback = all(getattr(slave, "can_roll_back", True) for slave in slaves.values())
    timed = [name for name in constraints if any(str(values.get(name, {}).get(p, "")).strip() for p in OFFSET_FUNCTIONS)
             and not getattr(slaves[name], "can_roll_back", True)]
    if (all(offers_model_exchange(slave) or is_constraint(slave) for slave in slaves.values())
            and set(options) <= monolithic_options() and not timed
            and (not constraints or all(slave.provides_directional_derivative() for slave in slaves.values()))):
        choice = Choice("monolithic", {"ode_rtol": f"{tolerance[0] / ODE_MARGIN:g}", "ode_atol": f"{tolerance[1]:g}"},
                        "every component has a Model Exchange form"
                        + (f" and the force of {', '.join(constraints)} is solved at every point of the integrator "
                           "(the constraint differentiated to the accelerations)" if constraints else "")
                        + ": one stiff integrator over all their states, its steps where the dynamics need them, has "
                        "no coupling error to divide every step for (cheaper than co-simulation's substeps at the "
                        f"tolerance rtol {tolerance[0]:g}, atol {tolerance[1]:g})")
        if switching:
            choice.reason += f"; {', '.join(switching)} switch (event indicators): each switch located"
        return choice
    if constraints:
        choice = Choice("newton", {"coupling": "implicit"},
                        f"the constraint(s) {', '.join(constraints)} need a master that solves their force"
                        + (f" ({', '.join(timed)}: an offset in time, and no saved state to evaluate it at the "
                           "integrator's times)" if timed else ""))
    else:
        choice = Choice("linear-implicit", {}, "no constraint: the connectors' tangents couple them implicitly "
                                               "(stable for stiff ones)")
    if switching and constraints:
        choice.reason += (f"; {', '.join(switching)} switch at the steps' ends, as in Exudyn (with a constraint's "
                          "solved force, located switches ended farther from Exudyn's solution)")
    elif switching and rollback:
        choice.options["events"] = "on"
        choice.reason += f"; {', '.join(switching)} switch (event indicators): each switch located in its step"
    elif switching:
        choice.reason += (f"; {', '.join(switching)} switch, but not every FMU can take a step again "
                          "(canGetAndSetFMUstate): switches act at the step's end")
    return choice


def chosen_algorithm(slaves: dict[str, Slave], values: dict[str, dict[str, Any]], options: dict[str, Any],
                     tolerance: tuple[float, float] = (1e-6, 1e-9)) -> tuple[CouplingAlgorithm, Choice]:
    """The algorithm ``choose`` picks, made with its options and the caller's ``options`` (which win)."""
    choice = choose(slaves, values, tolerance, options)
    choice.options.update({k: str(v) for k, v in options.items()})
    try:
        return make_algorithm(choice.algorithm, **choice.options), choice
    except ValueError as exc:
        raise ValueError(f"algorithm 'auto' chose {choice.algorithm} ({choice.reason}): {exc}") from None
