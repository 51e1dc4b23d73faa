"""simulate(scenario, algorithm=..., observers=...) -> Result.

Sequence: instantiate every slave (FMUs through fmpy, or ``local=True`` for the same components
in-process), set the scenario's parameter and start values, enter initialization, propagate the
outputs in dependency order, exit initialization, then take ``n_steps`` macro steps at
``t_n = t0 + n·h`` (an integer step counter; the last step is shortened to end at ``stop``).
A failure never raises out of ``simulate``: the result carries ``status="error"``, the message
(naming the slave and the reason) and everything recorded up to the failure. A recorded
non-finite value (a diverging explicit coupling) ends the run the same way.
"""
from __future__ import annotations

import math
import time as _time
from pathlib import Path
from typing import Any, Iterable

from .algorithms import CouplingAlgorithm, make_algorithm, refuse_unenforced_constraints
from .observers import Observer, Recorder
from .result import Result, Run
from .scenario import Scenario, ScenarioError, component_class, load_scenario
from .slaves import FmuSlave, LocalSlave, Slave, SlaveError
from .system import AlgebraicLoopError, CoupledSystem


def instantiate(scenario: Scenario, local: bool = False) -> dict[str, Slave]:
    """One slave per scenario component (FMU via fmpy, or the component in-process)."""
    slaves: dict[str, Slave] = {}
    try:
        for spec in scenario.components.values():
            if local:
                slaves[spec.name] = LocalSlave(spec.name, component_class(spec.fmu))
            else:
                slaves[spec.name] = FmuSlave(spec.name, spec.fmu)
    except Exception:
        for slave in slaves.values():
            slave.terminate()
        raise
    return slaves


def output_every(interval: float | None, h: float) -> int:
    """Steps between recorded points for an output interval (None: every step); it must be a
    positive multiple of the step h."""
    if interval is None:
        return 1
    every = round(interval / h)
    if not (every >= 1 and abs(interval - every * h) <= 1e-9 * interval):
        raise ValueError(f"output interval {interval!r} s must be a positive multiple of the step {h!r} s")
    return every


def simulate(scenario: Scenario | str | Path, algorithm: str | CouplingAlgorithm | None = None,
             step: float | None = None, stop: float | None = None,
             observers: Iterable[Observer] = (), local: bool = False,
             parameters: dict[str, dict[str, Any]] | None = None, output_variables: list[str] | None = None,
             output_interval: float | None = None, **options: Any) -> Result:
    """Run a scenario. ``parameters`` overrides values per component: ``{"mass": {"m": 2.0}}``.
    ``options`` go to the algorithm (e.g. ``exchange="strict"``). A ``Recorder`` is added if
    ``observers`` has none; its array is ``Result.data``. ``output_variables`` (names or glob
    patterns of ``component.variable``) chooses the recorded outputs (default: all);
    ``output_interval`` [s], a multiple of the step, records every that often (and the last point);
    observers see exactly the recorded points."""
    t_wall = _time.perf_counter()
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario, local=local)
    if isinstance(algorithm, CouplingAlgorithm):
        algo = algorithm
    else:
        opts = dict(scenario.algorithm_options) if algorithm is None else {}
        opts.update(options)
        algo = make_algorithm(algorithm or scenario.algorithm, **opts)
    h = float(step if step is not None else scenario.step_size)
    t0, t_stop = scenario.start_time, float(stop if stop is not None else scenario.stop_time)
    if not (h > 0 and math.isfinite(h)) or not t_stop > t0:
        raise ScenarioError(scenario.folder, [f"step {h!r} must be positive and stop {t_stop!r} after start {t0!r}"])
    n_steps = max(1, math.ceil((t_stop - t0) / h - 1e-9))
    every = output_every(output_interval, h)
    observers = list(observers)
    recorder = next((o for o in observers if isinstance(o, Recorder)), None)
    if recorder is None:
        recorder = Recorder()
        observers.append(recorder)

    slaves: dict[str, Slave] = {}
    run: Run | None = None
    status, message, end_time = "ok", "", math.nan
    try:
        slaves = instantiate(scenario, local=local)
        system = CoupledSystem(slaves, algo.coupling_connections(scenario.connections, slaves))
        for name, slave in slaves.items():
            values = dict(scenario.components[name].parameters)
            values.update((parameters or {}).get(name, {}))
            slave.set_parameters(values)
        refuse_unenforced_constraints(algo, slaves)
        for slave in slaves.values():
            slave.enter_initialization(t0, t_stop)
        algo.initialize(system, t0)
        for slave in slaves.values():
            slave.exit_initialization()
        run = Run(scenario.name, slaves, n_steps, t0, output_variables)
        run.read_row()
        for obs in observers:
            obs.initialized(run)
        end_time = t0
        for n in range(n_steps):
            t = t0 + n * h
            t_next = min(t0 + (n + 1) * h, t_stop) if n == n_steps - 1 else t0 + (n + 1) * h
            algo.step(system, t, t_next - t)
            if algo.status != "ok":
                status, message = algo.status, algo.message
                break
            run.step_index, run.time = n + 1, t_next
            end_time = t_next
            if (n + 1) % every and n + 1 < n_steps:
                continue
            row = run.read_row()
            for obs in observers:
                obs.step_completed(run)
            if not all(map(math.isfinite, row)):
                bad = [name for name, x in zip(run.column_names, row) if not math.isfinite(x)]
                status, message = "error", (f"the coupled system diverged: non-finite {', '.join(bad[:5])}"
                                            f"{' ...' if len(bad) > 5 else ''} at t={t_next!r} "
                                            f"(step {h!r} too large for {algo.name}?)")
                break
    except (SlaveError, AlgebraicLoopError, ValueError) as exc:
        status, message = "error", str(exc)
    finally:
        for slave in slaves.values():
            try:
                slave.terminate()
            except Exception as exc:  # keep the first error; a failed terminate must not hide it
                message = message or f"{slave.name}: terminate failed: {exc}"
    counters = dict(algo.counters)
    counters["fmu_calls"] = sum(s.calls for s in slaves.values())
    warnings = [w for slave in slaves.values() for w in slave.warnings()]
    result = Result(status, message, recorder.array() if recorder.rows else None, counters, end_time,
                    warnings=warnings, units=run.units if run is not None else {})
    result.wall_time = _time.perf_counter() - t_wall
    if run is not None:
        for obs in observers:
            obs.finished(run, result)
    return result
