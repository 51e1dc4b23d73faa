"""Running a study (mechfmu/studies/study.py): one ``simulate`` per point, on Dask or in this process, the
table streamed as runs finish.

Execution: ``workers`` > 0 starts a Dask LocalCluster of that many worker processes (one thread
each); ``scheduler`` ("tcp://host:8786") uses an existing cluster instead, whose workers must have
mechfmu and the FMUs' folder; ``workers=0`` runs here, one after another. A worker keeps the loaded
scenario, the unpacked FMUs and their instances for the next run (``_scenario``; FMUs are unpacked once
per process, mechfmu/master/slaves.py; instances are reset, not freed, after a run that ended well:
``instance_pool``, ``mechfmu.master.simulate.InstancePool``). A run never raises: its failure (a bad value, a
diverging run, a worker that died on it repeatedly) is its row's status and message, and the study goes
on. Dask runs again a task whose worker died (a killed or crashed process): its row still comes.

Table: one row per run, columns ``index``, the varied settings, the metrics, ``status``,
``message``, ``counters`` (JSON), the run's error estimate (``mechfmu.master.accuracy``: ``error_estimate`` in the
unit of ``error_variable``, its worst state, and ``error_ratio``, estimate over tolerance; nan if not estimated),
``wall_s`` (the run's wall time, the only column that differs
between two runs of one study). A ``.csv`` table is appended to as runs finish (floats written
with ``repr``: exact) and sorted by index at the end; for a ``.parquet`` table the rows stream to
``<table>.csv`` and the Parquet file is written at the end. ``<table>.study.json`` holds the study's
definition: a table of the same study resumes, its finished runs are not computed again, and the
finished table equals an uninterrupted study's.
"""
from __future__ import annotations

import csv
import json
import logging
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mechfmu.ssp.overrides import check_overrides
from mechfmu.studies import needs
from mechfmu.studies.study import FIXED_COLUMNS, INDEX_COLUMN, Study, split_settings

#: runs a study may have unless allowed more (``max_runs``, ``--max-runs``): a mistyped axis must not start
#: a study of days (100,000 runs of 0.1 s are about 3 hours on two workers)
MAX_RUNS = 100_000
#: a local cluster's workers, nannies and scheduler wake up rarely: no statistical profiler (a thread
#: sampling every 10 ms), loop ticks, system and memory monitors every second or 5 s instead of every
#: 20-500 ms; on two cores a run then takes as long on a worker as here (benchmarks/study_throughput.py)
QUIET_WORKERS = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                 "distributed.admin.system-monitor.interval": "5s", "distributed.worker.memory.monitor-interval": "5s"}
#: scenarios loaded in this process, by (path, local): a worker loads each once
_scenarios: dict[tuple[str, bool], Any] = {}
#: FMU instances reset for the next run in this process (created on the first FMU-path run)
_pool: Any = None


def columns(study: Study) -> list[str]:
    return [INDEX_COLUMN, *study.axes, *(m.name for m in study.parsed_metrics), *FIXED_COLUMNS]


def _scenario(path: str, local: bool):
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


def check_study(study: Study, points: list[dict[str, Any]]) -> None:
    """Refuse, before any run of ``points``, what would make runs fail whatever the physics: an unknown
    component, parameter, algorithm or option, a value a parameter does not take (every value of every axis),
    a step or stop that is not a number or a step that does not divide the run, a metric over an output the
    scenario does not have. ValueError listing every problem."""
    from mechfmu.master.algorithms import make_algorithm
    from mechfmu.master.algorithms.auto import AUTO, algorithm_names
    from mechfmu.master.result import declared_outputs
    from mechfmu.master.simulate import MAX_STEPS, step_count
    from mechfmu.ssp.scenario import ScenarioError
    scenario = _scenario(study.scenario, study.local)
    problems: list[str] = []
    values: dict[str, dict[str, Any]] = {}  # every value each setting takes, by its text
    runs: dict[str, dict[str, Any]] = {}    # every distinct algorithm with its options
    grids: dict[str, dict[str, Any]] = {}   # every distinct step and stop
    for point in points:
        settings = study.settings(point)
        for name, value in settings.items():
            values.setdefault(name, {}).setdefault(repr(value), value)
        algorithm = {k: v for k, v in settings.items() if k == "algorithm" or k.startswith("option.")}
        runs.setdefault(repr(sorted(algorithm.items())), algorithm)
        grid = {k: v for k, v in settings.items() if k in ("step", "stop")}
        grids.setdefault(repr(sorted(grid.items())), grid)
    for name, taken in values.items():
        for value in taken.values():
            try:
                run, overrides, _ = split_settings({name: value})
                # a value the component refuses as it initializes is that run's error, not the study's
                check_overrides(scenario, overrides, study.local, texts=True, initialization=False)
            except ScenarioError as exc:
                problems += exc.problems
                break  # one problem per setting
            except ValueError as exc:
                problems.append(f"{name} = {value!r}: not a number" if name in ("step", "stop") else str(exc))
                break
            if run.get("algorithm") is not None and run["algorithm"] not in algorithm_names():
                problems.append(f"algorithm {run['algorithm']!r}: use one of {', '.join(algorithm_names())}")
                break
    for settings in runs.values():
        chosen = settings.get("algorithm")
        if chosen is not None and chosen not in algorithm_names():
            continue  # said above
        if (chosen or scenario.algorithm) == AUTO:
            continue  # its options are the chosen algorithm's: checked when it is chosen
        try:
            _, _, options = split_settings(settings)
            make_algorithm(chosen or scenario.algorithm,
                           **{**(scenario.algorithm_options if chosen is None else {}), **options})
        except ValueError as exc:
            problems.append(str(exc))
    for grid in grids.values():
        try:
            run, _, _ = split_settings(grid)
        except ValueError:
            continue  # not a number: said above
        try:
            step_count(scenario.start_time, run.get("stop", scenario.stop_time), run.get("step", scenario.step_size),
                       MAX_STEPS)
        except ValueError as exc:
            problems.append(str(exc))
    outputs = set(declared_outputs(scenario, study.local))
    for metric in study.parsed_metrics:
        missing = [column for column in metric.outputs if column != "time" and column not in outputs]
        if missing:
            components = ", ".join(sorted({o.split(".", 1)[0] for o in outputs}))
            problems.append(f"metric {metric.name} = {metric.text!r}: {', '.join(missing)} is not an output of the "
                            f"scenario (outputs are component.variable; components: {components})")
    if problems:
        unique = list(dict.fromkeys(problems))
        raise ValueError(f"study of {Path(study.scenario).name}: {len(unique)} problem(s), nothing was run:\n"
                         + "\n".join(f"  - {problem}" for problem in unique))


def run_point(study: Study, index: int, settings: dict[str, Any]) -> dict[str, Any]:
    """One run of the study (on a worker): its row. Never raises."""
    from mechfmu.master.simulate import simulate
    started = time.perf_counter()
    metrics = {m.name: math.nan for m in study.parsed_metrics}
    counters: dict[str, Any] = {}
    error: dict[str, Any] = {"error_estimate": math.nan, "error_ratio": math.nan, "error_variable": ""}
    try:
        run, overrides, options = split_settings(study.settings(settings))
        scenario = _scenario(study.scenario, study.local)
        overrides = check_overrides(scenario, overrides, study.local, texts=True)
        result = simulate(scenario, algorithm=run.get("algorithm"), step=run.get("step"),
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


def _text(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


class Table:
    """The study's rows on disk (see the module): finished runs read back, new ones appended."""

    def __init__(self, path: str | Path, study: Study):
        self.path = Path(path)
        self.parquet = self.path.suffix == ".parquet"
        self.journal = self.path.with_name(self.path.name + ".csv") if self.parquet else self.path
        self.definition = self.path.with_name(self.path.name + ".study.json")
        self.columns = columns(study)
        self.rows: dict[int, list[str]] = {}
        self._read(study)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.definition.write_text(json.dumps({"fingerprint": study.fingerprint(), "study": study.definition()},
                                              indent=1, default=str))
        fresh = not self.journal.exists()
        self._file = self.journal.open("a", newline="")
        self._writer = csv.writer(self._file)
        if fresh:
            self._writer.writerow(self.columns)
            self._write_rows(sorted(self.rows.items()))  # a finished Parquet table resumed

    def _read(self, study: Study) -> None:
        existing = [p for p in (self.journal, self.path) if p.exists()]
        if not existing:
            return
        known = json.loads(self.definition.read_text()) if self.definition.exists() else {}
        if known.get("fingerprint") != study.fingerprint():
            raise ValueError(f"{existing[0]} exists and holds another study's runs (or has no {self.definition.name}); "
                             "remove it or write the table elsewhere")
        if self.journal.exists():
            with self.journal.open(newline="") as f:
                lines = list(csv.reader(f))
            for line in lines[1:]:
                if len(line) == len(self.columns):  # a line cut by an interrupt is computed again
                    self.rows[int(line[0])] = line
        elif self.parquet:
            import pyarrow.parquet as pq
            for record in pq.read_table(self.path).to_pylist():
                self.rows[record["index"]] = [_text(record[c]) for c in self.columns]

    def _write_rows(self, rows) -> None:
        for _, line in rows:
            self._writer.writerow(line)
        self._file.flush()
        os.fsync(self._file.fileno())

    def add(self, row: dict[str, Any]) -> None:
        line = [_text(row[c]) for c in self.columns]
        self.rows[row["index"]] = line
        self._write_rows([(row["index"], line)])

    def finish(self) -> None:
        """Close the journal and write the table sorted by run index."""
        self._file.close()
        ordered = [self.rows[i] for i in sorted(self.rows)]
        if self.parquet:
            import pyarrow as pa
            import pyarrow.parquet as pq
            data = {c: [_value(line[k]) for line in ordered] for k, c in enumerate(self.columns)}
            pq.write_table(pa.table(data), self.path)
            self.journal.unlink()
            return
        partial = self.path.with_name(self.path.name + ".tmp")
        with partial.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(self.columns)
            writer.writerows(ordered)
        partial.replace(self.path)

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


def _value(text: str) -> Any:
    try:
        return int(text) if text.lstrip("-").isdigit() else float(text)
    except ValueError:
        return text


def run_study(study: Study, table: str | Path, workers: int = 2, scheduler: str | None = None,
              progress: bool = False, on_row: Callable[[dict[str, Any]], None] | None = None,
              max_runs: int = MAX_RUNS) -> dict[str, int]:
    """Run every point of ``study`` not yet in ``table`` (see the module); returns the counts
    ``runs``, ``done_before``, ``computed``, ``failed``. A study of more than ``max_runs`` runs is refused
    before anything is made or run, and so is a table that is not a regular file (``/dev/null``, a FIFO: a
    table is read back to resume)."""
    from mechfmu.master.observers import is_stream
    if is_stream(table):
        raise ValueError(f"{table}: a study's table is read back to resume the study; give a regular file path")
    if study.run_count > max_runs:
        raise ValueError(f"study of {Path(study.scenario).name}: {study.run_count:,} runs is more than the "
                         f"{max_runs:,} allowed; make the axes coarser, or allow more with --max-runs N "
                         "(max_runs=N)")
    if workers or scheduler is not None:
        needs("dask.distributed", "running a study on Dask workers (workers > 0 or a scheduler; workers = 0, "
                                  "--workers 0, runs it in this process without Dask)")
    if Path(table).suffix == ".parquet":
        needs("pyarrow", f"the Parquet table {table}")
    points = study.points()
    check_study(study, points)
    store = Table(table, study)
    pending = [(i, s) for i, s in enumerate(points) if i not in store.rows]
    counts = {"runs": len(points), "done_before": len(points) - len(pending), "computed": 0, "failed": 0}
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(points), initial=counts["done_before"], unit="run", desc=Path(study.scenario).name)

    def finished(row: dict[str, Any]) -> None:
        store.add(row)
        counts["computed"] += 1
        counts["failed"] += row["status"] != "ok"
        if bar is not None:
            bar.update()
        if on_row is not None:
            on_row(row)

    try:
        if workers == 0 and scheduler is None:
            try:
                for index, settings in pending:
                    finished(run_point(study, index, settings))
            finally:
                instance_pool().close()
        else:
            _run_on_dask(study, pending, workers, scheduler, finished)
        store.finish()
    finally:
        store.close()
        if bar is not None:
            bar.close()
    return counts


def _run_on_dask(study: Study, pending: list[tuple[int, dict[str, Any]]], workers: int, scheduler: str | None,
                 finished: Callable[[dict[str, Any]], None]) -> None:
    import dask
    from dask.distributed import Client, LocalCluster, as_completed
    cluster = None
    if scheduler is None:
        if workers < 1:
            raise ValueError(f"workers = {workers}: a local cluster needs at least 1 (0 runs in this process)")
        with dask.config.set(QUIET_WORKERS):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
    client = Client(scheduler or cluster)
    try:
        fingerprint = study.fingerprint()
        futures = {client.submit(run_point, study, index, settings, key=f"mechfmu-{fingerprint}-{index}"):
                   (index, settings) for index, settings in pending}
        for future in as_completed(futures):
            index, settings = futures[future]
            try:
                row = future.result()
            except Exception as exc:  # the worker died on this run every time Dask tried it
                row = {"index": index, **settings, **{m.name: math.nan for m in study.parsed_metrics},
                       "status": "error", "message": f"worker failed: {type(exc).__name__}: {exc}",
                       "counters": "{}", "error_estimate": math.nan, "error_ratio": math.nan,
                       "error_variable": "", "wall_s": math.nan}
            finished(row)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
