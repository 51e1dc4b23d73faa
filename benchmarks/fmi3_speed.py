"""The cost of a co-simulation step of the FMI 3.0 FMUs against the FMI 2.0 ones, side by side in one run: the same
runtime and law under each glue, in a plain C host (``benchmarks/fmi2_speed_host.c``, ``fmi3_speed_host.c``): per
step the inputs set, the step, the outputs read (``--steps`` steps, default 10^6; every input changes every step but
the held tangents, as ``native_speed.py`` does). The FMI 3.0 FMU runs with event mode used and early return
allowed, without and with an intermediate update callback (called at every step's end, asking for nothing). Each
pair is measured ``--repeats`` times alternately (default 3), the fastest kept.

Target: an FMI 3.0 step costs at most what the FMI 2.0 one does (ratio <= 1.05: the noise of one machine's timer).
``--instructions`` counts instead the instructions of a step under valgrind's callgrind (no timer noise: the count
of 2·S steps less that of S, ``--steps`` S default 20,000), the whole step and the glue's share (the fmi2*/fmi3*
functions), where the ratio's target is 1.0.

    python3 benchmarks/fmi3_speed.py [--steps N] [--repeats N] [--instructions] [MODEL ...]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import fmpy
from fmpy import extract, read_model_description
from mechfmu.components import COMPONENTS
from native_speed import c_host_ns, compile_host, kinds

from mechfmu.fmu import fmi3
from mechfmu.fmu.fmi3_arrays import read_description
from mechfmu.fmu.build import build

HOST3 = Path(__file__).with_name("fmi3_speed_host.c")
TARGET_RATIO = 1.05
#: the connectors (whose step is the cheapest, so the glue's share is the largest) and the mass
MODELS = ["CoordinateSpringDamper", "ElastoGap", "CoordinateSpringDamperExt", "SmoothSphereHalfSpaceForce", "Mass"]


def array_references(fmu: Path, model: str) -> tuple[list[int], list[int]]:
    """The value references of the FMI 3.0 FMU's inputs and outputs, an array once for its elements (which are in
    the order of the component's scalar inputs and outputs)."""
    expanded = {v.name: v.valueReference for v in read_description(fmu).modelVariables}
    cls = COMPONENTS[model]
    return ([*dict.fromkeys(expanded[i.name] for i in cls.inputs)],
            [*dict.fromkeys(expanded[o.name] for o in cls.outputs)])


def fmi3_ns(host: Path, fmu: Path, model: str, steps: int, callback: bool, folder: Path,
            wrapper: tuple[str, ...] = ()) -> float:
    unpacked = Path(extract(str(fmu), unzipdir=str(folder / f"fmi3_{model}")))
    description = read_model_description(str(fmu))
    inputs, outputs = array_references(fmu, model)
    cmd = [*wrapper, str(host), str(unpacked / "binaries" / "x86_64-linux" / f"{model}.so"),
           str(unpacked / "resources") + "/",
           description.guid, str(int(callback)), str(steps), "1e-4", str(len(inputs)), str(len(outputs)),
           str(len(COMPONENTS[model].inputs)), str(len(COMPONENTS[model].outputs)), kinds(model),
           *map(str, inputs + outputs)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{model} ({fmu}): {proc.stderr}")
    return float(proc.stdout.split()[1])


def instructions(run, steps: int, folder: Path, name: str) -> tuple[float, float]:
    """Instructions per step under callgrind, of the whole step and of the glue (fmi2*/fmi3* functions), from ``run``
    (a function of the step count and the wrapper) at ``steps`` and twice as many."""
    counts = []
    for n in (steps, 2 * steps):
        out = folder / f"callgrind.{name}.{n}"
        run(n, ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"))
        text = subprocess.run(["callgrind_annotate", str(out)], capture_output=True, text=True, check=True).stdout
        total = int(re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", text).group(1).replace(",", ""))
        glue = sum(int(m.group(1).replace(",", "")) for m in re.finditer(r"^\s*([\d,]+) \([^)]*\)\s+\?\?\?:fmi[23]\w+",
                                                                          text, re.M))
        counts.append((total, glue))
    return (counts[1][0] - counts[0][0]) / steps, (counts[1][1] - counts[0][1]) / steps


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("models", nargs="*", default=MODELS)
    args = parser.parse_args(argv)
    if args.instructions and "--steps" not in " ".join(argv):
        args.steps = 20_000
    unknown = [m for m in args.models if m not in COMPONENTS]
    if unknown:
        parser.error(f"not components: {', '.join(unknown)}")
    build(args.models)
    fmi3.build(args.models)
    failed = []
    with tempfile.TemporaryDirectory(prefix="mechfmu_fmi3_speed_") as tmp:
        folder = Path(tmp)
        host2 = compile_host(folder)
        host3 = folder / "fmi3_speed_host"
        subprocess.run(["cc", "-O2", f"-I{Path(fmpy.__file__).parent / 'c-code'}", "-o", str(host3), str(HOST3),
                        "-ldl"], check=True)
        from mechfmu.fmu.build import fmu_path
        if args.instructions:
            print(f"{'model':28s} {'FMI 2.0':>9s} {'FMI 3.0':>9s} {'ratio':>6s}  {'glue 2.0':>9s} {'glue 3.0':>9s}  "
                  "(instructions per step)")
            for model in args.models:
                two = instructions(lambda n, w, m=model: c_host_ns(host2, fmu_path(m), m, n, folder, w), args.steps,
                                   folder, f"2_{model}")
                three = instructions(lambda n, w, m=model: fmi3_ns(host3, fmi3.fmu_dir() / f"{m}.fmu", m, n, False,
                                                                   folder, w), args.steps, folder, f"3_{model}")
                ratio = three[0] / two[0]
                print(f"{model:28s} {two[0]:9.1f} {three[0]:9.1f} {ratio:6.3f}  {two[1]:9.1f} {three[1]:9.1f}"
                      f"{'' if ratio <= 1.0 else '  over the target'}")
                failed += [model] if ratio > 1.0 else []
            print(f"target: an FMI 3.0 step at most the FMI 2.0 one's instructions: "
                  f"{'met' if not failed else 'missed by ' + ', '.join(failed)}")
            return 1 if failed else 0
        print(f"{'model':28s} {'FMI 2.0':>9s} {'FMI 3.0':>9s} {'+callback':>10s} {'ratio':>6s}  (ns per step)")
        for model in args.models:
            two, three, called = [], [], []
            for _ in range(args.repeats):
                two.append(c_host_ns(host2, fmu_path(model), model, args.steps, folder))
                three.append(fmi3_ns(host3, fmi3.fmu_dir() / f"{model}.fmu", model, args.steps, False, folder))
                called.append(fmi3_ns(host3, fmi3.fmu_dir() / f"{model}.fmu", model, args.steps, True, folder))
            ratio = min(three) / min(two)
            print(f"{model:28s} {min(two):9.1f} {min(three):9.1f} {min(called):10.1f} {ratio:6.2f}"
                  f"{'' if ratio <= TARGET_RATIO else '  over the target'}")
            failed += [model] if ratio > TARGET_RATIO else []
    print(f"target: an FMI 3.0 step at most {TARGET_RATIO:.2f} times the FMI 2.0 one: "
          f"{'met' if not failed else 'missed by ' + ', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
