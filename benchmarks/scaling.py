"""How our master scales with the number of FMUs, against libcosim.

Measured in one run, on a mass-spring chain generated into a temporary folder (``Fixed`` ground, then K
``CoordinateSpringDamper`` + K ``Mass`` alternating, each spring between its two neighbours, the last
mass free: 2K + 1 FMUs; m = 1 kg, k = 100 N/m, d = 1 N.s/m, the first mass released at 0.1 m), Jacobi,
h = 1e-3 s:

1. for about 20, 200 and 2,000 FMUs (``--sizes``), each run three ways over the same steps:
   ours through the FMUs (fmpy, dependency-ordered Jacobi, the default), ours in-process (``local=True``,
   the same components without FMI) and libcosimpy 0.0.6 (the chain exported with ``export_ssp``, run in
   its own process as ``mechfmu.crosscheck.tools.run_libcosim`` does; libcosim's Jacobi with its last-value
   observer). Printed separately: set-up (instantiate + initialize; ours: ``simulate`` until its observers'
   ``initialized``, the scenario already loaded; libcosim: ``from_ssp_file`` plus its first step, which
   initializes, less one step), time per macro step and µs per FMU step (a step of one FMU: time per
   macro step / FMU count). Ours read every output at every step (all columns, ``record=False``; the error
   estimate off: its companion would run before the run and count as set-up); the
   minimum of ``--repeat`` runs is kept (libcosim: one run from 2,000 FMUs on). The in-process
   and FMU-path results are compared with == (every recorded value at the smallest size, the final
   values of every output at the others). From 100 FMUs on, one more in-process run with Python's cyclic
   garbage collector off (``gc.disable()``) shows how much of the growth with size is the collector. The FMU path
   runs once more per repetition with the FMU profile's timing off (``MECHFMU_PROFILE=off``: calls counted, not
   timed), alternating with the timed runs: the ratio of the two is what timing the calls costs.
   Targets: FMU path / libcosim wall <= 0.5 at 20 FMUs; in-process / FMU path <= 1 (time per step: one fast path);
   time per step from 200 to 2,000 FMUs grows <= 11x (ours and libcosim), the minimum of 5 runs at each size;
   at most 0.3 µs per FMU step at 2,000 FMUs (ours, FMUs).
2. peak RSS of ``mechfmu run scenarios/oscillator --out X.csv`` (the smallest chain, streamed, no
   array kept) over ``--memory-steps`` (1e6) steps: ``streaming_memory.measure`` (RSS after the start and
   at the end) run in a child whose ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` is that run's peak.
3. a cProfile of the in-process path on the 200-FMU chain: the top functions by cumulative and by own
   time, so the master's plumbing per step is visible.
4. study throughput (``study_throughput.py``): what reusing FMU instances saves per run, and the same
   ``--study-runs`` runs of the ElastoGap study sequentially, on 1 and on 2 Dask workers (target: 2 workers
   >= 1.8x sequential).

    python3 benchmarks/scaling.py [--quick] [--sizes 20 200 2000] [--repeat 5] [--memory-steps 1000000]
                                  [--no-memory] [--no-profile] [--no-study] [--study-runs 64]

``--quick`` skips libcosim at the largest size (about 500-600 s for 200 steps at 2,000 FMUs on two cores,
almost all of it in its first step, the initialization): about 7 minutes instead of 16. The code measured
is this checkout's (``use_this_checkout``), whatever editable install the environment holds.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
STEP = 1e-3
MODELS = ["Fixed", "Mass", "CoordinateSpringDamper"]


def use_this_checkout() -> str:
    """Import this checkout's ``mechfmu`` and its ``components/`` as ``mechfmu.components`` (pyproject's
    package-dir mapping), whatever editable install the environment holds (another clone's, e.g.), and
    build and look up FMUs in this checkout's ``fmus/`` (children too: ``MECHFMU_FMU_DIR``). Returns
    where the code comes from."""
    sys.path.insert(0, str(ROOT))
    import mechfmu

    if not (ROOT / "mechfmu" / "components").exists():
        mechfmu.__path__.append(str(ROOT))  # after mechfmu/ itself: only components/ is found there
    import mechfmu.components

    os.environ.setdefault("MECHFMU_FMU_DIR", str(ROOT / "fmus"))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return f"{Path(mechfmu.__file__).parent}, {Path(mechfmu.components.__file__).parent}"


def chain_steps(fmus: int) -> int:
    """Macro steps measured at a size: 2,000 for the small chain, 200 from 200 FMUs on."""
    return 2000 if fmus < 100 else 200


def repetitions(fmus: int, repeat: int, tool: str = "ours") -> int:
    """Runs kept at their minimum: ``repeat`` of ours at every size; of libcosim ``repeat`` up to 200 FMUs, one
    from 2,000 on (its initialization there takes minutes)."""
    return repeat if tool == "ours" or fmus <= 300 else 1


def write_chain(folder: Path, masses: int) -> Path:
    """The chain with ``masses`` masses and as many springs (2·masses + 1 FMUs) as ``folder``/SystemStructure.ssd."""
    from mechfmu.ssp import write_scenario

    components: list[tuple[str, str, dict]] = [("ground", "Fixed", {})]
    wires = []
    for i in range(1, masses + 1):
        components += [(f"spring{i}", "CoordinateSpringDamper", {"stiffness": 100.0, "damping": 1.0}),
                       (f"mass{i}", "Mass", {"m": 1.0, **({"s_start": 0.1} if i == 1 else {})})]
        wires.append("ground.flange <-> spring1.flange_a" if i == 1
                     else f"mass{i - 1}.flange_b <-> spring{i}.flange_a")
        wires.append(f"mass{i}.flange_a <-> spring{i}.flange_b")
    write_scenario(folder, f"chain{2 * masses + 1}", components, wires, stop_time=1.0, step_size=STEP,
                   algorithm="jacobi", description=f"mass-spring chain, {masses} masses (benchmarks/scaling.py)")
    return folder


@dataclass
class Timing:
    setup: float  # s
    step: float   # s per macro step
    wall: float   # s, set-up + every step

    def per_fmu_us(self, fmus: int) -> float:
        return self.step / fmus * 1e6


def time_ours(scenario, steps: int, local: bool, record: bool, collect: bool = True, timed: bool = True):
    """(Timing, Result) of one run of ours over ``steps`` steps (``collect=False``: Python's cyclic
    garbage collector off during the run, a diagnostic; ``timed=False``: the FMU profile's calls not timed)."""
    from mechfmu.master.fmu_profile import TIMING
    from mechfmu.master.observers import Observer
    from mechfmu.master.simulate import simulate

    class Clock(Observer):
        def initialized(self, run) -> None:
            self.ready = self.last = time.perf_counter()

        def step_completed(self, run) -> None:
            self.last = time.perf_counter()

        def rows_completed(self, run, rows) -> None:  # the master may take its steps in blocks
            self.last = time.perf_counter()

        def takes_rows(self) -> bool:
            return True

    clock = Clock()
    if not collect:
        gc.collect()
        gc.disable()
    t0 = time.perf_counter()
    was, TIMING[0] = TIMING[0], timed
    try:
        result = simulate(scenario, stop=scenario.start_time + steps * STEP, local=local, record=record,
                          observers=[clock], estimate_error=False)
    finally:
        gc.enable()
        TIMING[0] = was
    if not result.ok:
        raise SystemExit(f"{scenario.name} ({'in-process' if local else 'FMUs'}): {result.message}")
    return Timing(clock.ready - t0, (clock.last - clock.ready) / steps, clock.last - t0), result


def best(timings: list[Timing]) -> Timing:
    return Timing(min(t.setup for t in timings), min(t.step for t in timings), min(t.wall for t in timings))


def libcosim_worker(archive: str, steps: int) -> None:
    """Child process: libcosim on ``archive`` for ``steps`` steps; prints its timings as JSON."""
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    log_output_level(CosimLogLevel.ERROR)
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimObserver import CosimObserver

    t0 = time.perf_counter()
    execution = CosimExecution.from_ssp_file(archive)
    instantiated = time.perf_counter()
    observer = CosimObserver.create_last_value()
    execution.add_observer(observer)
    t1 = time.perf_counter()
    execution.step(1)  # initializes, then steps
    t2 = time.perf_counter()
    execution.step(steps - 1)
    t3 = time.perf_counter()
    index = {info.name.decode(): info.index for info in execution.slave_infos()}
    ref = next(v.reference for v in execution.slave_variables(index["mass1"]) if v.name.decode() == "flange_a.s")
    final = observer.last_real_values(index["mass1"], [ref])[0]
    step = (t3 - t2) / (steps - 1)
    print(json.dumps({"instantiate": instantiated - t0, "first_step": t2 - t1, "step": step,
                      "wall": t3 - t0, "mass1.flange_a.s": final}), flush=True)
    del observer, execution  # libcosim frees the FMUs while Python is alive; then no interpreter teardown
    os._exit(0)                # (see mechfmu.crosscheck.tools._libcosim_worker)


def time_libcosim(archive: Path, steps: int) -> tuple[Timing, dict]:
    proc = subprocess.run([sys.executable, __file__, "--libcosim-worker", str(archive), str(steps)],
                          capture_output=True, text=True, timeout=7200)
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"libcosim failed (exit status {proc.returncode}): {proc.stderr[-2000:]}") from None
    setup = out["instantiate"] + out["first_step"] - out["step"]
    return Timing(setup, out["step"], out["wall"]), out


def memory_worker(steps: int, local: bool) -> None:
    """Child process: streaming_memory's measurement; its run is this process's only child."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from streaming_memory import measure

    with tempfile.TemporaryDirectory(prefix="mechfmu_scaling_mem_") as tmp:
        start, end, wall = measure(steps, local, Path(tmp), record=False)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"start": start, "end": end, "wall": wall, "peak": peak}), flush=True)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3g}" if b > 0 else "-"


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "NOT met"


def scaling(sizes: list[int], quick: bool, repeat: int, work: Path) -> None:
    from mechfmu.ssp import export_ssp
    from mechfmu.ssp.scenario import load_scenario

    print(f"1. mass-spring chain, Jacobi, h = {STEP:g} s; set-up = instantiate + initialize, step = one macro step, "
          f"µs/FMU = step / FMUs; min of up to {repeat} runs")
    print(f"  {'FMUs':>5s} {'steps':>5s}  {'tool':14s} {'set-up s':>9s} {'ms/step':>9s} {'µs/FMU':>8s} "
          f"{'wall s':>8s}  note")
    table: dict[int, dict[str, Timing]] = {}
    largest = max(sizes)
    for size in sizes:
        masses = max(1, size // 2)
        fmus = 2 * masses + 1
        steps = chain_steps(fmus)
        folder = write_chain(work / f"chain{fmus}", masses)
        scenario = load_scenario(folder)
        row: dict[str, Timing] = {}
        runs: dict[bool, list] = {False: [], True: []}
        untimed: list[Timing] = []
        record = size == min(sizes)  # whole arrays compared at the smallest size, final values elsewhere
        for k in range(repetitions(fmus, repeat)):
            for timed in (True, False) if k % 2 == 0 else (False, True):  # timed and untimed FMU runs alternate
                if timed:
                    runs[False].append(time_ours(scenario, steps, False, record))
                else:
                    untimed.append(time_ours(scenario, steps, False, record, timed=False)[0])
            runs[True].append(time_ours(scenario, steps, True, record))
        fmu_results, local_results = runs[False][-1][1], runs[True][-1][1]
        if record:
            names = fmu_results.data.dtype.names
            identical = names == local_results.data.dtype.names and all(
                np.array_equal(fmu_results.data[n], local_results.data[n]) for n in names)
            compared = f"{len(names) - 1} outputs x {len(fmu_results.data)} rows"
        else:
            identical = fmu_results.final == local_results.final
            compared = f"final values of {len(fmu_results.final) - 1} outputs"
        row["ours FMUs"], row["in-process"] = best([t for t, _ in runs[False]]), best([t for t, _ in runs[True]])
        row["FMUs, untimed"] = best(untimed)
        profile = fmu_results.profile
        notes = {"ours FMUs": f"{len(runs[False])} run(s); FMU profile: {profile.total_seconds:.3f} s in "
                              f"{profile.total_calls} calls, {profile.compiled_timed} of {profile.compiled_runs} "
                              "compiled runs timed",
                 "FMUs, untimed": f"{len(untimed)} run(s), MECHFMU_PROFILE=off (calls counted, not timed)",
                 "in-process": f"{len(runs[True])} run(s); == FMU path: {'bit-identical' if identical else 'DIFFERENT'}"
                               f" ({compared})"}
        if fmus >= 100:  # diagnostic: how much of the growth with size is the cyclic garbage collector
            row["in-proc, no GC"] = time_ours(scenario, steps, True, False, collect=False)[0]
            notes["in-proc, no GC"] = "1 run, gc.disable() during the run (diagnostic)"
        if quick and size == largest and len(sizes) > 1:
            notes["libcosim"] = "skipped (--quick)"
        else:
            archive = export_ssp(folder, work / f"chain{fmus}.ssp", shared_fmus=True)  # one FMU per model
            cosim_runs = [time_libcosim(archive, steps) for _ in range(repetitions(fmus, repeat, "libcosim"))]
            row["libcosim"] = best([t for t, _ in cosim_runs])
            out = min(cosim_runs, key=lambda c: c[0].wall)[1]
            notes["libcosim"] = (f"{len(cosim_runs)} run(s); instantiate {out['instantiate']:.2f} s, first step "
                                 f"{out['first_step']:.2f} s; final mass1.flange_a.s {out['mass1.flange_a.s']:.6g} "
                                 f"(strict Jacobi; ours, ordered: {fmu_results.final['mass1.flange_a.s']:.6g})")
        for tool in ("ours FMUs", "FMUs, untimed", "in-process", "in-proc, no GC", "libcosim"):
            if tool not in notes:
                continue
            t = row.get(tool)
            cells = (f"{t.setup:9.3f} {t.step * 1e3:9.3f} {t.per_fmu_us(fmus):8.1f} {t.wall:8.2f}" if t
                     else f"{'-':>9s} {'-':>9s} {'-':>8s} {'-':>8s}")
            print(f"  {fmus:5d} {steps:5d}  {tool:14s} {cells}  {notes[tool]}", flush=True)
        table[fmus] = row
    print("  ratios:")
    counts = sorted(table)
    for fmus in counts:
        row = table[fmus]
        fmu_t, local_t, cosim_t = row["ours FMUs"], row["in-process"], row.get("libcosim")
        line = (f"    {fmus:5d} FMUs: in-process / FMU path per step {ratio(local_t.step, fmu_t.step)}, wall "
                f"{ratio(local_t.wall, fmu_t.wall)}")
        line += f" (target <= 1: {verdict(local_t.step / fmu_t.step, 1.0)})"
        if fmus > 1000:
            line += (f"; FMU path {fmu_t.per_fmu_us(fmus):.3f} µs per FMU step (target <= 0.3: "
                     f"{verdict(fmu_t.per_fmu_us(fmus), 0.3)})")
        cost = fmu_t.step / row["FMUs, untimed"].step
        line += f"; timing the FMU calls: timed / untimed per step {cost:.3f} (target <= 1.05: {verdict(cost, 1.05)})"
        if cosim_t:
            line += (f"; FMU path / libcosim wall {ratio(fmu_t.wall, cosim_t.wall)}, per step "
                     f"{ratio(fmu_t.step, cosim_t.step)}, set-up {ratio(fmu_t.setup, cosim_t.setup)}; "
                     f"in-process / libcosim wall {ratio(local_t.wall, cosim_t.wall)}")
            if fmus < 100:
                line += (" (target FMU path / libcosim wall <= 0.5 at ~20 FMUs: "
                         f"{verdict(fmu_t.wall / cosim_t.wall, 0.5)})")
        print(line)
    for small, big in zip(counts, counts[1:]):
        growth = f"    time per step {small} -> {big} FMUs ({big / small:.1f}x the FMUs):"
        for tool in ("ours FMUs", "in-process", "in-proc, no GC", "libcosim"):
            if tool in table[small] and tool in table[big]:
                g = table[big][tool].step / table[small][tool].step
                growth += f" {tool} {g:.2f}x" + (f" (target <= 11x: {verdict(g, 11)})" if small >= 100 else "") + ";"
        print(growth.rstrip(";"))


def memory(steps: int) -> None:
    print(f"2. peak RSS, mechfmu run scenarios/oscillator --out X.csv (FMUs, streamed), {steps} steps "
          "(streaming_memory.measure in a child; peak = getrusage(RUSAGE_CHILDREN).ru_maxrss)")
    proc = subprocess.run([sys.executable, __file__, "--memory-worker", str(steps)], capture_output=True,
                          text=True, timeout=7200)
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"memory run failed ({proc.returncode}): {proc.stdout[-1000:]}{proc.stderr[-1000:]}") from None
    print(f"  RSS {out['start']:.1f} MiB after the start, {out['end']:.1f} MiB at the end (growth "
          f"{out['end'] - out['start']:+.1f} MiB), peak {out['peak']:.1f} MiB; {out['wall']:.0f} s "
          f"({out['wall'] / steps * 1e6:.1f} µs per step)", flush=True)


def where(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return Path(path).name if path.startswith("/") else path


def profile(work: Path, fmus: int, top: int) -> None:
    from mechfmu.master.simulate import simulate
    from mechfmu.ssp.scenario import load_scenario

    masses = max(1, fmus // 2)
    fmus = 2 * masses + 1
    steps = chain_steps(fmus)
    folder = work / f"chain{fmus}"
    if not folder.exists():
        write_chain(folder, masses)
    scenario = load_scenario(folder)
    profiler = cProfile.Profile()
    profiler.enable()
    result = simulate(scenario, stop=scenario.start_time + steps * STEP, local=True, record=False)
    profiler.disable()
    if not result.ok:
        raise SystemExit(result.message)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = max(sum(tt for _, _, tt, _, _ in stats.values()), max(ct for _, _, _, ct, _ in stats.values()))
    print(f"3. cProfile, in-process, {fmus} FMUs, {steps} steps, whole simulate(): {total:.2f} s profiled "
          f"({result.counters.get('fmu_calls', 0)} slave calls)")
    for key, label in ((3, "cumulative"), (2, "own (tottime)")):
        print(f"  top {top} by {label} time (% of the profiled total):")
        print(f"    {'calls':>8s} {'own s':>7s} {'own %':>6s} {'cum s':>7s} {'cum %':>6s}  function")
        ranked = sorted(stats.items(), key=lambda item: item[1][key], reverse=True)[:top]
        for (path, line, name), (_, calls, tt, ct, _) in ranked:
            place = f"{where(path)}:{line}({name})" if line else name
            print(f"    {calls:8d} {tt:7.3f} {tt / total * 100:6.1f} {ct:7.3f} {ct / total * 100:6.1f}  {place}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 200, 2000], help="chain sizes (FMUs, about)")
    parser.add_argument("--quick", action="store_true", help="skip libcosim at the largest size")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs per size (minimum kept; libcosim once from 2,000 FMUs on)")
    parser.add_argument("--memory-steps", type=int, default=1_000_000)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--profile-fmus", type=int, default=200)
    parser.add_argument("--no-study", action="store_true")
    parser.add_argument("--study-runs", type=int, default=64, help="runs of the throughput study")
    parser.add_argument("--libcosim-worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--memory-worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.libcosim_worker:
        libcosim_worker(args.libcosim_worker[0], int(args.libcosim_worker[1]))
        return
    code = use_this_checkout()
    if args.memory_worker:
        memory_worker(args.memory_worker, local=False)
        return
    from mechfmu.fmu.build import FMU_DIR, build

    build(MODELS)
    print(f"code: {code}; FMUs: {FMU_DIR}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mechfmu_scaling_") as tmp:
        work = Path(tmp)
        scaling(sorted(args.sizes), args.quick, args.repeat, work)
        if not args.no_memory:
            memory(args.memory_steps)
        if not args.no_profile:
            profile(work, args.profile_fmus, 15)
        if not args.no_study:
            import study_throughput
            build()
            study_throughput.reuse(20)
            study_throughput.throughput(args.study_runs, 5.0, work)
    print(f"benchmark wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
