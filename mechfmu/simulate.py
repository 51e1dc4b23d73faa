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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .algorithms import (AlgebraicLoopError, CoupledSystem, CouplingAlgorithm, make_algorithm,
                         refuse_unenforced_constraints)
from .observers import Observer, Recorder
from .scenario import Scenario, ScenarioError, load_scenario
from .slaves import FmuSlave, LocalSlave, Slave, SlaveError


@dataclass
class Result:
    status: str                      # "ok" or "error"
    message: str
    data: np.ndarray | None          # structured array, "time" first (None if nothing was recorded)
    counters: dict[str, int] = field(default_factory=dict)
    end_time: float = math.nan       # last completed communication point
    wall_time: float = 0.0
    warnings: list[str] = field(default_factory=list)  # what the slaves reported as warnings

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def summary(self) -> str:
        counters = ", ".join(f"{k} {v}" for k, v in self.counters.items())
        text = f"{self.status}: reached t = {self.end_time:.6g} s in {self.wall_time:.2f} s wall ({counters})"
        text += "".join(f"\nwarning: {w}" for w in self.warnings)
        return text + (f"\n{self.message}" if self.message else "")


class Run:
    """What observers see of a running simulation."""

    def __init__(self, scenario_name: str, slaves: dict[str, Slave], n_steps: int, t0: float):
        self.scenario_name = scenario_name
        self.slaves = slaves
        self.n_steps = n_steps
        self.step_index = 0
        self.time = t0
        self._reads = [(s, s.outputs()) for s in slaves.values()]
        self.column_names = ["time"] + [f"{s.name}.{n}" for s, names in self._reads for n in names]

    def row(self) -> tuple[float, ...]:
        values = [self.time]
        for slave, names in self._reads:
            if names:
                values.extend(slave.get(names))
        return tuple(values)


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


def component_class(fmu: Path):
    """The in-process component class behind one of our FMUs (by model identifier)."""
    from fmpy import read_model_description
    from mechfmu_components import COMPONENTS
    identifier = read_model_description(str(fmu)).coSimulation.modelIdentifier
    if identifier not in COMPONENTS:
        raise SlaveError(f"{fmu.name}: {identifier} is not a mechfmu component; run it as an FMU")
    return COMPONENTS[identifier]


def simulate(scenario: Scenario | str | Path, algorithm: str | CouplingAlgorithm | None = None,
             step: float | None = None, stop: float | None = None,
             observers: Iterable[Observer] = (), local: bool = False,
             parameters: dict[str, dict[str, Any]] | None = None, **options: Any) -> Result:
    """Run a scenario. ``parameters`` overrides values per component: ``{"mass": {"m": 2.0}}``.
    ``options`` go to the algorithm (e.g. ``exchange="strict"``). A ``Recorder`` is added if
    ``observers`` has none; its array is ``Result.data``."""
    t_wall = _time.perf_counter()
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
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
        run = Run(scenario.name, slaves, n_steps, t0)
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
            for obs in observers:
                obs.step_completed(run)
            if recorder.rows and not all(map(math.isfinite, recorder.rows[-1])):
                bad = [name for name, x in zip(recorder.names, recorder.rows[-1]) if not math.isfinite(x)]
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
                    warnings=warnings)
    result.wall_time = _time.perf_counter() - t_wall
    if run is not None:
        for obs in observers:
            obs.finished(run, result)
    return result
