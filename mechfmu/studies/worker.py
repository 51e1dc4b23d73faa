"""What computes a study's runs, in a Dask worker or in this process: one run (``run_point``), a chunk of runs
(``run_chunk``, one Dask task) and a worker's warm-up (``warm_up``).

A process keeps the loaded scenario (``scenario``), the unpacked FMUs (once per process,
mechfmu/master/fmu_slave.py) and their instances for the next run: after a run that ended well they are reset, not
freed (``instance_pool``, ``mechfmu.master.simulate.InstancePool``). A run never raises: its failure (a bad value, a
diverging run) is its row's status and message.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from mechfmu.ssp.overrides import check_overrides
from mechfmu.studies.study import Study, split_settings

#: scenarios loaded in this process, by (path, local): a worker loads each once
_scenarios: dict[tuple[str, bool], Any] = {}
#: FMU instances reset for the next run in this process (created on the first FMU-path run)
_pool: Any = None
#: macro steps of a worker's warm-up run: enough for the error estimate's companion run (4 times the step) to run
#: and take its own instances
WARM_UP_STEPS = 8


def scenario(path: str, local: bool):
    """The scenario at ``path``, loaded once per process."""
    from mechfmu.ssp.scenario import load_scenario
    key = (str(Path(path).resolve()), local)
    if key not in _scenarios:
        _scenarios[key] = load_scenario(path, local=local)
    return _scenarios[key]


def instance_pool():
    """This process's ``InstancePool``: a worker instantiates each FMU once and resets it between runs."""
    global _pool
    from mechfmu.master.simulate import InstancePool
    if _pool is None:
        _pool = InstancePool()
    return _pool


def run_point(study: Study, index: int, settings: dict[str, Any]) -> dict[str, Any]:
    """One run of the study: its row. Never raises."""
    from mechfmu.master.simulate import simulate
    started = time.perf_counter()
    metrics = {m.name: math.nan for m in study.parsed_metrics}
    counters: dict[str, Any] = {}
    error: dict[str, Any] = {"error_estimate": math.nan, "error_ratio": math.nan, "error_variable": ""}
    try:
        run, overrides, options = split_settings(study.settings(settings))
        loaded = scenario(study.scenario, study.local)
        overrides = check_overrides(loaded, overrides, study.local, texts=True)
        result = simulate(loaded, algorithm=run.get("algorithm"), step=run.get("step"),
                          stop=run.get("stop"), local=study.local, parameters=overrides,
                          output_variables=study.outputs or None,
                          pool=None if study.local else instance_pool(), **options)
        if result.status == "interrupted":
            raise KeyboardInterrupt  # Ctrl-C in this process: the study stops, the run is not a row
        status, message, counters = result.status, result.message, result.counters
        if result.accuracy is not None:
            error = {"error_estimate": result.accuracy.estimate, "error_ratio": result.accuracy.ratio,
                     "error_variable": result.accuracy.variable}
        if result.ok and result.data is not None:
            for metric in study.parsed_metrics:
                metrics[metric.name] = metric(result.data)
    except Exception as exc:  # a run's failure is its row, never the study's
        status, message = "error", f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else str(exc)
    return {"index": index, **settings, **metrics, "status": status, "message": message,
            "counters": json.dumps(counters, sort_keys=True), **error, "wall_s": time.perf_counter() - started}


def failed_row(study: Study, index: int, settings: dict[str, Any], message: str) -> dict[str, Any]:
    """The row of a run that gave no row of its own (its worker died on it every time Dask tried)."""
    return {"index": index, **settings, **{m.name: math.nan for m in study.parsed_metrics}, "status": "error",
            "message": message, "counters": "{}", "error_estimate": math.nan, "error_ratio": math.nan,
            "error_variable": "", "wall_s": math.nan}


def run_chunk(study: Study, chunk: list[tuple[int, dict[str, Any]]], topic: str | None = None) -> list[dict[str, Any]]:
    """The rows of a chunk of runs, one after another (a Dask task); with ``topic`` each finished run's index is
    sent as a Dask event of that topic (the study's progress bar, run by run)."""
    rows = []
    for index, settings in chunk:
        rows.append(run_point(study, index, settings))
        if topic is not None:
            from distributed import get_worker
            get_worker().log_event(topic, index)
    return rows


def warm_up(study: Study, point: dict[str, Any]) -> float:
    """Make this process ready for the study's runs before the first one: modules imported, the scenario loaded,
    its FMUs unpacked and their instances in the pool (from a run of ``point`` over ``WARM_UP_STEPS`` steps, its
    result thrown away). A failure here is no run's: the first run meets it again and it is that run's row.
    Returns the seconds it took."""
    from mechfmu.master.simulate import simulate
    started = time.perf_counter()
    try:
        run, overrides, options = split_settings(study.settings(point))
        loaded = scenario(study.scenario, study.local)
        overrides = check_overrides(loaded, overrides, study.local, texts=True)
        step = run.get("step", loaded.step_size)
        simulate(loaded, algorithm=run.get("algorithm"), step=step, stop=loaded.start_time + WARM_UP_STEPS * step,
                 local=study.local, parameters=overrides, output_variables=study.outputs or None,
                 pool=None if study.local else instance_pool(), **options)
    except Exception:  # noqa: S110 - the first run reports it
        pass
    return time.perf_counter() - started
