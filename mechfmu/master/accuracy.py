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
step c·h (c = 4: a quarter of the run's cost; 2 where that one fails, or auto's companion at 2h where it divides
its step; one at 2h confirms an estimate beyond the tolerance whose companion is off the asymptotic range,
``off_range``), the same algorithm, options and parameters, compared on the companion's grid: the run's error is
``|y_run − y_companion| / ((c·N)^p − 1)``, p the coupling's order (``CouplingAlgorithm.coupling_order``). It
estimates the global error of each state where the error goes as the step to the power p (the asymptotic
range), as Richardson's extrapolation assumes; near a switch that the run does not locate the error goes
as h, and the estimate, with p = 2, can be low by up to 3x. With an adaptive step the estimate is the step
controller's instead, and with the monolithic master the ODE integrator's: the sum over the accepted steps of each
state's local error estimate, a bound of the global error where errors do not grow between steps.

Memory: constant. The run goes first, its states written to a temporary file (8 bytes per state and point, on
disk), then the companion, its states to another; the two are compared from the files, keeping each state's largest
difference (``mechfmu.master.companion``). So a run shows its progress and writes its rows from its first step,
and Ctrl-C at any moment keeps every row it computed.
"""
from __future__ import annotations

import copy
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from mechfmu.components.number_text import number
from mechfmu.master.algorithms.monolithic import Monolithic
from mechfmu.master.algorithms.step_control import is_state
from mechfmu.master.alongside import (
    LOOSENED,
    Alongside,
    ForkLater,
    Stopper,
    after_beside,
    after_forked,
    companion_after,
    companion_beside,
    start_beside,
    start_forked,
)
from mechfmu.master.companion import Comparison, StateRows, configuration
from mechfmu.master.instance_pool import InstancePool
from mechfmu.master.interrupt import INTERRUPT
from mechfmu.master.observers import Observer
from mechfmu.master.progress import ProgressBar
from mechfmu.master.result import Accuracy

if TYPE_CHECKING:
    from mechfmu.master.algorithms import CouplingAlgorithm
    from mechfmu.master.result import Result
    from mechfmu.ssp.scenario import Scenario
    Companion = tuple[Result | None, StateRows]  # a companion run's result (None: too few steps) and its rows

RTOL, ATOL = 1e-6, 1e-9
#: ``auto`` divides its step at most this often for its tolerance (then warns)
MAX_SUBSTEPS = 64
OFF_RANGE = 0.05  #: a companion further than this share of a state's range from the run: off the asymptotic range


def body_positions(slaves: dict[str, Any]) -> list[str]:
    """Every body's position outputs, wired or not (a body whose position only a sensor or the result reads):
    Real outputs that are states (``is_state``: not a source's closed form of time) without feed-through named
    ``s``, ``phi``, ``*.s``, ``*.phi``, ``position.*``, ``orientation.*``."""
    def is_position(name: str) -> bool:
        return name in ("s", "phi") or name.endswith((".s", ".phi")) or name.startswith(("position.", "orientation."))
    return [f"{slave.name}.{n}" for slave in slaves.values() for n in slave.outputs() if is_position(n)
            and not slave.variables[n].depends_on and slave.variables[n].type == "Real" and is_state(slave, n)]


def controlled(run: Result, local_errors: dict[str, float], rtol: float, atol: float) -> Accuracy:
    """The adaptive step's estimate: each position state's error from the local errors (``StepController.
    global_errors``) against its tolerance."""
    accuracy = Accuracy(rtol, atol, method="the adaptive step's: its accepted steps' local error estimates summed, "
                                           "a velocity's carried to the run's end")
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


def substeps_chosen(at_2h: Accuracy, order: int, opts: dict[str, Any], h: float) -> tuple[dict[str, Any], str]:
    """``auto``'s co-simulation options with the substeps its tolerance needs (``substeps_for``, from the error its
    companion at 2h has against the one at 4h), and the words for its choice ("" where it needs none)."""
    n = substeps_for(at_2h, 2, order) if not math.isnan(at_2h.estimate) else 1
    if n == 1:
        return opts, ""
    return {**opts, "substeps": str(n)}, (f"; {n} substeps of the step {h:g} s for the tolerance (the error at 2h and "
                                           f"4h: {at_2h.estimate:.2g} {at_2h.unit} in {at_2h.variable} at 2h)")


def warning(accuracy: Accuracy, algorithm: str, step: float, substeps: int, order: int, auto: bool,
            switching: list[str], events: bool, adaptive: bool = False) -> str:
    """The warning for an estimate beyond the tolerance: what was run, the estimate, the cause and the cure."""
    if algorithm == "monolithic":  # no coupling step: the integrator's tolerance is the cure
        return (f"{'auto: ' if auto else ''}monolithic: estimated error {accuracy.estimate:.2g} {accuracy.unit} in "
                f"{accuracy.variable}, beyond the tolerance {accuracy.tolerance:.2g} {accuracy.unit} (rtol "
                f"{accuracy.rtol:g}, atol {accuracy.atol:g}); use a tighter --option ode_rtol=... and ode_atol=... "
                "(the summed local errors shrink about as their 3/4 power), or a looser --rtol/--atol if this "
                "accuracy is enough")
    if adaptive:  # the steps follow the adaptive step's tolerance: that is the cure
        return (f"{'auto: ' if auto else ''}{algorithm} with the adaptive step: estimated error "
                f"{accuracy.estimate:.2g} {accuracy.unit} in {accuracy.variable}, beyond the tolerance "
                f"{accuracy.tolerance:.2g} {accuracy.unit} (rtol {accuracy.rtol:g}, atol {accuracy.atol:g}), the "
                "steps' local errors as they count at the run's end; use --option tolerance_per=run (the steps then "
                "hold that within the tolerance) or a tighter --option rtol/atol, or a looser --rtol/--atol if this "
                "accuracy is enough")
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
        cures.append(f"a smaller --step (auto divides it at most {MAX_SUBSTEPS} times), or --option adaptive=on "
                     "--option tolerance_per=run (steps shortened only where the error is made, e.g. in a contact)")
    if switching and not events:
        cures.append("--option events=on (each switch located within its step)")
    if smaller > 1e-3 * h:
        cures.append(f"a step of about {smaller:.2g} s (the error goes as h^{order})")
    cures.append("or a looser --rtol/--atol if this accuracy is enough")
    return text + "; use " + ", ".join(cures)


def scenario_tolerance(scenario: Scenario, rtol: float | str | None, atol: float | str | None) -> tuple[float, float]:
    """(rtol, atol) of a run: the caller's, else the scenario's, else the defaults; each must be > 0."""
    declared = scenario.tolerance or (None, None)
    chosen = []
    for name, given, written, default in zip(("rtol", "atol"), (rtol, atol), declared, (RTOL, ATOL)):
        value = next(x for x in (given, written, default) if x is not None)
        try:
            figure = float(value)
        except (TypeError, ValueError):
            figure = math.nan
        if not (math.isfinite(figure) and figure > 0):
            raise ValueError(f"tolerance {name} = {number(value)} must be a finite number > 0")
        chosen.append(figure)
    return chosen[0], chosen[1]


def off_range(comparison: Comparison, accuracy: Accuracy) -> bool:
    """Whether the companion is further than ``OFF_RANGE`` of an estimated state's largest |y| from the run: another
    trajectory, not the small perturbation Richardson's extrapolation needs (MSL Oscillator under Jacobi at 4e-3 s:
    333 times; stick_slip at 4e-4 s: 0.7 %, where the estimates at 4h and at 2h agree to 1 %)."""
    at = {name: i for i, name in enumerate(comparison.names)}
    return any(comparison.largest[at[n]] > OFF_RANGE * comparison.scale[at[n]] for n in accuracy.states)


def confirmed(result: Result, companion: Callable[..., tuple[Result | None, Any]], own_rows: Any,
              at_4h: Accuracy, tolerance: tuple[float, float], h: float) -> Accuracy:
    """An estimate beyond the tolerance from a companion at 4h off the asymptotic range (``off_range``), confirmed
    with one at 2h compared with the run's own rows (``own_rows``) as it runs: Richardson at 4h assumes the error
    goes as h^p up to 4h, which a run near where its algorithm fails (the MSL Oscillator under Jacobi at 1e-3 s:
    144 times the true error) does not meet. The estimate at 2h where that companion ran, else the one at 4h."""
    comparison = Comparison(own_rows)
    ran, _ = companion(2, comparison)
    if ran is None or not ran.ok:
        return at_4h
    ratio = 2 * result.substeps / ran.substeps
    method = (f"Richardson: this run against one at {ratio:g} times its step ({2 * h / ran.substeps:g} s), coupling "
              f"order {result.coupling_order} (the one at 4 times its step estimated {at_4h.estimate:.2g} "
              f"{at_4h.unit}, beyond the tolerance: confirmed at 2 times)")
    return comparison.accuracy(result, ratio, result.coupling_order, *tolerance, method)


def estimated(once: Callable[..., Result], algo: CouplingAlgorithm | None, opts: dict[str, Any], h: float, t0: float,
              t_stop: float, n_steps: int, observers: list[Observer], output_variables: list[str] | None, every: int,
              output_accepted: bool, pool: InstancePool | None, tolerance: tuple[float, float],
              auto: bool = False, beside: Callable[[], dict[str, Any]] | None = None) -> Result:
    """The run (``once``, ``simulate``'s) with its error estimated in constant memory (``mechfmu.master.companion``):
    the run goes first, its states written to a temporary file as it runs, then a companion at 4h (a quarter of the
    run's cost; at 2h if the one at 4h fails; ``confirmed`` at 2h where it says the run misses), and the two are
    compared from their files. So the run's rows come from its first step, and Ctrl-C at any moment keeps every row
    computed (during the companion: the whole run, without its estimate; status "interrupted"). ``auto`` choosing a
    co-simulation master (``algo`` None) runs at the step first too, then companions at 4h and 2h, which say how
    many substeps its tolerance needs (``substeps_for``); where it needs some, it runs again with them (its observers
    start anew, the first run's file kept until the second replaces it), compared as it runs with the one at 2h.
    A stream (a FIFO, a terminal) cannot take rows back: there the companions go first. The monolithic master's
    companion runs at ``LOOSENED`` times its integrator's tolerances on a grid ``GRID`` times coarser, beside a long
    run (``beside``) in a child process (``ForkLater``); a run with the adaptive step needs none (it sums its local
    errors). ``auto``: the algorithm is auto's choice (the warning says so)."""
    own_pool = InstancePool() if pool is None else None
    alongside, forked = cast("Alongside | None", None), cast("ForkLater | None", None)
    pool = cast(InstancePool, pool or own_pool)
    twin = copy.deepcopy(algo)  # the companion's algorithm, as the run's before it runs
    files: list[StateRows] = []
    companions: list[Result] = []
    bars = [o for o in observers if isinstance(o, ProgressBar)]

    def companion(factor: int, *compare: Observer, loosened: float = 1.0, stop: threading.Event | None = None,
                  instances: InstancePool | None = None, rows: StateRows | None = None) -> Companion:
        if rows is None:
            rows = StateRows()
            files.append(rows)
        steps = n_steps // factor
        if steps < 2:
            return None, rows
        made = copy.deepcopy(twin)
        if loosened != 1.0 and made is not None:  # the integrator's tolerances (monolithic)
            made.config["ode_rtol"] *= loosened
            made.config["ode_atol"] *= loosened
        shown = ([ProgressBar(bar.stop, bar.file, bar.delay, label="error estimate") for bar in bars] if stop is None
                 else [Stopper(stop)])  # beside the run: the run's bar is the one shown
        ran = once(made, opts, factor * h, t0 + steps * factor * h, steps, [*(compare or [rows]), *shown], None, 1,
                   False, instances or pool)
        companions.append(ran)
        return ran, rows

    def the_run(run_opts: dict[str, Any], comparing: Comparison | None, predicted: str) -> Result:
        watching = [o for o in (comparing, forked) if o is not None]
        ran = once(algo, run_opts, h, t_stop, n_steps, [*observers, *watching], output_variables, every,
                   output_accepted, pool)
        ran.choice += predicted if ran.choice else ""
        ran.accuracy = Accuracy(*tolerance, note="" if ran.ok else f"the run ended {ran.status}")
        return ran

    def at_4h_and_2h() -> tuple[Result | None, Comparison]:
        """auto's companions at 4h, then at 2h compared with it (None where one failed)."""
        coarser, coarser_rows = companion(4)
        comparison = Comparison(coarser_rows, relay=StateRows())
        files.append(comparison.relay)  # type: ignore[arg-type]
        coarse, _ = companion(2, comparison) if coarser is not None and coarser.ok else (None, None)
        return coarse, comparison

    try:
        itself = opts.get("adaptive", "off") == "on" or (algo and algo.controller)  # estimates its local errors
        predicted, factor, note = "", 4, ""
        reference: tuple[Result, StateRows | None] | None = None
        monolithic = isinstance(algo, Monolithic)
        comparing: Comparison | None = None
        own_rows: StateRows | None = None
        choosing = not itself and not monolithic and algo is None and "substeps" not in opts  # auto's substeps
        streamed = any(getattr(o, "stream", False) for o in observers)  # rows a second pass cannot take back
        if choosing and streamed:  # the companions go first, then the run with its substeps
            coarse, comparison = at_4h_and_2h()
            if coarse is not None and coarse.ok:
                at_2h = comparison.accuracy(coarse, 2, coarse.coupling_order, *tolerance, "")
                opts, predicted = substeps_chosen(at_2h, coarse.coupling_order, opts, h)
                reference, factor = (coarse, comparison.relay), 2
                if comparison.relay is not None and comparison.relay.error:
                    note, reference = comparison.relay.error, None
                else:
                    comparing = Comparison(comparison.relay)
        elif not itself:  # the companion goes after the run, or beside it (mechfmu.master.alongside)
            own_rows = StateRows()
            files.append(own_rows)
            comparing = Comparison(None, relay=own_rows, grid=(t0, 2 * h))  # every companion's points are on it
            if beside is not None and not choosing and algo is not None and algo.steps_slaves:
                alongside = start_beside(beside, pool, lambda stop, made: companion_beside(companion, stop, made))
            elif beside is not None and monolithic:
                forked = ForkLater(lambda: start_forked(companion, n_steps, h, files))
        result = the_run(opts, comparing, predicted)
        if not result.ok:
            return result
        if own_rows is not None and comparing is not None and choosing:
            coarse, comparison = at_4h_and_2h()
            error = (comparison.relay.error if comparison.relay is not None else "") or own_rows.error
            note, reference = error, None
            if coarse is not None and coarse.ok and not error:
                reference, factor = (coarse, comparison.relay), 2
                at_2h = comparison.accuracy(coarse, 2, coarse.coupling_order, *tolerance, "")
                opts, predicted = substeps_chosen(at_2h, coarse.coupling_order, opts, h)
                if predicted:  # the run again, with the substeps its tolerance needs
                    companions.append(result)
                    comparing, own_rows = Comparison(comparison.relay), None
                    result = the_run(opts, comparing, predicted)
                    if not result.ok:
                        return result
                elif comparison.relay is not None:
                    comparing.compare_with(comparison.relay)
        elif own_rows is not None and comparing is not None:
            reference, factor, note = (
                after_beside(alongside.result(), companion, n_steps, h) if alongside is not None else
                after_forked(forked, companions) if forked is not None and forked.process is not None else
                companion_after(companion, monolithic, n_steps, h))
            if reference is not None and (reference[1] is None or reference[1].error or own_rows.error):
                note = reference[1].error if reference[1] is not None and reference[1].error else own_rows.error
                reference = None
            if reference is not None and reference[1] is not None:
                comparing.compare_with(reference[1])
        if result.local_errors:
            result.accuracy = controlled(result, result.local_errors, *tolerance)
        elif comparing is None or reference is None:
            result.accuracy = Accuracy(*tolerance, note=note or "no companion run to compare with")
            if "failed" in note:
                result.warnings.append(f"{note}; use --algorithm auto or a smaller --step")
        elif monolithic:
            config = algo.config if algo is not None else {}
            method = (f"this run against one at {LOOSENED:g} times its integrator's tolerance (ode_rtol "
                      f"{LOOSENED * config['ode_rtol']:g}, ode_atol {LOOSENED * config['ode_atol']:g}; on a grid "
                      f"{factor} times coarser): the integrator's error goes as its tolerance")
            result.accuracy = comparing.accuracy(result, LOOSENED, 1, *tolerance, method)
        else:
            ratio = factor * result.substeps / reference[0].substeps
            method = (f"Richardson: this run against one at {ratio:g} times its step "
                      f"({factor * h / reference[0].substeps:g} s), coupling order {result.coupling_order}")
            result.accuracy = comparing.accuracy(result, ratio, result.coupling_order, *tolerance, method)
            if (result.accuracy.exceeded and factor == 4 and own_rows is not None and not own_rows.error
                    and n_steps // 2 >= 2 and off_range(comparing, result.accuracy)):
                result.accuracy = confirmed(result, companion, own_rows, result.accuracy, tolerance, h)
        stopped = any(r.status == "interrupted" for r in companions)
        if stopped:  # the run is whole, its estimate is not: the request to stop still holds
            result.status = "interrupted"
            result.message = (f"interrupted ({INTERRUPT.name}) during the error estimate's companion run, after the "
                              f"run reached its stop at t = {result.end_time:.6g} s: every row is kept, the error "
                              "estimate is not")
            result.accuracy = Accuracy(*tolerance, note="the companion run was interrupted")
        result.counters["estimate_fmu_calls"] = sum(r.counters.get("fmu_calls", 0) for r in companions)
        if result.accuracy is not None and result.accuracy.exceeded:
            result.warnings.append(warning(result.accuracy, result.algorithm, h, result.substeps,
                                           result.coupling_order, auto, result.switching, result.events_on,
                                           bool(result.local_errors)))
        return result
    finally:
        if alongside is not None:
            alongside.cancel()  # done, or no longer needed: joined before its file goes
        if forked is not None:
            forked.cancel()
        for rows in files:
            rows.discard()
        if own_pool is not None:
            own_pool.close()
