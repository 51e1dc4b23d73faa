"""One run of an exported archive in fmpy's ``simulate_ssp`` or in libcosim, as a process of its own, for
``benchmarks/side_by_side.py``: it imports nothing but the tool (and what the tool imports), so the process's wall
time is the tool's. It writes its result to OUT and prints one JSON line: the run's own time (``run``, from the
archive's load to the result in memory) and the result file.

    python3 benchmarks/tool_process.py fmpy ARCHIVE STOP STEP OUT.npy
    python3 benchmarks/tool_process.py libcosim ARCHIVE STEPS OUT.json COLUMN ...

fmpy: every row ``simulate_ssp`` returns (its step times and the SSD's connectors; ``numpy.save``). libcosim: the
COLUMNs (``component.variable``) after each of STEPS steps of its fixed-step master (the step is the archive's
``osp:FixedStepAlgorithm``), recorded by its time-series observer and read after the run, with the steps' times;
a column the archive lacks is left out.
"""
import json
import os
import sys
import time


def fmpy(archive: str, stop: float, step: float, out: str) -> None:
    import numpy as np
    from fmpy.ssp.simulation import simulate_ssp

    started = time.perf_counter()
    rows = simulate_ssp(archive, stop_time=stop, step_size=step)
    run = time.perf_counter() - started
    np.save(out, rows)
    print(json.dumps({"run": run}), flush=True)


def libcosim(archive: str, steps: int, out: str, columns: list[str]) -> None:
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    log_output_level(CosimLogLevel.ERROR)
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimObserver import CosimObserver

    started = time.perf_counter()
    execution = CosimExecution.from_ssp_file(archive)
    observer = CosimObserver.create_time_series(steps + 10)
    execution.add_observer(observer)
    index = {info.name.decode(): info.index for info in execution.slave_infos()}
    reads = {}
    for column in columns:
        component, variable = column.split(".", 1)
        if component in index:
            refs = {v.name.decode(): v.reference for v in execution.slave_variables(index[component])}
            if variable in refs:
                reads[column] = (index[component], refs[variable])
                observer.start_time_series(index[component], refs[variable], CosimVariableType.REAL)
    done = execution.step(steps)
    run = time.perf_counter() - started
    result = {}
    for column, (slave, ref) in reads.items():
        nanoseconds, _, values = observer.time_series_real_samples(slave, ref, 1, steps)
        result["time"], result[column] = [t * 1e-9 for t in nanoseconds], values
    with open(out, "w") as file:
        json.dump(result, file)
    print(json.dumps({"run": run, "completed": bool(done)}), flush=True)
    # libcosim torn down while Python is alive, then out without the interpreter's teardown (as
    # mechfmu.crosscheck.tools does: libcosim freeing FMUs during that teardown once corrupted the heap)
    del observer, execution
    os._exit(0)


if __name__ == "__main__":
    if sys.argv[1] == "fmpy":
        fmpy(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    else:
        libcosim(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:])
