"""Speed of the native FMUs (the component's law in C, no Python) against the Python-embedding FMUs, side by side in
one run, per FMU:

- a plain C host (``benchmarks/fmi2_speed_host.c``, dlopen with RTLD_LOCAL): per step fmi2SetReal of every input,
  fmi2DoStep, fmi2GetReal of every output; ``--steps`` steps (default 10^6). Every input changes every step but the
  tangent stiffness and damping inputs (``.c``, ``.d``), held as a linear contact holds them;
- fmpy's FMU2Slave from Python, the same calls per step (``--fmpy-steps``, default 2*10^4);
- libcosim (libcosimpy, its own process): one instance of the FMU in an execution, ``--libcosim-steps`` steps
  (default 10^5) of its loop (doStep and its reads of every output), per FMU-step.

Both kinds are built here from the current sources for this machine. Targets: at most 0.5 us per C-host step for
the connectors and Mass, and at least 20 times faster than the Python-embedding FMU.

With Mass among the models, the C host also measures a minimal FMU of Mass's interface (``benchmarks/minimal_fmu.c``,
compiled here: Mass's modelDescription.xml, so the same variables, value references and causalities; its step one
explicit Euler step of one mass, its fmi2SetReal and fmi2GetReal the plain loops of a hand-written FMU). Target: a
Mass step at most 1.5 times the minimal FMU's. A native FMU's C-host time is the best of ``--repeats`` runs (default
5), the FMUs taking turns; ``--c-host-only`` measures the native FMUs in the C host only (no Python-embedding FMU, no
fmpy, no libcosim). The exit status is 1 when a target is not met.

    python3 benchmarks/native_speed.py [--steps N] [--repeats N] [--c-host-only] [--fmpy-steps N]
                                       [--libcosim-steps N] [MODEL ...]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import fmpy
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from mechfmu.components import COMPONENTS

from mechfmu.fmu.build import binary_name, build
from mechfmu.fmu.native_tables import NATIVE_HOOKS

HOST_SOURCE = Path(__file__).with_name("fmi2_speed_host.c")
MINIMAL_SOURCE = Path(__file__).with_name("minimal_fmu.c")
#: the targets of the C-host step: an upper bound [ns] and the least speed-up over the Python-embedding FMU
TARGET_NS, TARGET_RATIO = 500.0, 20.0
#: the target of a Mass step against the minimal FMU of its interface: at most this many times its step
TARGET_MINIMAL = 1.5
MINIMAL = "minimal FMU of Mass's interface"


def compile_host(folder: Path) -> Path:
    host = folder / "fmi2_speed_host"
    headers = Path(fmpy.__file__).parent / "c-code"
    subprocess.run(["cc", "-O2", f"-I{headers}", "-o", str(host), str(HOST_SOURCE), "-ldl"], check=True)
    return host


def references(fmu: Path, model: str) -> tuple[list[int], list[int]]:
    description = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in description.modelVariables}
    cls = COMPONENTS[model]
    return [vr[i.name] for i in cls.inputs], [vr[o.name] for o in cls.outputs]


def kinds(model: str) -> str:
    """Per input: 'c' for a tangent stiffness or damping (held, as a linear contact keeps it), else 'v' (changes)."""
    return "".join("c" if i.name.endswith((".c", ".d")) else "v" for i in COMPONENTS[model].inputs)


def c_host_ns(host: Path, fmu: Path, model: str, steps: int, folder: Path, wrapper: tuple[str, ...] = ()) -> float:
    """ns per step of the FMU in the C host (``wrapper``: a command the host runs under, e.g. valgrind's)."""
    unpacked = Path(extract(str(fmu), unzipdir=str(folder / f"{fmu.parent.name}_{model}")))
    description = read_model_description(str(fmu))
    inputs, outputs = references(fmu, model)
    cmd = [*wrapper, str(host), str(unpacked / binary_name(model, "linux64")), (unpacked / "resources").as_uri(),
           description.guid, str(steps), "1e-4", str(len(inputs)), str(len(outputs)), kinds(model),
           *map(str, inputs + outputs)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{model} ({fmu}): {proc.stderr}")
    return float(proc.stdout.split()[1])


def minimal_fmu(fmu: Path, folder: Path) -> Path:
    """The minimal FMU of the interface of the native FMU ``fmu`` of Mass: its modelDescription.xml with the binary of
    ``benchmarks/minimal_fmu.c`` (its tables written from that description), packed as folder/minimal/Mass.fmu."""
    description = read_model_description(str(fmu))
    variables = sorted(description.modelVariables, key=lambda v: v.valueReference)
    assert [v.valueReference for v in variables] == list(range(len(variables))), "value references 0 to n - 1"
    kind = {"parameter": 0, "input": 1, "output": 2}
    outputs = [v.valueReference for v in variables if v.causality == "output"]
    assert outputs == list(range(outputs[0], outputs[0] + len(outputs))), "the outputs in one run"
    forces = [v.valueReference for v in variables if v.causality == "input" and (v.name == "f_drive"
                                                                                 or v.name.endswith(".f"))]
    mass = next(v.valueReference for v in variables if v.name == "m")

    def table(values: list) -> str:
        return "{" + ", ".join(map(str, values)) + "}"

    work = folder / "minimal_build"
    work.mkdir()
    defines = {"VARIABLES": len(variables), "CAUSALITIES": table([kind.get(v.causality, 3) for v in variables]),
               "STARTS": table([float(v.start or 0.0) for v in variables]), "FORCES": table(forces),
               "FORCE_COUNT": len(forces), "MASS": mass, "FIRST_OUTPUT": outputs[0], "OUTPUTS": len(outputs),
               "GUID": f'"{description.guid}"'}
    (work / "interface.h").write_text("".join(f"#define {name} {value}\n" for name, value in defines.items()))
    binary = work / "Mass.so"
    headers = Path(fmpy.__file__).parent / "c-code"
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-fvisibility=hidden",
                    f"-I{headers}", f"-I{work}", "-o", str(binary), str(MINIMAL_SOURCE)], check=True)
    target = folder / "minimal" / "Mass.fmu"
    target.parent.mkdir()
    with zipfile.ZipFile(fmu) as source, zipfile.ZipFile(target, "w") as packed:
        packed.writestr("modelDescription.xml", source.read("modelDescription.xml"))
        packed.write(binary, binary_name("Mass", "linux64"))
    return target


def best_c_host_ns(host: Path, fmus: dict[str, tuple[Path, str]], steps: int, repeats: int,
                   folder: Path) -> dict[str, float]:
    """The fastest of ``repeats`` C-host runs of each of ``fmus`` (a label's FMU and model), the FMUs taking turns."""
    times: dict[str, list[float]] = {label: [] for label in fmus}
    for _ in range(repeats):
        for label, (fmu, model) in fmus.items():
            times[label].append(c_host_ns(host, fmu, model, steps, folder))
    return {label: min(found) for label, found in times.items()}


def fmpy_ns(fmu: Path, model: str, steps: int, folder: Path) -> float:
    description = read_model_description(str(fmu))
    unpacked = extract(str(fmu), unzipdir=str(folder / f"fmpy_{fmu.parent.name}_{model}"))
    slave = FMU2Slave(guid=description.guid, unzipDirectory=unpacked, modelIdentifier=model, instanceName="speed")
    inputs, outputs = references(fmu, model)
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    t, h = 0.0, 1e-4
    start = time.perf_counter()
    held = kinds(model)
    for k in range(steps):
        if inputs:
            slave.setReal(inputs, [1000.0 + i if held[i] == "c" else 1e-3 * ((k + i) % 7) - 2e-3
                                   for i in range(len(inputs))])
        slave.doStep(t, h)
        slave.getReal(outputs)
        t += h
    elapsed = time.perf_counter() - start
    slave.terminate()
    slave.freeInstance()
    return elapsed / steps * 1e9


LIBCOSIM = """import sys, time
from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
log_output_level(CosimLogLevel.ERROR)
from libcosimpy.CosimExecution import CosimExecution
from libcosimpy.CosimSlave import CosimLocalSlave
execution = CosimExecution.from_step_size(step_size=100_000)
execution.add_local_slave(local_slave=CosimLocalSlave(fmu_path=sys.argv[1], instance_name="speed"))
steps = int(sys.argv[2])
execution.step(step_count=100)
start = time.perf_counter()
execution.step(step_count=steps)
print((time.perf_counter() - start) / steps * 1e9, flush=True)
"""


def libcosim_ns(fmu: Path, steps: int) -> float:
    """ns per step of one instance of the FMU in libcosim (libcosimpy in a process of its own)."""
    proc = subprocess.run([sys.executable, "-c", LIBCOSIM, str(fmu), str(steps)], capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RuntimeError(f"libcosim with {fmu}: {proc.stderr[-500:]}")
    return float(proc.stdout.split()[-1])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5, help="C-host runs per native FMU (the best kept)")
    parser.add_argument("--c-host-only", action="store_true", help="the native FMUs in the C host only")
    parser.add_argument("--fmpy-steps", type=int, default=20_000)
    parser.add_argument("--libcosim-steps", type=int, default=100_000)
    parser.add_argument("models", nargs="*", default=sorted(NATIVE_HOOKS))
    args = parser.parse_args(argv)
    failed = []
    with tempfile.TemporaryDirectory(prefix="mechfmu_speed_") as tmp:
        folder = Path(tmp)
        native_dir, python_dir = folder / "native", folder / "python"
        build(args.models, native_dir, platforms=["linux64"], backend="native")
        if not args.c_host_only:
            build(args.models, python_dir, platforms=["linux64"], backend="python")
        host = compile_host(folder)
        fmus = {model: (native_dir / f"{model}.fmu", model) for model in args.models}
        if "Mass" in args.models:
            fmus[MINIMAL] = (minimal_fmu(native_dir / "Mass.fmu", folder), "Mass")
        native = best_c_host_ns(host, fmus, args.steps, args.repeats, folder)
        print(f"C host: {args.steps} steps per FMU (setReal of every input, doStep, getReal of every output), the "
              f"best of {args.repeats} runs of each native FMU" + ("" if args.c_host_only else
              f"; fmpy FMU2Slave: {args.fmpy_steps} steps; libcosim: {args.libcosim_steps} steps"))
        print(f"{'FMU':26s} {'in':>3s} {'out':>3s} {'C native':>9s}" + ("" if args.c_host_only else
              f" {'C Python':>9s} {'ratio':>6s} {'fmpy nat.':>9s} {'fmpy Py':>9s} {'ratio':>6s} {'cosim nat.':>10s} "
              f"{'cosim Py':>9s} {'ratio':>6s}") + "  target (ns per step)")
        for model in args.models:
            native_fmu, python_fmu = native_dir / f"{model}.fmu", python_dir / f"{model}.fmu"
            c_native = native[model]
            inputs, outputs = references(native_fmu, model)
            line = f"{model:26s} {len(inputs):3d} {len(outputs):3d} {c_native:9.1f}"
            met = c_native <= TARGET_NS
            if not args.c_host_only:
                c_python = c_host_ns(host, python_fmu, model, args.steps, folder)
                f_native = fmpy_ns(native_fmu, model, args.fmpy_steps, folder)
                f_python = fmpy_ns(python_fmu, model, args.fmpy_steps, folder)
                l_native = libcosim_ns(native_fmu, args.libcosim_steps)
                l_python = libcosim_ns(python_fmu, max(1000, args.libcosim_steps // 20))
                met = met and c_python / c_native >= TARGET_RATIO
                line += (f" {c_python:9.1f} {c_python / c_native:6.1f} {f_native:9.1f} {f_python:9.1f} "
                         f"{f_python / f_native:6.1f} {l_native:10.1f} {l_python:9.1f} {l_python / l_native:6.1f}")
            print(f"{line}  {'met' if met else 'NOT MET'}")
            failed += [] if met else [model]
        if MINIMAL in native:
            ratio = native["Mass"] / native[MINIMAL]
            print(f"{MINIMAL} (benchmarks/minimal_fmu.c): {native[MINIMAL]:.1f} ns per step in the C host")
            others = "".join(f", {m} {native[m]:.1f} ns" for m in args.models if m != "Mass")
            print(f"Mass {native['Mass']:.1f} ns{others}; Mass / minimal = {ratio:.2f} (target <= {TARGET_MINIMAL}): "
                  f"{'met' if ratio <= TARGET_MINIMAL else 'NOT MET'}")
            failed += [] if ratio <= TARGET_MINIMAL else ["Mass against the minimal FMU"]
    print(f"targets: {'met' if not failed else 'NOT MET by ' + ', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
