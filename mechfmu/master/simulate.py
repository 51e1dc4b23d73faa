"""simulate(scenario, algorithm=..., observers=...) -> Result.

Sequence: instantiate every slave (FMUs through fmpy, or ``local=True`` for the same components
in-process), set the scenario's parameter and start values, enter initialization, propagate the
outputs in dependency order, exit initialization, then take ``n_steps`` macro steps at
``t_n = t0 + n·h`` (an integer step counter; the step must divide the run, ``step_count``). The
algorithm is the caller's, else the scenario's, else ``auto`` (mechfmu.master.algorithms.auto: chosen from the
instantiated slaves; the choice and why are ``Result.choice``).
A failure never raises out of ``simulate`` once the run has started: the result carries
``status="error"``, the message (naming the slave and the reason) and everything recorded up to the
failure. Guards, each with its message:
- work: more than ``max_steps`` macro steps (default ``MAX_STEPS``) is refused before anything runs
  (so is a non-finite start, stop or step, and a step that does not divide the run), with the count and
  what to do;
- divergence: a recorded output beyond ``divergence_factor`` (default ``DIVERGENCE_FACTOR``, or the
  scenario's ``divergenceFactor``) times the scale of the run, max(1, largest |output| at the
  start) in SI units, ends the run as an error long before overflow (a non-finite value too);
- SIGINT (Ctrl-C): the run stops at the next macro step with status "interrupted" and keeps
  everything computed (``mechfmu.master.interrupt``).
"""
from __future__ import annotations

import functools
import math
import time as _time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mechfmu.components.number_text import measured, number
from mechfmu.master.accuracy import Accuracy, body_positions, estimated, scenario_tolerance
from mechfmu.master.algorithms import CouplingAlgorithm, auto, refuse_unenforced_constraints
from mechfmu.master.algorithms.auto import Choice, chosen_algorithm, switching_slaves
from mechfmu.master.algorithms.intermediate_inputs import prepare as prepare_inner
from mechfmu.master.algorithms.step_control import state_outputs
from mechfmu.master.alongside import beside_allowed
from mechfmu.master.coupled_system import AlgebraicLoopError, CoupledSystem
from mechfmu.master.fmu_profile import collect
from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.grid import (  # noqa: F401 (DIVIDES, dividing_steps: named here before the grid had a module)
    DIVERGENCE_FACTOR,
    DIVIDES,
    MAX_STEPS,
    dividing_steps,
    output_every,
    step_count,
)
from mechfmu.master.instance_pool import InstancePool
from mechfmu.master.instantiation import (  # noqa: F401 (instantiate: imported from here)
    instantiate,
    model_exchange_choice,
    no_instances,
)
from mechfmu.master.interrupt import INTERRUPT
from mechfmu.master.observers import Observer, Recorder
from mechfmu.master.result import Result, Run, declared_outputs, selector
from mechfmu.master.slaves import Slave, SlaveError
from mechfmu.master.step_blocks import blocks_program, step_blocks
from mechfmu.ssp.archive import shown
from mechfmu.ssp.fmi_version import with_fmi_version
from mechfmu.ssp.overrides import check_overrides
from mechfmu.ssp.scenario import Scenario, ScenarioError, load_scenario


def simulate(scenario: Scenario | str | Path, algorithm: str | CouplingAlgorithm | None = None,
             step: float | None = None, stop: float | None = None,
             observers: Iterable[Observer] = (), local: bool = False,
             parameters: dict[str, dict[str, Any]] | None = None, output_variables: list[str] | None = None,
             output_interval: float | None = None, record: bool = True, max_steps: int = MAX_STEPS,
             divergence_factor: float | None = None, output_accepted: bool = False,
             pool: InstancePool | None = None, built_fmus: bool | None = None, outside_sources: bool = False,
             rtol: float | str | None = None, atol: float | str | None = None,
             estimate_error: bool = True, fmi_version: int = 2,
             **options: Any) -> Result:
    """Run a scenario. ``parameters`` overrides values per component: ``{"mass": {"m": 2.0}}``.
    ``options`` go to the algorithm (e.g. ``exchange="strict"``). With ``record`` a ``Recorder`` is
    added if ``observers`` has none; its array is ``Result.data`` (without, ``data`` is None and
    memory stays flat however long the run; ``Result.final`` still has the last point).
    ``output_variables`` (names or glob patterns of ``component.variable``) chooses the recorded
    outputs (default: all); ``output_interval`` [s], a multiple of the step, records every that often
    (and the last point); observers see exactly the recorded points; with an adaptive step
    (``adaptive="on"``) ``output_accepted`` records every accepted step's end as well. Bad arguments (unknown
    components or parameters in ``parameters``, values out of range, too many steps, ...) raise
    ``ValueError`` before anything runs (``mechfmu.ssp.overrides``: texts are read as the parameter's type).
    With a ``pool`` (``InstancePool``) the FMU instances are taken from it and reset into it after a
    run that ended well, for the next run in this process. ``built_fmus``: for a scenario given by its
    path, whether mechfmu's built FMUs may stand in for missing sources, ``outside_sources`` whether source
    files outside its folder may be read (``load_scenario``). The
    scenario's warnings (unconnected physics inputs, built FMUs used) come first in ``Result.warnings``.
    ``rtol``/``atol`` (default: the scenario's, else ``mechfmu.master.accuracy``'s) are the run's tolerance; with
    ``estimate_error`` the run's error is estimated (``Result.accuracy``, ``mechfmu.master.accuracy``: a companion run
    at 4 times the step, or at 1000 times the monolithic master's integrator tolerance, compared as the run goes;
    ``auto`` under a co-simulation master also divides its step for the tolerance, so it estimates even without
    ``estimate_error``: the run is the same) and a run beyond its tolerance ends with a warning naming the cure.
    ``fmi_version`` 3 runs mechfmu's FMUs as their FMI 3.0 builds (``mechfmu.ssp.fmi_version``)."""
    t_wall = _time.perf_counter()
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario, local=local, built_fmus=built_fmus, outside_sources=outside_sources)
    if not local:
        scenario = with_fmi_version(scenario, fmi_version)
    algo: CouplingAlgorithm | None = None  # auto: chosen once the slaves are there
    opts: dict[str, Any] = {}
    if isinstance(algorithm, CouplingAlgorithm):
        algo = algorithm
    else:
        opts = dict(scenario.algorithm_options) if algorithm is None else {}
        opts.update(options)
        algo = auto.algorithm_or_auto(algorithm or scenario.algorithm, opts)
    h = float(step if step is not None else scenario.step_size)
    t0, t_stop = scenario.start_time, float(stop if stop is not None else scenario.stop_time)
    try:
        n_steps = step_count(t0, t_stop, h, max_steps)
    except ValueError as exc:
        raise ScenarioError(scenario.folder, [str(exc)]) from None
    if algo is not None and algo.controller is not None:
        algo.controller.check_interval(h)
    parameters = check_overrides(scenario, parameters, local)
    factor = float(next(f for f in (divergence_factor, scenario.divergence_factor, DIVERGENCE_FACTOR) if f is not None))
    if not (factor > 1 and math.isfinite(factor)):
        raise ValueError(f"divergence factor {number(factor)} must be finite and > 1")
    every = output_every(output_interval, h)
    if output_variables is not None:
        selector(output_variables, declared_outputs(scenario, local))  # a misspelt name is refused now
    observers = list(observers)
    recorder = next((o for o in observers if isinstance(o, Recorder)), None)
    if recorder is None and record:
        recorder = Recorder()
        observers.append(recorder)

    tolerance = scenario_tolerance(scenario, rtol, atol)
    per_run = str(opts.get("tolerance_per", "")) == "run"  # given by name (an algorithm object keeps its options)
    for key, given in (("rtol", rtol), ("atol", atol)):  # the caller's tolerance (per run: the run's) is the adaptive
        if given is None and not (per_run and key not in opts):  # step's too
            continue
        if algo is not None and algo.controller is not None:
            setattr(algo.controller, key, tolerance[key == "atol"])
        elif algo is None:
            opts[key] = str(given if given is not None else tolerance[key == "atol"])
    handed = InstancePool() if pool is None and algo is None and not local else None  # auto's instances, for the run
    try:
        chosen = model_exchange_choice(scenario, local, parameters, opts, tolerance, pool or handed) if algo is None \
            else None
        if chosen is not None:
            algo = chosen[0]
        once = functools.partial(_run, scenario, t0=t0, local=local, parameters=parameters, max_steps=max_steps,
                                 factor=factor, chosen=chosen[1] if chosen is not None else None)
        if not estimate_error and algo is not None:
            if handed is not None:  # the run frees its instances, as without a pool
                handed.keeps = False
            result = once(algo, opts, h, t_stop, n_steps, observers, output_variables, every, output_accepted,
                          pool or handed)
            result.accuracy = Accuracy(*tolerance, note="not asked for (estimate_error=False)")
        else:  # auto's co-simulation divides its step by its companions' estimate: the same run with or without it
            with INTERRUPT.during_run():  # one request for the run and its companions: Ctrl-C in one stops them all
                result = estimated(once, algo, opts, h, t0, t_stop, n_steps, observers, output_variables, every,
                                   output_accepted, pool or handed, tolerance, auto=algo is None or chosen is not None,
                                   beside=(no_instances if local else functools.partial(instantiate, scenario))
                                   if pool is None and beside_allowed() else None)
    finally:
        if handed is not None:
            handed.close()
    result.wall_time = _time.perf_counter() - t_wall
    return result


def _run(scenario: Scenario, algo: CouplingAlgorithm | None, opts: dict[str, Any], h: float, t_stop: float,
         n_steps: int, observers: list[Observer], output_variables: list[str] | None, every: int,
         output_accepted: bool, pool: InstancePool | None, *, t0: float, local: bool,
         parameters: dict[str, dict[str, Any]] | None, max_steps: int, factor: float,
         chosen: Choice | None = None) -> Result:
    """One run of ``simulate`` (its arguments checked): ``algo`` (which ``auto`` chose if ``chosen`` says why), or
    ``auto`` with ``opts`` if None."""
    recorder = next((o for o in observers if isinstance(o, Recorder)), None)
    choice: Choice | None = chosen
    states: list[str] = []
    slaves: dict[str, Slave] = {}
    run: Run | None = None
    status, message, end_time = "ok", "", math.nan
    with INTERRUPT.during_run():
        try:
            slaves = instantiate(scenario, local=local, pool=pool,
                                 model_exchange=algo is not None and not algo.steps_slaves)
            if algo is None:
                algo, choice = chosen_algorithm(slaves, {name: {**scenario.components[name].parameters,
                                                                **(parameters or {}).get(name, {})}
                                                         for name in slaves}, opts)
                if algo.controller is not None:
                    algo.controller.check_interval(h)
            system = CoupledSystem(slaves, algo.coupling_connections(scenario.connections + scenario.derived, slaves))
            algo.inner = prepare_inner(system, algo)
            states = [f"{slave.name}.{n}" for slave, names in state_outputs(system) for n in names]
            listed = set(states)
            states += [name for name in body_positions(slaves) if name not in listed]
            for name, slave in slaves.items():
                values = dict(scenario.components[name].parameters)
                values.update(algo.parameters_for(slave))
                values.update((parameters or {}).get(name, {}))
                slave.set_parameters(values)
            refuse_unenforced_constraints(algo, slaves)
            if algo.controller is not None:
                algo.controller.start, algo.controller.stop = t0, t_stop
            for slave in slaves.values():
                slave.enter_initialization(t0, t_stop)
            algo.initialize(system, t0)
            for slave in slaves.values():
                slave.exit_initialization()
            algo.start(system, t0, min(h, t_stop - t0))
            audit = algo.audit
            columns = None
            if audit is not None and algo.config["energy_audit"] == "columns":
                columns = ([f"energy.{label}" for label in audit.labels], ["J"] * len(audit.labels),
                           lambda: audit.injected)
            run = Run(scenario.name, slaves, n_steps, t0, output_variables, columns)
            run.state_columns = states
            if output_accepted and algo.controller is not None:
                algo.controller.on_accepted = lambda t_point: record_point(run, observers, t_point)
            algo.on_event = lambda t_point: record_point(run, observers, t_point)
            run.read_row()
            bound = factor * max(1.0, max(map(abs, run.row[1:]), default=0.0))
            prepared = blocks_program(algo, system, run, n_steps)
            for obs in observers:
                obs.initialized(run)
            end_time, n = t0, 0
            blocks = step_blocks(algo, run, observers, every, t0, h, t_stop, n_steps, bound, prepared)
            while n < n_steps:
                if INTERRUPT.requested:
                    status, message = "interrupted", f"interrupted ({INTERRUPT.name}) at t={measured(end_time)} s"
                    break
                if blocks is not None and blocks.ready(n):  # many steps a call (the same calls, one pass a block)
                    try:
                        n, check = blocks.take(n, lambda t_point: record_point(run, observers, t_point))
                    finally:
                        end_time = run.time
                    if not check:
                        continue
                else:
                    t = t0 + n * h
                    t_next = min(t0 + (n + 1) * h, t_stop) if n == n_steps - 1 else t0 + (n + 1) * h
                    algo.step(system, t, t_next - t)
                    if algo.status != "ok":
                        status, message = algo.status, algo.message
                        break
                    run.step_index, run.time = n + 1, t_next
                    end_time = t_next
                    n += 1
                    if n % every and n < n_steps:
                        continue
                    record_point(run, observers, t_next)
                problem = divergence(run, bound, factor)
                if problem:
                    status, message = "error", (f"{problem} at t={measured(run.time)} s (step {number(h)} s too large "
                                                f"for {algo.name}?)")
                    break
        except (SlaveError, AlgebraicLoopError, ValueError, OSError) as exc:
            status, message = "error", str(exc)
        finally:
            warnings = scenario.warnings + [w for slave in slaves.values() for w in slave.warnings()]
            for slave in slaves.values():
                try:
                    if pool is not None and pool.keeps and isinstance(slave, FmuSlave) and status == "ok":
                        pool.give_back(slave)
                    else:
                        slave.terminate()
                except Exception as exc:  # keep the first error; a failed terminate must not hide it
                    message = message or f"{slave.name}: terminate failed: {exc}"
        counters = dict(algo.counters) if algo is not None else {"steps": 0}
        counters["fmu_calls"] = sum(s.calls for s in slaves.values())
        result = Result(status, shown(message), recorder.array() if recorder is not None and recorder.count else None,
                        counters, end_time, warnings=[shown(w) for w in warnings],
                        units=run.units if run is not None else {},
                        final=dict(zip(run.column_names, run.row)) if run is not None and run.row else {},
                        profile=collect(slaves.values()))
        if algo is not None:
            result.events = algo.located_events()
            result.steps = algo.controller.steps if algo.controller is not None else []
            result.energy = algo.audit.statistics() if algo.audit is not None else {}
            result.algorithm, result.coupling_order = algo.name, algo.coupling_order()
            result.substeps = algo.config["substeps"] if algo.controller is None else 1
            if algo.controller is not None and algo.controller.estimate == "doubling":
                result.local_errors = algo.controller.global_errors(end_time)
            result.events_on = algo.locator is not None and algo.config["events"] != "off"
        result.state_columns = states
        result.switching = switching_slaves(slaves)
        result.choice = choice.describe() if choice is not None else ""
        try:
            for obs in observers:
                if run is not None:
                    obs.finished(run, result)
        finally:
            for obs in observers:
                getattr(obs, "close", lambda: None)()  # observers written before close() existed
    return result




def record_point(run: Run, observers: list[Observer], t: float) -> None:
    """Read the outputs at time t (a communication point, or an accepted adaptive step's end between two)
    and hand the row to the observers."""
    run.time = t
    run.read_row()
    for obs in observers:
        obs.step_completed(run)


def divergence(run: Run, bound: float, factor: float) -> str:
    """What diverged in the current row ('' if nothing): a non-finite value or one beyond ``bound``."""
    if run.within(bound):
        return ""
    values = run.row[1:]
    bad = [n for n, x in zip(run.column_names[1:], values) if not abs(x) <= bound]
    listed = ", ".join(f"{n} = {run.row[run.column_names.index(n)]:.6g}" for n in bad[:5])
    listed += " ..." if len(bad) > 5 else ""
    if all(map(math.isfinite, values)):
        return (f"the coupled system diverged: {listed} beyond {bound:.3g} ({factor:g} x the run's scale; "
                f"divergence_factor / divergenceFactor sets the bound)")
    return f"the coupled system diverged: non-finite {listed}"
