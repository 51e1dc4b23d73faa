"""``mechfmu crosscheck SCENARIO``: one scenario through several tools, compared pair by pair.

Runs, over the same steps:
- ours, dependency-ordered Jacobi (the default) and strict Jacobi (libcosim's order), through the FMUs;
- ours in-process (the same components without FMI);
- libcosim (libcosimpy, its own process) on the scenario exported as an .ssp archive;
- for a scenario with a constraint, its own constraint-solving algorithm, through the FMUs and in-process
  (libcosim cannot solve a constraint force); for one whose master is the monolithic master, that master (the
  FMUs as Model Exchange FMUs) through the FMUs and in-process;
- the scenario's reference result, where it has one (``reference/*.csv``), with its own algorithm.

Pairs and what they must show (the verdicts):
- FMUs vs in-process: bit for bit (the FMU wrapper adds nothing);
- strict Jacobi vs libcosim: the same algorithm, so equal to 1e-9 of each signal's range (round-off
  of the step sizes only, see ``SAME_ALGORITHM``), on the outputs that do not feed through (libcosim
  reads a connector force before its new inputs arrive);
- reference: inside the Modelica Association's tube (2e-3 of time span and signal range);
- ordered vs strict Jacobi: reported, not judged (different exchange orders, both first order).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import Scenario, load_scenario

#: same algorithm in two tools. Only the step sizes differ: libcosim's times are integer nanoseconds
#: converted to seconds, ours are t0 + n·h; each tool steps the difference of two consecutive times,
#: and the two differ by an ulp in most steps. Given libcosim's times, our strict Jacobi equals
#: libcosim exactly (limit_stops, 20,000 steps: 0.0); with ours, smooth runs agree to ~1e-14 and 40
#: stiff impacts amplify the ulps to 4e-11 (limit_stops). 1e-9 of the range separates that from a real
#: difference (a lagged or missing exchange shows at 1e-4 and more).
SAME_ALGORITHM = 1e-9


@dataclass
class Comparison:
    pair: str
    outputs: int
    difference: float        # largest difference relative to the signal's range (nan: not run)
    tolerance: float | None  # None: reported only
    note: str = ""
    tolerance_label: str = ""  # how the tolerance reads in the table, if not the number

    @property
    def passed(self) -> bool:
        return self.tolerance is None or (np.isfinite(self.difference) and self.difference <= self.tolerance)


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """max |a − b| relative to the size of ``a`` (its range or largest magnitude, whichever is larger)."""
    return float(np.max(np.abs(a - b))) / max(float(np.ptp(a)), float(np.max(np.abs(a))), 1e-300)


def relative_difference(a: np.ndarray, b: np.ndarray, columns: list[str]) -> float:
    return max((relative_error(a[c], b[c]) for c in columns), default=0.0)


def state_outputs(scenario: Scenario) -> list[str]:
    """``component.output`` of every output that depends on no input within a step (body states):
    the ones two tools with different read orders can compare (libcosim reads a connector force
    before its new inputs arrive)."""
    from mechfmu.ssp.scenario import component_class
    names = []
    for name, spec in scenario.components.items():
        try:
            cls = component_class(spec.fmu)
        except ValueError:
            continue
        names += [f"{name}.{o.name}" for o in cls.outputs if not o.depends_on]
    return names


def run_libcosim(archive: Path, n_steps: int, columns: list[str]) -> np.ndarray:
    """``columns`` after each of ``n_steps`` libcosim steps (its own process: libcosim steps FMUs from a
    worker thread and keeps its own state)."""
    proc = subprocess.run([sys.executable, "-m", "mechfmu.crosscheck.tools", "--libcosim", str(archive), str(n_steps),
                           *columns], capture_output=True, text=True, timeout=3600)
    try:
        rows = np.array(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (IndexError, ValueError):
        rows = None
    if rows is None or rows.shape != (n_steps, len(columns)):
        raise RuntimeError(f"libcosim failed (exit status {proc.returncode}): {proc.stderr[-2000:]}")
    if proc.returncode != 0:  # all its results were delivered; only its teardown failed: say so, keep them
        warnings.warn(f"libcosim exited with status {proc.returncode} after delivering all {n_steps} steps: "
                      f"{proc.stderr.strip()[-300:]}", stacklevel=2)
    return rows


def _libcosim_worker(archive: str, n_steps: int, columns: list[str]) -> None:
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    log_output_level(CosimLogLevel.ERROR)
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimObserver import CosimObserver

    execution = CosimExecution.from_ssp_file(archive)
    observer = CosimObserver.create_last_value()
    execution.add_observer(observer)
    index = {info.name.decode(): info.index for info in execution.slave_infos()}
    reads = []
    for column in columns:
        component, variable = column.split(".", 1)
        refs = {v.name.decode(): v.reference for v in execution.slave_variables(index[component])}
        reads.append((index[component], refs[variable]))
    rows = []
    for _ in range(n_steps):
        execution.step(1)
        rows.append([observer.last_real_values(slave, [ref])[0] for slave, ref in reads])
    print(json.dumps(rows), flush=True)
    # tear libcosim down while Python is fully alive (it frees the FMU instances, which call into
    # Python), then leave without the interpreter's own teardown: left to it, the order in which
    # libcosim's objects and the interpreter go away is not fixed, and libcosim freeing a Python FMU
    # during that teardown corrupted the heap once in about 30 CI runs
    del observer, execution
    os._exit(0)


def crosscheck(path: str | Path, steps: int | None = None, libcosim: bool = True) -> list[Comparison]:
    """Every comparison for the scenario at ``path`` over its first ``steps`` steps (default: all); without
    ``libcosim`` (libcosimpy not installed) its pair is listed as not run."""
    from mechfmu.master.algorithms import ALGORITHMS, constraint_slaves
    from mechfmu.master.simulate import instantiate
    from mechfmu.ssp import export_ssp

    scenario = load_scenario(path)
    n_steps = round((scenario.stop_time - scenario.start_time) / scenario.step_size)
    n_steps = min(n_steps, steps) if steps else n_steps
    stop = scenario.start_time + n_steps * scenario.step_size
    slaves = instantiate(scenario, local=True)
    for name, slave in slaves.items():
        slave.set_parameters(scenario.components[name].parameters)
    constrained = bool(constraint_slaves(slaves))
    comparisons = []
    model_exchange = scenario.algorithm in ALGORITHMS and not ALGORITHMS[scenario.algorithm].steps_slaves
    own = scenario.algorithm if constrained or model_exchange else "jacobi"
    fmus, local = (simulate(scenario, algorithm=own, stop=stop, local=flag) for flag in (False, True))
    for r in (fmus, local):
        if not r.ok:
            raise RuntimeError(f"{scenario.name}: {own} failed: {r.message}")
    assert fmus.data is not None and local.data is not None  # an ok run recorded its rows (default Recorder)
    names = [n for n in fmus.data.dtype.names or () if n != "time"]
    identical = all(np.array_equal(fmus.data[n], local.data[n]) for n in names)
    comparisons.append(Comparison(f"{own} FMUs vs in-process", len(names), 0.0 if identical else
                                  relative_difference(fmus.data, local.data, names), 0.0))
    accuracy = fmus.accuracy
    if accuracy is not None:  # the run's own error estimate against its tolerance (mechfmu.master.accuracy)
        comparisons.append(Comparison(f"{own} error estimate / tolerance", len(accuracy.states), accuracy.ratio,
                                      None, accuracy.describe()))  # reported: the crosscheck judges the tools
    if constrained:
        comparisons.append(Comparison("strict Jacobi vs libcosim", 0, float("nan"), None,
                                      "n/a: a constraint force needs a solving master"))
    else:
        strict = simulate(scenario, algorithm="jacobi", exchange="strict", stop=stop)
        assert strict.data is not None  # recorded: these FMUs initialized in the run above
        states = [n for n in state_outputs(scenario) if n in (strict.data.dtype.names or ())]
        comparisons.append(Comparison("ordered vs strict Jacobi", len(states),
                                      relative_difference(fmus.data, strict.data, states), None,
                                      "different exchange orders: reported, not judged"))
        if libcosim:
            with tempfile.TemporaryDirectory(prefix="mechfmu_crosscheck_") as tmp:
                archive = export_ssp(path, Path(tmp) / f"{scenario.name}.ssp", unsolved_constraints_allowed=True)
                theirs = run_libcosim(archive, n_steps, states)
            worst = max((relative_error(strict.data[c][1:n_steps + 1], theirs[:, i]) for i, c in enumerate(states)),
                        default=0.0)
            comparisons.append(Comparison("strict Jacobi vs libcosim", len(states), worst, SAME_ALGORITHM))
        else:
            comparisons.append(Comparison("strict Jacobi vs libcosim", 0, float("nan"), None,
                                          "not run: libcosimpy is not installed"))
    references = sorted((scenario.folder / "reference").glob("*.csv"))
    if references:
        from mechfmu.validation.msl import read_msl_reference, tube_violation
        reference = read_msl_reference(references[0])
        own_run = simulate(scenario, stop=stop)
        assert own_run.data is not None  # recorded: these FMUs initialized in the runs above
        columns = [c for c in reference.dtype.names or () if c != "time" and c in (own_run.data.dtype.names or ())]
        violation = max(tube_violation(reference["time"], reference[c], own_run.data["time"], own_run.data[c])
                        for c in columns)
        comparisons.append(Comparison(f"{scenario.algorithm} vs {references[0].name} (tube)", len(columns), violation,
                                      0.0, "tube violation in signal units", "inside"))
    return comparisons


def table(name: str, comparisons: list[Comparison]) -> str:
    lines = [f"{name}:", f"  {'pair':44s} {'outputs':>7s} {'difference':>11s} {'tolerance':>10s}  verdict"]
    for c in comparisons:
        difference = "-" if not np.isfinite(c.difference) else f"{c.difference:.2e}"
        tolerance = (c.tolerance_label or "-" if c.tolerance is None
                     else c.tolerance_label or (f"{c.tolerance:.0e}" if c.tolerance else "bitwise"))
        verdict = ("ok" if c.passed else "DISAGREE") if c.tolerance is not None else "info"
        lines.append(f"  {c.pair:44s} {c.outputs:7d} {difference:>11s} {tolerance:>10s}  {verdict}"
                     + (f"  ({c.note})" if c.note else ""))
    return "\n".join(lines)


if __name__ == "__main__" and sys.argv[1:2] == ["--libcosim"]:
    _libcosim_worker(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
