"""Running a study (mechfmu/studies/study.py): one ``simulate`` per point, on Dask or in this process, the
table streamed as runs finish.

Execution: ``workers`` > 0 starts a Dask LocalCluster of that many worker processes (one thread
each); ``scheduler`` ("tcp://host:8786") uses an existing cluster instead, whose workers must have
mechfmu and the FMUs' folder; ``workers=0`` runs here, one after another. On Dask the runs go in chunks, one task
each, to workers warmed up as they join (mechfmu/studies/on_dask.py). A process keeps the loaded scenario, the
unpacked FMUs and their instances for the next run (mechfmu/studies/worker.py: ``instance_pool``,
``mechfmu.master.simulate.InstancePool``). A run never raises: its failure (a bad value, a diverging run, a worker
that died on it repeatedly) is its row's status and message, and the study goes on. Dask runs again a task whose
worker died (a killed or crashed process): its rows still come.

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
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mechfmu.ssp.overrides import check_overrides
from mechfmu.studies import needs
from mechfmu.studies.study import FIXED_COLUMNS, INDEX_COLUMN, Study, split_settings
from mechfmu.studies.worker import instance_pool, run_point
from mechfmu.studies.worker import scenario as load

__all__ = ["MAX_RUNS", "Table", "Throughput", "check_study", "columns", "instance_pool", "run_point", "run_study"]

#: runs a study may have unless allowed more (``max_runs``, ``--max-runs``): a mistyped axis must not start
#: a study of days (100,000 runs of 0.1 s are about 3 hours on two workers)
MAX_RUNS = 100_000


def columns(study: Study) -> list[str]:
    return [INDEX_COLUMN, *study.axes, *(m.name for m in study.parsed_metrics), *FIXED_COLUMNS]


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
    scenario = load(study.scenario, study.local)
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

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` and flush them to the disk (one fsync)."""
        lines = [(row["index"], [_text(row[c]) for c in self.columns]) for row in rows]
        self.rows.update(lines)
        self._write_rows(lines)

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


class Throughput:
    """What a study's computed runs did per second of its wall time (``mechfmu sweep``'s summary): runs, FMU steps
    (each run's macro steps, counter ``steps``, times the scenario's FMUs; with ``local``, its in-process
    components) and FMI calls (each run's ``fmu_calls`` and its error estimate's ``estimate_fmu_calls``). The
    clock starts when it is made; ``add`` takes each computed row (run_study's ``on_row``) and passes it on to
    ``on_row``; ``dask``: the wall time holds the Dask cluster's start and stop (said in the summary)."""

    def __init__(self, study: Study, on_row: Callable[[dict[str, Any]], None] | None = None, dask: bool = False):
        self.study, self.on_row, self.dask = study, on_row, dask
        self.started = time.perf_counter()
        self.fmus = self.runs = self.steps = self.calls = 0

    def add(self, row: dict[str, Any]) -> None:
        if not self.runs:  # the scenario is loaded (and checked) by now
            self.fmus = len(load(self.study.scenario, self.study.local).components)
        counters = json.loads(row["counters"])
        self.runs += 1
        self.steps += counters.get("steps", 0) * self.fmus
        self.calls += counters.get("fmu_calls", 0) + counters.get("estimate_fmu_calls", 0)
        if self.on_row is not None:
            self.on_row(row)

    def summary(self) -> str:
        """One line: the computed runs, FMU steps and FMI calls per second since the clock started."""
        wall = time.perf_counter() - self.started
        if not self.runs:
            return f"throughput: no run computed ({wall:.2f} s)"
        per = 1 / max(wall, 1e-9)
        where = "its check, the Dask cluster's start and stop included" if self.dask else "its check included"
        return (f"throughput: {self.runs} runs in {wall:.2f} s ({where}): {self.runs * per:.2f} runs/s, "
                f"{self.steps * per:,.0f} FMU steps/s ({self.fmus} FMUs x macro steps), {self.calls * per:,.0f} "
                "FMI calls/s")


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
    if workers > 0 and scheduler is None:
        from mechfmu.studies import forkserver
        forkserver.start()  # its imports go on beside the check
    points = study.points()
    check_study(study, points)
    store = Table(table, study)
    pending = [(i, s) for i, s in enumerate(points) if i not in store.rows]
    counts = {"runs": len(points), "done_before": len(points) - len(pending), "computed": 0, "failed": 0}
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(points), initial=counts["done_before"], unit="run", desc=Path(study.scenario).name)
    counted: set[int] = set()  # the runs the bar has counted (as they finish on a worker, or with their rows)
    lock = threading.Lock()

    def ran(index: int) -> None:
        with lock:
            if bar is not None and index not in counted:
                counted.add(index)
                bar.update()

    def finished(rows: list[dict[str, Any]]) -> None:
        store.add(rows)
        for row in rows:
            counts["computed"] += 1
            counts["failed"] += row["status"] != "ok"
            ran(row["index"])
            if on_row is not None:
                on_row(row)

    try:
        if workers == 0 and scheduler is None:
            try:
                for index, settings in pending:
                    finished([run_point(study, index, settings)])
            finally:
                instance_pool().close()
        elif pending:
            from mechfmu.studies.on_dask import run_on_dask
            run_on_dask(study, pending, workers, scheduler, finished, ran if bar is not None else None)
        store.finish()
    finally:
        store.close()
        if bar is not None:
            bar.close()
    return counts
