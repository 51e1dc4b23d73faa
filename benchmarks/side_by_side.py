"""mechfmu beside OMSimulator, fmpy's SSP runner and libcosim on the same exported archives, each with its wall time
and its error against the case's independent reference (``side_by_side_cases.py``).

Each case is exported once (``export_ssp``): a co-simulation archive (``export-ssp``; a scenario with a constraint
only with ``--unsolved-constraints``, marked; none of a friction element, which export-ssp refuses) and a strongly
coupled one (``--strongly-coupled``: Model Exchange FMUs, CVODE). Each tool runs as a whole process, best of
``--repeat`` wall times (the tool's own run time beside it where it tells it):
- mechfmu: ``python3 -m mechfmu.cli run ARCHIVE -o out.mat`` (a MATLAB v4 result of every variable at every
  point, as OMSimulator writes its own) on the co-simulation archive (the strongly coupled one where there is no
  other), its master the archive's, with its error estimate (the default); without
  PYTHONDONTWRITEBYTECODE, so its modules' bytecode is cached as in a user's install; run time: what it prints;
- OMSimulator (``MECHFMU_OMSIMULATOR`` or on PATH): the strongly coupled archive where there is one, else the
  co-simulation one, at its default options; run time: its ``--wallTime=true`` in one more run;
- fmpy's ``simulate_ssp`` and libcosim (libcosimpy): the co-simulation archive at the scenario's step, each in a
  process of its own (``tool_process.py``) that imports only the tool; run time: its call.

Error: the largest difference of a body's position or angle (those the reference has) at the tool's rows from the
reference there (fmpy's rows put at the end of their step, its bodies read off their flanges:
``mechfmu.crosscheck.tool_results``), against the scenario's tolerance (atol + rtol·largest |position|); an MSL
example: every Modelica Association comparison signal the tool's result has, at the reference's rows where the tool
has rows there (the tools on the scenario's grid), else at the tool's rows with the reference interpolated linearly
between its rows (OMSimulator: CVODE's steps; said in the note), as a fraction of the tube's half-height.

    python3 benchmarks/side_by_side.py [--cases CASE ...] [--repeat 3] [--oms-option=OPTION ...] [--write-docs]

Run on demand (all cases, best of 3: about 10 minutes on two cores), never as a test.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from side_by_side_cases import NOT_YET, ROOT, judge, quarter_car, shipped
from side_by_side_table import DOCS, section, table, write_docs

HERE = Path(__file__).resolve().parent
TIMEOUT = 900.0


@dataclass
class Cell:
    tool: str
    wall: float = math.nan  # the best whole-process wall time [s]
    run: float = math.nan  # the tool's own time for the run [s], where it tells it
    columns: dict[str, np.ndarray] = field(default_factory=dict)  # its result, at true times
    refused: str = ""
    notes: list[str] = field(default_factory=list)
    error: str = ""
    tolerance: str = ""


@dataclass
class Case:
    name: str
    source: Path
    stop: float
    step: float
    bodies: dict[str, float]
    cosim: Path | None = None
    strong: Path | None = None
    cosim_refused: str = ""
    jolt: int = 0  # connected inputs that start other than 0 (fmpy holds them at 0 over its first step)
    strong_refused: str = ""
    marks: list[str] = field(default_factory=list)


def first_line(text: str, limit: int = 150, last: bool = False) -> str:
    """The first (``last``: the last) line of ``text`` that is not blank, cut to ``limit`` characters."""
    lines = [s.strip() for s in text.splitlines() if s.strip()] or [""]
    line = lines[-1 if last else 0]
    return line if len(line) <= limit else line[:limit - 3] + "..."


def prepare(name: str, work: Path) -> Case:
    """The case's scenario (the quarter car written here) and its two archives, or why export-ssp refuses each."""
    from mechfmu.ssp.export import export_ssp
    from mechfmu.ssp.openmodelica import locked_force_loops, unsolved_constraints
    from mechfmu.ssp.scenario import component_class, load_scenario
    from mechfmu.ssp.tool_notes import initial_inputs
    source = quarter_car().write(work / "quarter_car") if name == "quarter_car" else ROOT / "scenarios" / name
    scenario = load_scenario(source)
    bodies = {n: float(s.parameters.get("L", 0.0)) for n, s in scenario.components.items()
              if component_class(s.fmu).continuous_states}
    case = Case(name, Path(source), scenario.stop_time, scenario.step_size, bodies)
    constrained = bool(set(unsolved_constraints(scenario.components)) - set(locked_force_loops(scenario.components)))
    try:
        case.cosim = export_ssp(source, work / "cosim.ssp", unsolved_constraints_allowed=constrained)
        if constrained:
            case.marks.append("exported with --unsolved-constraints")
    except ValueError as exc:
        case.cosim_refused = ("export-ssp writes no co-simulation archive of a friction element (its locked force "
                              "needs a master that solves it)" if locked_force_loops(scenario.components)
                              else "export-ssp writes no co-simulation archive: " + first_line(str(exc), 120))
    case.jolt = sum(value != 0.0 for value in initial_inputs(scenario).values())
    try:
        case.strong = export_ssp(source, work / "strong.ssp", strongly_coupled=True)
    except ValueError as exc:
        case.strong_refused = first_line(str(exc), 120)
    return case


def timed(command: list[str], env: dict[str, str] | None, cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    try:
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        done = subprocess.CompletedProcess(command, -9, "", f"error: stopped after {TIMEOUT:g} s")
    return time.perf_counter() - started, done


def user_environment() -> dict[str, str]:
    """This environment without PYTHONDONTWRITEBYTECODE: Python then uses (and writes) cached bytecode, as an
    installed package's imports do."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def best_of(repeat: int, run_once) -> Cell:
    """``run_once`` ``repeat`` times: the best wall time, the run time of that run, the last run's result."""
    cells: list[Cell] = []
    for _ in range(repeat):
        cells.append(run_once())
        if cells[-1].refused:
            return cells[-1]
    best = min(cells, key=lambda c: c.wall)
    best.columns, best.notes = cells[-1].columns, cells[-1].notes
    return best


def run_mechfmu(case: Case, work: Path) -> Cell:
    from mechfmu.crosscheck.omsimulator import read_result
    archive = case.cosim or case.strong
    cell = Cell("mechfmu")
    if archive is None:
        cell.refused = case.cosim_refused
        return cell
    out = work / "mechfmu.mat"  # a MATLAB v4 result, as OMSimulator writes
    out.unlink(missing_ok=True)
    cell.wall, done = timed([sys.executable, "-m", "mechfmu.cli", "run", str(archive), "-o", str(out)],
                            user_environment(), work)
    said = re.search(r"\([^,]+, ([^)]+)\): (\w+): reached t = \S+ s in ([0-9.]+) s wall", done.stdout)
    if done.returncode != 0 or not out.is_file() or not said:
        cell.refused = failure(done.returncode, done.stderr or done.stdout)
        return cell
    cell.run = float(said.group(3))
    cell.columns = read_result(out, systems=0)
    chose = re.search(r"auto chose (\S+)", done.stdout)
    master = f"auto: {chose.group(1)}" if chose else said.group(1)
    cell.notes.append(f"{master}, {'strongly coupled' if archive == case.strong else 'co-simulation'} archive, "
                      "with its error estimate")
    if re.search(r"^warning: .*estimated error", done.stdout + done.stderr, re.MULTILINE):
        cell.notes.append("it warned: its estimated error beyond the tolerance")
    return cell


def run_oms(case: Case, work: Path, program: Path | None, options: list[str]) -> Cell:
    from mechfmu.crosscheck.omsimulator import run_omsimulator
    cell = Cell("OMSimulator")
    archive = case.strong or case.cosim
    if program is None:
        cell.refused = "not run: OMSimulator not found (MECHFMU_OMSIMULATOR or PATH)"
        return cell
    if archive is None:
        cell.refused = case.cosim_refused
        return cell
    try:
        done = run_omsimulator(program, archive, work / "oms", options, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        cell.refused = f"failed: stopped after {TIMEOUT:g} s"
        return cell
    cell.wall = done.wall_time
    if done.errors or done.returncode != 0 or not done.signals:
        cell.refused = failure(done.returncode, "\n".join(done.errors) or done.output)
        if case.marks:
            cell.refused += " (a constraint: it stops at the first step whose constraint the FMU finds violated)"
        return cell
    cell.columns = done.signals
    mode = "strongly coupled (CVODE)" if archive == case.strong else f"co-simulation ({case.strong_refused})"
    cell.notes.append(f"{mode}, {' '.join(options) or 'its default options'}")
    return cell


def oms_run_time(case: Case, work: Path, program: Path, options: list[str]) -> float:
    """The run's own time as OMSimulator tells it (``--wallTime=true``: its last ``$wallTime``), in one more run."""
    from mechfmu.crosscheck.omsimulator import run_omsimulator
    archive = case.strong or case.cosim
    signals = run_omsimulator(program, archive, work / "oms_timed", [*options, "--wallTime=true"]).signals
    return float(signals["$wallTime"][-1]) if "$wallTime" in signals else math.nan


def run_fmpy(case: Case, work: Path) -> Cell:
    from mechfmu.crosscheck.tool_results import fmpy_columns
    cell = Cell("fmpy")
    if case.cosim is None:
        cell.refused = case.cosim_refused
        return cell
    out = work / "fmpy.npy"
    cell.wall, done = timed([sys.executable, str(HERE / "tool_process.py"), "fmpy", str(case.cosim), repr(case.stop),
                             repr(case.step), str(out)], user_environment(), work)
    if done.returncode != 0:
        cell.refused = failure(done.returncode, done.stdout + done.stderr)
        return cell
    cell.run = json.loads(done.stdout.splitlines()[-1])["run"]
    cell.columns = fmpy_columns(np.load(out), case.step, case.bodies)
    cell.notes.append("its rows put at the end of their step")
    if case.jolt:
        cell.notes.append(f"its first step with every connector at 0, {case.jolt} of which start otherwise")
    return cell


def run_libcosim(case: Case, work: Path, columns: list[str]) -> Cell:
    cell = Cell("libcosim")
    if case.cosim is None:
        cell.refused = case.cosim_refused
        return cell
    out = work / "libcosim.json"
    steps = round(case.stop / case.step)
    cell.wall, done = timed([sys.executable, str(HERE / "tool_process.py"), "libcosim", str(case.cosim), str(steps),
                             str(out), *columns], user_environment(), work)
    said = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not said or not said[-1]["completed"]:
        cell.refused = failure(done.returncode, done.stdout + done.stderr)
        return cell
    cell.run = said[-1]["run"]
    cell.columns = {k: np.asarray(v, dtype=float) for k, v in json.loads(out.read_text()).items()}
    return cell


def failure(returncode: int, text: str) -> str:
    """Why a tool's process failed: its first line that says error, else its last line."""
    said = [line for line in text.splitlines() if re.search(r"\berror\b", line, re.IGNORECASE)]
    return f"failed (exit {returncode}): {first_line(said[0] if said else text, last=not said)}"


def measure(name: str, repeat: int, program: Path | None, oms_options: list[str],
            tmp: Path) -> tuple[Case, list[Cell]]:
    work = tmp / name.replace("/", "_")
    work.mkdir(parents=True)
    case = prepare(name, work)
    mine = best_of(repeat, lambda: run_mechfmu(case, work))
    oms = best_of(repeat, lambda: run_oms(case, work, program, oms_options))
    if not oms.refused and program is not None:
        oms.run = oms_run_time(case, work, program, oms_options)
    fmpy = best_of(repeat, lambda: run_fmpy(case, work))
    from mechfmu.crosscheck.omsimulator import body_states
    from mechfmu.ssp.scenario import load_scenario
    wanted = body_states(sorted(mine.columns), load_scenario(case.source, check=False)) if mine.columns else []
    wanted += [n for n in mine.columns if n.endswith(("s_rel", "phi_rel"))]  # elements' (elastogap's reference)
    if name.startswith("msl/"):
        wanted += (case.source / "reference" / "comparisonSignals.txt").read_text().split()[1:]
    libcosim = best_of(repeat, lambda: run_libcosim(case, work, sorted(set(wanted))))
    cells = [mine, oms, fmpy, libcosim]
    for cell in (fmpy, libcosim):
        if case.marks and not cell.refused:
            cell.notes.append("the constraint's force unsolved: the bodies move unconstrained")
    judge(case, cells)
    return case, cells


def main() -> None:
    from mechfmu.crosscheck.omsimulator import find_omsimulator
    from mechfmu.fmu.build import build
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", metavar="CASE", help="shipped scenarios or quarter_car (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each tool, the best wall time kept")
    parser.add_argument("--oms-option", action="append", default=[], metavar="OPTION", dest="oms_options",
                        help="an option of OMSimulator's, repeatable, e.g. --oms-option=--CVODEMaxOrder=5 (default: "
                             "none)")
    parser.add_argument("--write-docs", action="store_true", help=f"write the table into {DOCS.relative_to(ROOT)}")
    args = parser.parse_args()
    if args.write_docs and args.cases:
        parser.error("--write-docs regenerates the whole table: run it without --cases")
    build()
    program, load, started = find_omsimulator(), os.getloadavg()[0], time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="mechfmu_side_") as tmp:
        for name in args.cases or [*shipped(), "quarter_car"]:
            results.append(measure(name, args.repeat, program, args.oms_options, Path(tmp)))
            print(table(results[-1:], markdown=False).split("\n", 1)[1], flush=True)
    print(table(results, markdown=False))
    print(NOT_YET)
    if args.write_docs:
        write_docs(section(results, args.repeat, args.oms_options, load, (time.perf_counter() - started) / 60))
        print(f"written: {DOCS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
