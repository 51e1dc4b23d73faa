"""How accurate a run is: its tolerance and an a-posteriori estimate of its error (``Result.accuracy``).

The states: a run's recorded body configuration, the connected Real outputs without feed-through
(``step_control.state_outputs``) that are not rates, and every body's positions (``body_positions``):
positions [m], angles [rad], orientations. Not a connector's forces, which jump at a switch, nor velocities,
which jump at an impact: a velocity's difference next to its jump says when the jump happened, which the
positions say too, as an error of the size of the run's.

Tolerance: a state y is accurate when its error is at most ``atol + rtol·scale(y)``, scale the largest |y| of
the run, SI units. Defaults ``RTOL`` = 1e-6 (six significant digits of each state's range: what a validation
against a reference tool resolves) and ``ATOL`` = 1e-9 (a nanometre, a nanoradian: below anything a mechanical
scenario's states need); the scenario's ``<mechfmu:Master rtol=".." atol=".."/>`` overrides them, and the
caller (``simulate(rtol=, atol=)``, ``--rtol``/``--atol``) overrides both.

Estimate (Richardson): the run, at step h/N (N substeps of the communication step h), and a companion run at
step c·h, the same algorithm, options and parameters, compared on the companion's grid: the run's error is
``|y_run − y_companion| / ((c·N)^p − 1)``, p the coupling's order (``CouplingAlgorithm.coupling_order``). It
estimates the global error of each state where the error goes as the step to the power p (the asymptotic
range), as Richardson's extrapolation assumes; near a switch that the run does not locate the error goes
as h, and the estimate, with p = 2, can be low by up to 3x. With an adaptive step the estimate is the step
controller's instead: the sum over the accepted steps of each state's local error estimate, a bound of the
global error where errors do not grow between steps.

Memory: the estimate keeps the states' rows of the run (``StateProbe`` where the run records no Recorder or a
selection of outputs) and of its companion, 8 bytes per state and point; ``estimate_error=False`` for a run too
long for that.
"""
from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from mechfmu.master.fmu_slave import InstancePool
from mechfmu.master.observers import Observer, Recorder
from mechfmu.master.result import Accuracy

if TYPE_CHECKING:
    from mechfmu.master.algorithms import CouplingAlgorithm
    from mechfmu.master.result import Result, Run
    from mechfmu.ssp.scenario import Scenario

RTOL, ATOL = 1e-6, 1e-9
#: ``auto`` divides its step at most this often for its tolerance (then warns)
MAX_SUBSTEPS = 64


def body_positions(slaves: dict[str, Any]) -> list[str]:
    """Every body's position outputs, wired or not (a body whose position only a sensor or the result reads):
    Real outputs without feed-through named ``s``, ``phi``, ``*.s``, ``*.phi``, ``position.*``, ``orientation.*``."""
    def is_position(name: str) -> bool:
        return name in ("s", "phi") or name.endswith((".s", ".phi")) or name.startswith(("position.", "orientation."))
    return [f"{slave.name}.{n}" for slave in slaves.values() for n in slave.outputs()
            if is_position(n) and not slave.variables[n].depends_on and slave.variables[n].type == "Real"]


def configuration(states: list[str], units: dict[str, str]) -> list[str]:
    """The configuration among ``states``: positions, angles, orientations, not rates (a unit with /s),
    unless there are only rates."""
    return [n for n in states if "/s" not in units.get(n, "")] or states


def compared(run: Result, companion: Result) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The states both recorded, and the run's rows at the companion's times (index pairs)."""
    assert run.data is not None and companion.data is not None
    names = configuration([n for n in run.state_columns if n in (run.data.dtype.names or ())
                           and n in (companion.data.dtype.names or ())], run.units)
    t_run, t_companion = run.data["time"], companion.data["time"]
    at = np.clip(np.searchsorted(t_run, t_companion), 0, len(t_run) - 1)
    near = np.abs(t_run[at] - t_companion) <= 1e-9 * max(1.0, float(np.max(np.abs(t_run))))
    return names, at[near], np.flatnonzero(near)


def richardson(run: Result, companion: Result, ratio: float, order: int, rtol: float, atol: float,
               method: str) -> Accuracy:
    """The run's estimate from a companion whose step is ``ratio`` times the run's (module docstring)."""
    accuracy = Accuracy(rtol, atol, method=method)
    if run.data is None or companion.data is None:
        accuracy.note = "nothing recorded to compare"
        return accuracy
    names, rows, companion_rows = compared(run, companion)
    if not names or len(rows) < 2:
        accuracy.note = "no state recorded at two common points of the run and its companion"
        return accuracy
    worst = -1.0
    for name in names:
        difference = np.abs(run.data[name][rows] - companion.data[name][companion_rows]) / (ratio ** order - 1)
        tolerance = atol + rtol * float(np.max(np.abs(run.data[name])))
        i = int(np.argmax(difference))
        accuracy.states[name] = float(difference[i])
        if difference[i] / tolerance > worst:
            worst = difference[i] / tolerance
            accuracy.estimate, accuracy.variable, accuracy.tolerance = float(difference[i]), name, tolerance
            accuracy.time, accuracy.unit = float(run.data["time"][rows[i]]), run.units.get(name, "")
    return accuracy


def controlled(run: Result, local_errors: dict[str, float], rtol: float, atol: float) -> Accuracy:
    """The adaptive step's estimate: each state's summed local errors against its tolerance."""
    accuracy = Accuracy(rtol, atol, method="the adaptive step's: its accepted steps' local error estimates summed")
    worst = -1.0
    for name in configuration(list(local_errors), run.units):
        error = local_errors[name]
        recorded = run.data is not None and name in (run.data.dtype.names or ())
        values = run.data[name] if recorded and run.data is not None else [run.final.get(name, 0.0)]
        tolerance = atol + rtol * float(np.max(np.abs(values)))
        accuracy.states[name] = error
        if error / tolerance > worst:
            worst = error / tolerance
            accuracy.estimate, accuracy.variable, accuracy.tolerance = error, name, tolerance
            accuracy.unit, accuracy.time = run.units.get(name, ""), run.end_time
    if worst < 0:
        accuracy.note = "the adaptive step estimated no state"
    return accuracy


def substeps_for(coarse: Accuracy, coarse_ratio: int, order: int) -> int:
    """The fewest substeps N (a power of 2, at most ``MAX_SUBSTEPS``) for which the error predicted from a
    companion at ``coarse_ratio``·h, error ∝ step^p, is within the tolerance."""
    n = 1
    while n < MAX_SUBSTEPS and coarse.ratio / (coarse_ratio * n) ** order > 1:
        n *= 2
    return n


def warning(accuracy: Accuracy, algorithm: str, step: float, substeps: int, order: int, auto: bool,
            switching: list[str], events: bool) -> str:
    """The warning for an estimate beyond the tolerance: what was run, the estimate, the cause and the cure."""
    h = step / substeps
    run = f"{algorithm} at h = {h:.3g} s" + (f" ({substeps} substeps of {step:g} s)" if substeps > 1 else "")
    text = (f"{'auto: ' if auto else ''}{run}: estimated error {accuracy.estimate:.2g} {accuracy.unit} in "
            f"{accuracy.variable} near t = {accuracy.time:.6g} s, beyond the tolerance {accuracy.tolerance:.2g} "
            f"{accuracy.unit} (rtol {accuracy.rtol:g}, atol {accuracy.atol:g})")
    if switching and not events:
        text += f", with the switches of {', '.join(repr(s) for s in switching)} acting at the steps' ends"
    smaller = h * (1 / accuracy.ratio) ** (1 / order) * 0.5 if accuracy.ratio > 0 else h
    cures = []
    if not auto:
        cures.append("--algorithm auto (it chooses the coupling and divides the step for the tolerance)")
    elif substeps >= MAX_SUBSTEPS:
        cures.append(f"a smaller --step (auto divides it at most {MAX_SUBSTEPS} times)")
    if switching and not events:
        cures.append("--option events=on (each switch located within its step)")
    if smaller > 1e-3 * h:
        cures.append(f"a step of about {smaller:.2g} s (the error goes as h^{order})")
    cures.append("or a looser --rtol/--atol if this accuracy is enough")
    return text + "; use " + ", ".join(cures)


class StateProbe(Observer):
    """Records every slave's Real outputs without feed-through (the states among them) at each recorded point: the
    estimate's rows where the run records a selection of outputs that may leave them out."""

    def __init__(self) -> None:
        self.reads: list[tuple[Any, list[str]]] = []
        self.rows: list[tuple[float, ...]] = []
        self.units: dict[str, str] = {}
        self.columns: list[int] | None = None  # where they are in the run's rows, if it reads them all

    def initialized(self, run: Run) -> None:
        self.reads = [(s, [n for n in s.outputs() if not s.variables[n].depends_on and s.variables[n].type == "Real"])
                      for s in run.slaves.values()]
        self.units = {f"{s.name}.{n}": s.variables[n].unit or "1" for s, names in self.reads for n in names}
        recorded = {name: i for i, name in enumerate(run.column_names)}
        self.columns = [recorded[n] for n in self.units] if all(n in recorded for n in self.units) else None
        self.step_completed(run)

    def step_completed(self, run: Run) -> None:
        if self.columns is not None:  # the run reads them anyway: no further call
            self.rows.append((run.time, *(run.row[i] for i in self.columns)))
        else:
            self.rows.append((run.time, *(x for slave, names in self.reads if names for x in slave.get(names))))

    def seen(self, result: Result) -> Result:
        """``result`` with the probe's rows as its data (for the comparison only)."""
        names = ["time", *self.units]
        data = np.array(self.rows, dtype=np.dtype([(n, np.float64) for n in names])) if self.rows else None
        return dataclasses.replace(result, data=data, units={**result.units, **self.units})


def scenario_tolerance(scenario: Scenario, rtol: float | str | None, atol: float | str | None) -> tuple[float, float]:
    """(rtol, atol) of a run: the caller's, else the scenario's, else the defaults; each must be > 0."""
    declared = scenario.tolerance or (None, None)
    chosen = []
    for name, given, written, default in zip(("rtol", "atol"), (rtol, atol), declared, (RTOL, ATOL)):
        value = next(x for x in (given, written, default) if x is not None)
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not (math.isfinite(number) and number > 0):
            raise ValueError(f"tolerance {name} = {value!r} must be a finite number > 0")
        chosen.append(number)
    return chosen[0], chosen[1]


def estimated(once: Callable[..., Result], algo: CouplingAlgorithm | None, opts: dict[str, Any], h: float, t0: float,
              t_stop: float, n_steps: int, observers: list[Observer], output_variables: list[str] | None, every: int,
              output_accepted: bool, pool: InstancePool | None, tolerance: tuple[float, float]) -> Result:
    """The run (``once``, ``simulate``'s) with its error estimated: ``auto`` first runs companions at 2h and 4h
    and divides its step for the tolerance (``substeps_for``); every run is then compared with the one at 2h."""
    own_pool = InstancePool() if pool is None else None
    pool = pool or own_pool
    twin = copy.deepcopy(algo)  # the companion's algorithm, as the run's before it runs
    kept = any(isinstance(o, Recorder) for o in observers)  # else its states are kept for the estimate only
    result: Result | None = None

    def companion(factor: int) -> Result | None:
        steps = n_steps // factor
        if steps < 2:
            return None
        made = copy.deepcopy(twin)
        return once(made, opts, factor * h, t0 + steps * factor * h, steps, [Recorder()], None, 1, False, pool)

    try:
        auto, adaptive = algo is None, opts.get("adaptive", "off") == "on" or (algo and algo.controller)
        coarse, coarser, predicted = None, None, ""
        if auto and "substeps" not in opts and not adaptive:
            coarse, coarser = companion(2), companion(4)
            if coarse is not None and coarse.ok and coarser is not None and coarser.ok:
                at_2h = richardson(coarse, coarser, 2, coarse.coupling_order, *tolerance, "")
                n = substeps_for(at_2h, 2, coarse.coupling_order) if not math.isnan(at_2h.estimate) else 1
                if n > 1:
                    opts = {**opts, "substeps": str(n)}
                    predicted = (f"; {n} substeps of the step {h:g} s for the tolerance (the error at 2h and 4h: "
                                 f"{at_2h.estimate:.2g} {at_2h.unit} in {at_2h.variable} at 2h)")
        probe = StateProbe() if output_variables is not None or not kept else None
        result = once(algo, opts, h, t_stop, n_steps, [*observers, *([probe] if probe else [])],
                      output_variables, every, output_accepted, pool)
        result.choice += predicted if result.choice else ""
        companions = [r for r in (coarse, coarser) if r is not None]
        result.accuracy = Accuracy(*tolerance)
        if not result.ok:
            result.accuracy.note = f"the run ended {result.status}"
            return result
        if result.local_errors:
            result.accuracy = controlled(result, result.local_errors, *tolerance)
        else:
            if coarse is None:
                coarse = companion(2)
            if coarse is None:
                result.accuracy.note = f"the run has {n_steps} steps, too few for a companion at twice the step"
            elif coarse.status == "interrupted":
                result.accuracy.note = "the companion run was interrupted (SIGINT)"
            elif not coarse.ok:
                result.accuracy.note = (f"the companion run at twice the step ({2 * h:g} s) failed, a sign that this "
                                        f"step is near where {result.algorithm} fails: "
                                        f"{coarse.message.splitlines()[0] if coarse.message else coarse.status}")
                result.warnings.append(f"{result.accuracy.note}; use --algorithm auto or a smaller --step")
            else:
                ratio = 2 * result.substeps / coarse.substeps
                method = (f"Richardson: this run against one at {ratio:g} times its step "
                          f"({2 * h / coarse.substeps:g} s), coupling order {result.coupling_order}")
                seen = probe.seen(result) if probe is not None else result
                result.accuracy = richardson(seen, coarse, ratio, result.coupling_order, *tolerance, method)
        companions += [coarse] if coarse is not None and coarse not in companions else []
        result.counters["estimate_fmu_calls"] = sum(r.counters.get("fmu_calls", 0) for r in companions)
        if result.accuracy.exceeded:
            result.warnings.append(warning(result.accuracy, result.algorithm, h, result.substeps,
                                           result.coupling_order, auto, result.switching, result.events_on))
        return result
    finally:
        if own_pool is not None:
            own_pool.close()
