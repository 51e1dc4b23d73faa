"""Adaptive macro step (option ``adaptive="on"``, every algorithm): each communication interval of the
run's grid (``step``) is covered by accepted steps whose size follows a local error estimate.

Error estimate (``error_estimate``):
- ``doubling`` (default): from saved states the step h is taken once and, again, as two halves; the
  halves are kept and ``err = max_i |y½_i − y1_i| / ((2^p − 1)·(atol + rtol·max(|y½_i|, |y1_i|)))``
  over the connected state outputs (without feed-through) of the bodies: positions, velocities,
  orientations, Richardson's estimate of the kept result's local error for a coupling of order p
  (``SteppedAlgorithm.coupling_order``: 1 for Jacobi and Gauss-Seidel, 2 for linear-implicit and for
  fixed-point and newton with ``inputs="average"``). Each attempt costs three steps.
- ``energy``: ECCO's measure (Sadjina et al. 2017; libcosim's ``ecco_algorithm``): the step is taken
  once and ``err = max_bonds |ΔE| / (atol + rtol·h·|f·v|)``, ΔE the power-bond residual of the step
  (``mechfmu/master/energy.py``) [J], atol then in J. One step per attempt; it needs power bonds.

A step is accepted when err ≤ 1; the next size is ``h·min(GROW, max(SHRINK, SAFETY·err^(−1/(p+1))))``
(for the energy estimate p = 1); a rejected step is taken again from the saved states with that size.
Steps stay within [``min_step``, ``max_step``] (``max_step`` 0: the communication interval; only the
last one or two before a grid point may be shorter, to end on it) and end exactly on the grid, where
the results are recorded (every accepted point too with ``simulate(..., output_accepted=True)``). A
step that still fails at ``min_step`` stops the run with the error, the variable and what to change.
Events (``events="on"``) are located within each attempted step.
Counters ``accepted_steps``, ``rejected_steps``; ``Result.steps`` lists (end time, size) of every
accepted step (``AcceptedSteps``: 16 bytes a step).

The run's error (``global_errors``, doubling): per position state s, its accepted steps' local errors summed
plus each local error δv of its rate (``x.v`` for ``x.s``, ``x.w`` for ``x.phi``) carried to the run's end,
Σ|δs_i| + Σ|δv_i|·(t_end − t_i): a velocity error made at t_i moves the body by δv_i·(t − t_i), the error a
positions-only sum misses (on a contact model with a sine force, 3,000 times the sum of the positions'
own). For a body that oscillates it bounds the error from above.

Tolerance per (``tolerance_per``): ``step`` (default) holds each accepted step's local error within
atol + rtol·|y|; ``run`` holds that estimate of the run's error within it (error per unit step): a step of h
from t is held to its share h/(t_stop − t_start) of the tolerance with its errors as they count at the run's
end (a position's δs, a velocity's δv·(t_stop − t − h) against its position's tolerance, atol + rtol·the
largest |s| so far, as the run's tolerance scales with the largest |s| of the run), the next size with
−1/p (the error per unit of time goes as h^p); a step that misses at ``min_step`` is kept, its error in the
estimate (which then says the run missed), not a stopped run. ``run`` needs the doubling estimate.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mechfmu.components.number_text import measured, number
from mechfmu.components.ports import ANGLE, ANGULAR_VELOCITY, POSITION, VELOCITY
from mechfmu.master.algorithms.stepping import SteppedAlgorithm
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.result import AcceptedSteps

SAFETY, GROW, SHRINK = 0.9, 5.0, 0.2
#: a step that would leave less than this fraction of itself before the grid point is stretched to it
STRETCH = 1e-3


def is_state(slave: Any, name: str) -> bool:
    """The output ``name`` of ``slave`` is a continuous state or computed from one (a body's position), not a signal
    of time (a source's ``y``): by our component's ``output_states``, or by an FMU's ModelStructure (its output's
    dependencies on a state) where it has a Model Exchange form and lists any; else, not knowing (an FMU that
    declares no output on any state, as ours once did), an output without feed-through."""
    component = getattr(slave, "component", None)
    if component is not None and hasattr(type(component), "output_states"):
        return bool(type(component).output_states().get(name))
    md = getattr(slave, "model_description", None)
    if md is not None and md.modelExchange is not None:
        states = {u.variable.derivative.name for u in md.derivatives if u.variable.derivative is not None}
        on = {u.variable.name for u in md.outputs for d in u.dependencies or () if d.name in states}
        if on or not states:
            return name in on
    return not slave.variables[name].depends_on


def state_outputs(system: CoupledSystem) -> list[tuple[Any, list[str]]]:
    """Per slave, its connected Real outputs that are states (``is_state``) without feed-through: the bodies'
    states that couple (positions, velocities, orientations), not a connector's switching diagnostics or a
    source's signal."""
    found = []
    wired_outputs: dict[str, set[str]] = {}
    for c in system.connections:
        wired_outputs.setdefault(c.source, set()).add(c.source_variable)
    for slave in system.slaves.values():
        wired = wired_outputs.get(slave.name, set())
        names = [n for n in slave.outputs() if n in wired and not slave.variables[n].depends_on
                 and slave.variables[n].type == "Real" and is_state(slave, n)]
        if names:
            found.append((slave, names))
    return found


def position_of(label: str) -> str:
    """The position a rate state's error is carried to: ``x.s`` for ``x.v``, ``x.phi`` for ``x.w``, else ""."""
    stem, _, name = label.rpartition(".")
    position = {VELOCITY: POSITION, ANGULAR_VELOCITY: ANGLE}.get(name)
    return f"{stem}.{position}" if position else ""


class StepController:
    """Covers each communication interval with accepted steps (module docstring)."""

    def __init__(self, config: dict[str, Any]):
        self.rtol, self.atol = config["rtol"], config["atol"]
        self.min_step, self.max_step = config["min_step"], config["max_step"]
        if 0 < self.max_step < self.min_step:
            raise ValueError(f"adaptive step: min_step = {self.min_step!r} s exceeds max_step = {self.max_step!r} s")
        self.estimate = config["error_estimate"]
        self.per_run = config["tolerance_per"] == "run"
        if self.per_run and self.estimate != "doubling":
            raise ValueError("adaptive step: tolerance_per = 'run' needs the states' local errors, which the "
                             f"error_estimate {self.estimate!r} does not give; use error_estimate=doubling")
        #: the run's start and stop time [s] (tolerance_per = run: a step's share of the tolerance)
        self.start, self.stop = 0.0, math.inf
        #: per state, the index of the position its error is carried to (a velocity's), else -1
        self.carried_to: list[int] = []
        #: per state, its largest |value| so far (tolerance_per = run: the run's tolerance scales with it)
        self.largest: list[float] = []
        #: per state, its accepted local errors times their steps' end times summed (carried to the end)
        self.timed_errors: list[float] = []
        self.order = 1
        self.h_next = math.inf
        #: (end time [s], size [s]) of every accepted step
        self.steps = AcceptedSteps()
        #: called with the end time of every accepted step inside an interval (not its last)
        self.on_accepted: Callable[[float], None] | None = None
        self.outputs: list[tuple[Any, list[str]]] = []
        self.labels: list[str] = []
        #: per label, the accepted steps' local error estimates summed [SI] (doubling)
        self.local_errors: list[float] = []

    def check_interval(self, interval: float) -> None:
        """Refuse a ``min_step`` above the communication step: no step could be shorter than the grid's."""
        if self.min_step > interval:
            raise ValueError(f"adaptive step: min_step = {self.min_step!r} s exceeds the communication step "
                             f"{interval!r} s (--step); lower --option min_step")

    def initialize(self, algorithm: SteppedAlgorithm, system: CoupledSystem) -> None:
        self.order = algorithm.coupling_order() if self.estimate == "doubling" else 1
        self.outputs = state_outputs(system)
        self.labels = [f"{slave.name}.{n}" for slave, names in self.outputs for n in names]
        self.local_errors = [0.0] * len(self.labels)
        self.timed_errors = [0.0] * len(self.labels)
        self.largest = []
        self.carried_to = [self.labels.index(position) if position in self.labels else -1
                           for position in map(position_of, self.labels)]

    def global_errors(self, t_end: float) -> dict[str, float]:
        """Each position state's error at ``t_end`` [SI] from the accepted steps' local errors (module docstring)."""
        errors = dict(zip(self.labels, self.local_errors))
        carried = {label: t_end * e - te for label, e, te in zip(self.labels, self.local_errors, self.timed_errors)}
        for label, to in zip(self.labels, self.carried_to):
            if to >= 0:
                errors[self.labels[to]] += carried[label]
        return errors

    def values(self) -> list[float]:
        return [x for slave, names in self.outputs for x in slave.get(names)]

    def step(self, algorithm: SteppedAlgorithm, system: CoupledSystem, t: float, interval: float) -> None:
        """Advance from t to t + interval in accepted steps."""
        end = t + interval
        largest = self.max_step if self.max_step > 0 else interval
        while algorithm.status == "ok":
            h = min(self.h_next, largest)
            clamped = h >= end - t - STRETCH * h
            if clamped:
                h = end - t
            elif end - t < 2 * h:
                h = 0.5 * (end - t)  # two equal steps instead of a sliver before the grid point
            floor = h <= self.min_step * (1 + STRETCH)  # at min_step, or stretched from it to end on the grid
            kept = self.per_run and floor
            err, worst = self._attempt(algorithm, system, t, h, kept)
            if algorithm.status != "ok":
                return
            exponent = -1.0 / (self.order if self.per_run else self.order + 1)
            factor = GROW if err == 0 else min(GROW, max(SHRINK, SAFETY * err ** exponent))
            if err <= 1 or (kept and math.isfinite(err)):
                algorithm.counters["accepted_steps"] += 1
                self.steps.append((end if clamped else t + h, h))
                grown = max(h * factor, self.h_next) if clamped and h < self.h_next else h * factor
                self.h_next = max(grown, self.min_step)
                if clamped:
                    return
                t = t + h
                if self.on_accepted is not None:
                    self.on_accepted(t)
                continue
            algorithm.counters["rejected_steps"] += 1
            if floor:
                algorithm.status = "error"
                algorithm.message = (f"step control: the error estimate is {err:.6g} x the tolerance at "
                                     f"t={measured(t)} s with the smallest step min_step = {number(self.min_step)} s "
                                     f"(largest at {worst}); raise --option rtol / atol, lower --option min_step, or "
                                     "run with events=on if a switch falls in the step")
                return
            self.h_next = max(h * factor, self.min_step)

    def _attempt(self, algorithm: SteppedAlgorithm, system: CoupledSystem, t: float, h: float,
                 kept: bool = False) -> tuple[float, str]:
        """Take the step t → t + h with its error estimate; a rejected one is undone, unless ``kept`` (a step at
        ``min_step`` under ``tolerance_per = run``). (err, worst label); err = inf if the algorithm refused the step
        (it is then taken again shorter, if it can be)."""
        saved, memory, books = system.save_states(), algorithm.snapshot(), algorithm.bookkeeping()

        def undo() -> None:
            algorithm.restore_bookkeeping(books)
            algorithm.restore(memory)
            system.restore_states(saved)

        try:
            if self.estimate == "energy":
                assert algorithm.audit is not None
                before = list(algorithm.audit.absolute)
                ok = self._try(algorithm, system, t, h)
                if ok:
                    scale = [self.atol + self.rtol * h * p for p in algorithm.audit.power]
                    ratios = [(a - b) / s for a, b, s in zip(algorithm.audit.absolute, before, scale)]
                    err = max(ratios, default=0.0)
                    worst = algorithm.audit.labels[ratios.index(err)] if ratios else ""
            else:
                ok = self._try(algorithm, system, t, h)
                if ok:
                    whole = self.values()
                    undo()
                    half = 0.5 * h
                    ok = self._try(algorithm, system, t, half) and self._try(algorithm, system, t + half, h - half)
                if ok:
                    richardson = 2 ** self.order - 1
                    halves = self.values()
                    ratios = (self._run_ratios(halves, whole, t, h) if self.per_run else
                              [abs(a - b) / (richardson * (self.atol + self.rtol * max(abs(a), abs(b))))
                               for a, b in zip(halves, whole)])
                    err = max(ratios, default=0.0)
                    worst = self.labels[ratios.index(err)] if ratios else ""
                    if err <= 1 or kept:
                        made = [abs(a - b) / richardson for a, b in zip(halves, whole)]
                        self.local_errors = [s + e for s, e in zip(self.local_errors, made)]
                        self.timed_errors = [s + e * (t + h) for s, e in zip(self.timed_errors, made)]
            if not ok:
                if h <= self.min_step * (1 + STRETCH):
                    return math.inf, ""
                algorithm.status, algorithm.message = "ok", ""
                err, worst = math.inf, "a refused step"
            if not (err <= 1 or (kept and math.isfinite(err))):
                undo()
            return err, worst
        finally:
            system.free_states(saved)

    def _run_ratios(self, halves: list[float], whole: list[float], t: float, h: float) -> list[float]:
        """tolerance_per = run: each state's local error as it counts at the run's end (a velocity's carried to its
        position) against its share h/(t_stop − t_start) of the position's tolerance."""
        share = (2 ** self.order - 1) * h / (self.stop - self.start)
        self.largest = [max(m, abs(a)) for m, a in zip(self.largest or map(abs, halves), halves)]
        ratios: list[float] = []
        for a, b, to in zip(halves, whole, self.carried_to):
            error = abs(a - b) * (self.stop - t - h if to >= 0 else 1.0)
            ratios.append(error / (share * (self.atol + self.rtol * self.largest[to if to >= 0 else len(ratios)])))
        return ratios

    @staticmethod
    def _try(algorithm: SteppedAlgorithm, system: CoupledSystem, t: float, h: float) -> bool:
        algorithm.advance(system, t, h)
        return algorithm.status == "ok"
