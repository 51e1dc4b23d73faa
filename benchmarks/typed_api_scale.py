"""How building, writing and loading a system grows with its size, through the typed API.

A chain written with ``mechfmu.System``: ``Fixed`` ground, then K ``CoordinateSpringDamper`` + K ``Mass``
alternating, each spring between its two neighbours (2K + 1 components, 2K connects, each connect three
wires: position, velocity, force), for each of ``--sizes`` (components, about). Timed separately:

1. build: ``System``, every ``add`` and ``connect`` (each checks what it adds);
2. write: ``System.write`` into a temporary folder, the sources naming this checkout's built FMUs;
3. load: ``load_scenario`` of the written SSD with its checks against the FMUs, as ``mechfmu run`` loads it.

Printed per size (after an untimed small chain: imports, the FMUs' first reading): seconds per phase and in
all (wall; and the process's CPU seconds of the three, what a quiet machine would take), microseconds per
component, and the growth of each phase against the size before it, as (time ratio) / (size ratio): about 1
is linear, 2 would be quadratic. Target: at 10,000 components (10,000 connects, 30,000 wires) all three
phases together in under 10 s on the project's 2-core machine.

With ``--fmus N`` (slow, minutes) also a chain of about N FMUs run through the FMUs for one Jacobi step
(``simulate``, no error estimate, nothing recorded): load, set-up (instantiate, parameters, initialization,
until the observers' ``initialized``), the first step, the peak RSS and the file descriptors open after it, or
the failure and where it happened.

    python3 benchmarks/typed_api_scale.py [--sizes 500 1000 2000 10000] [--fmus 10000]

The code measured is this checkout's (``scaling.use_this_checkout``). Anything else running on the machine
shares its two cores: run it on a quiet machine.
"""
from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
import traceback
from pathlib import Path

from scaling import use_this_checkout

STEP = 1e-3
TARGET_SIZE, TARGET_S = 10_000, 10.0


def chain(components: int):
    """The typed chain of about ``components`` components (2K + 1, K = components // 2)."""
    from mechfmu import CoordinateSpringDamper, Fixed, Mass, System

    system = System(f"chain{components}", f"mass-spring chain of about {components} components "
                                          "(benchmarks/typed_api_scale.py)")
    previous = system.add("ground", Fixed()).flange
    for k in range(1, components // 2 + 1):
        spring = system.add(f"spring{k}", CoordinateSpringDamper(stiffness=100.0, damping=1.0))
        mass = system.add(f"mass{k}", Mass(m=1.0, **({"s_start": 0.1} if k == 1 else {})))
        system.connect(previous, spring.flange_a)
        system.connect(spring.flange_b, mass.flange_a)
        previous = mass.flange_b
    system.experiment(stop_time=1.0, step_size=STEP, algorithm="jacobi")
    return system


def written(system, folder: Path) -> Path:
    """``System.write`` into ``folder``, the sources naming the built FMUs where they are (as ``System.run``)."""
    from mechfmu.fmu.build import FMU_DIR

    return system.write(folder, fmu_folder=Path(os.path.relpath(FMU_DIR, folder)).as_posix())


def phases(components: int, work: Path) -> tuple[dict[str, float], int, int, int]:
    """Seconds of build, write and load (wall) and of the three (this process's CPU), and the counts of
    components, connects and wires."""
    from mechfmu.ssp.scenario import load_scenario

    seconds = {}
    cpu = time.process_time()
    t0 = time.perf_counter()
    system = chain(components)
    seconds["build"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ssd = written(system, work / f"chain{components}")
    seconds["write"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    scenario = load_scenario(ssd)
    seconds["load"] = time.perf_counter() - t0
    seconds["cpu"] = time.process_time() - cpu
    return seconds, len(scenario.components), len(system.connections), len(scenario.connections)


def scale(sizes: list[int], work: Path) -> None:
    print(f"{'components':>10} {'connects':>8} {'wires':>6}  {'build s':>8} {'write s':>8} {'load s':>8} "
          f"{'total s':>8} {'cpu s':>6} {'us/comp':>8}  growth per size ratio: build write load total")
    phases(20, work)  # imports and first readings of the FMUs, not part of any size
    before: tuple[int, dict[str, float]] | None = None
    verdicts = []
    for size in sizes:
        seconds, components, connects, wires = phases(size, work)
        seconds["total"] = seconds["build"] + seconds["write"] + seconds["load"]
        growth = ""
        if before is not None:
            ratio = components / before[0]
            growth = " ".join(f"{seconds[p] / before[1][p] / ratio:.2f}" for p in ("build", "write", "load", "total"))
        print(f"{components:10d} {connects:8d} {wires:6d}  {seconds['build']:8.2f} {seconds['write']:8.2f} "
              f"{seconds['load']:8.2f} {seconds['total']:8.2f} {seconds['cpu']:6.2f} "
              f"{seconds['total'] / components * 1e6:8.0f}  {growth}",
              flush=True)
        if size == TARGET_SIZE:
            verdicts.append(f"{components} components in {seconds['total']:.2f} s: target <= {TARGET_S:g} s "
                            f"{'met' if seconds['total'] <= TARGET_S else 'NOT met'}")
        before = (components, seconds)
    for verdict in verdicts or [f"size {TARGET_SIZE} not among the sizes: target not measured"]:
        print(verdict)


def first_step(components: int, work: Path) -> None:
    """Load a chain of about ``components`` FMUs and run one step through the FMUs; the times, or the failure."""
    from mechfmu.fmu.build import build
    from mechfmu.master.observers import Observer
    from mechfmu.master.simulate import simulate
    from mechfmu.ssp.scenario import load_scenario

    class Clock(Observer):
        ready = last = None

        def initialized(self, run) -> None:
            self.ready = time.perf_counter()

        def step_completed(self, run) -> None:
            self.last = time.perf_counter()

    build(["Fixed", "Mass", "CoordinateSpringDamper"])
    ssd = written(chain(components), work / f"fmus{components}")
    clock, phase = Clock(), "load"
    t0, cpu = time.perf_counter(), time.process_time()
    try:
        scenario = load_scenario(ssd)
        t_loaded, phase = time.perf_counter(), "simulate"
        result = simulate(scenario, stop=scenario.start_time + STEP, record=False, estimate_error=False,
                          observers=[clock])
    except Exception:
        print(f"{components} FMUs: {phase} raised after {time.perf_counter() - t0:.1f} s:")
        traceback.print_exc()
        return
    t_end = time.perf_counter()
    print(f"{len(scenario.components)} FMUs, {len(scenario.connections)} wires: load {t_loaded - t0:.2f} s, set-up "
          + (f"{clock.ready - t_loaded:.2f} s" if clock.ready else "-") + ", first step "
          + (f"{clock.last - clock.ready:.2f} s" if clock.last and clock.ready else "-")
          + f", in all {t_end - t0:.2f} s ({time.process_time() - cpu:.2f} s CPU); status {result.status}"
          + (f": {result.message}" if result.message else ""))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; file descriptors open "
          f"after the run {len(os.listdir('/proc/self/fd')) if os.path.isdir('/proc/self/fd') else '?'} "
          f"(limit {soft}/{hard})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000, 10000],
                        help="chain sizes (components, about)")
    parser.add_argument("--fmus", type=int, default=0, help="also run a chain of about this many FMUs for one step")
    args = parser.parse_args()
    print(f"code: {use_this_checkout()}")
    from mechfmu.fmu.build import FMU_DIR, build

    build(["Fixed", "Mass", "CoordinateSpringDamper"])  # load checks against the FMU files
    print(f"FMUs: {FMU_DIR}")
    with tempfile.TemporaryDirectory(prefix="mechfmu_typed_api_") as tmp:
        scale(sorted(args.sizes), Path(tmp))
        if args.fmus:
            first_step(args.fmus, Path(tmp))


if __name__ == "__main__":
    main()
