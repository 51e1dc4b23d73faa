"""Do this tree's FMUs give bit for bit the results of an earlier revision's FMUs?

Builds the FMUs of REV (default 3ea44fb, the last commit before the native loader) in a git worktree,
then runs every scenario with both FMU sets, measured in one run:
- through fmpy with our master (the scenario's own algorithm, its first N steps), every recorded
  output compared bit for bit (outputs the newer FMUs add are listed, not compared);
- in libcosim (libcosimpy, its own process; mechfmu.crosscheck.tools.run_libcosim), every output of every scenario
  (the constraint scenarios run there with lambda = 0, which libcosim cannot solve);
and prints the wall-time ratio of the two FMU sets under our master.

    python3 benchmarks/fmu_bit_identity.py [REV] [--steps N]
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_libcosim import CASES as LIBCOSIM_CASES  # noqa: E402  (their step counts)

from mechfmu.crosscheck.tools import run_libcosim  # noqa: E402
from mechfmu.fmu.build import FMU_DIR, build  # noqa: E402
from mechfmu.master.simulate import simulate  # noqa: E402
from mechfmu.ssp.scenario import load_scenario  # noqa: E402


@contextmanager
def checkout(revision: str, work: Path):
    """A worktree of ``revision`` and the environment that makes Python import that revision's code
    (its ``mechfmu`` from the working directory; its ``components/`` as ``mechfmu_components``, the
    name every revision up to the package rename imports)."""
    tree, names = work / "tree", work / "import_names"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision], check=True,
                   capture_output=True)
    names.mkdir()
    (names / "mechfmu_components").symlink_to(tree / "components")
    if (tree / "mechfmu").is_dir() and not (tree / "mechfmu" / "components").exists():
        # ``mechfmu.components`` of that revision: without this link the import would find this
        # checkout's components/ through its editable install (a finder after the path search)
        (tree / "mechfmu" / "components").symlink_to(tree / "components")
    try:
        yield tree, {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(names)])}
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)


def build_revision(revision: str, models: list[str], work: Path) -> Path:
    """The FMUs of ``revision``, built by that revision's own build code."""
    out = work / "fmus"
    with checkout(revision, work) as (tree, env):
        code = "import sys; from mechfmu.fmu.build import build; build(sys.argv[2:], directory=sys.argv[1])"
        subprocess.run([sys.executable, "-c", code, str(out), *models], cwd=tree, env=env, check=True)
    return out


def libcosim_with(ssd: Path, fmu_dir: Path, label: str, n_steps: int, columns: list[str], work: Path) -> np.ndarray:
    folder = work / f"{ssd.parent.name}_{label}"
    folder.mkdir()
    (folder / "SystemStructure.ssd").write_text(ssd.read_text().replace("../../fmus/", fmu_dir.as_posix() + "/"))
    return run_libcosim(folder / "SystemStructure.ssd", n_steps, columns)


def main(revision: str, steps: int) -> int:
    build()
    scenarios = sorted(p.parent for p in (ROOT / "scenarios").glob("*/SystemStructure.ssd"))
    models = sorted({spec.fmu.stem for s in scenarios for spec in load_scenario(s).components.values()})
    differing = 0
    with tempfile.TemporaryDirectory(prefix="mechfmu_identity_") as tmp:
        work = Path(tmp)
        old_dir = build_revision(revision, models, work)
        walls = {"old": 0.0, "new": 0.0}
        print(f"FMUs of {revision} against this tree's, {steps} steps of each scenario (its own algorithm)")
        for folder in scenarios:
            results = {}
            for label, fmu_dir in (("old", old_dir), ("new", FMU_DIR)):
                scenario = load_scenario(folder)
                for spec in scenario.components.values():
                    spec.fmu = fmu_dir / spec.fmu.name
                t = time.perf_counter()
                results[label] = simulate(scenario, stop=min(scenario.stop_time,
                                                             scenario.start_time + steps * scenario.step_size))
                walls[label] += time.perf_counter() - t
            old, new = results["old"], results["new"]
            common = [n for n in old.data.dtype.names if n in new.data.dtype.names]
            added = [n for n in new.data.dtype.names if n not in old.data.dtype.names]
            equal = (old.status == new.status and len(old.data) == len(new.data)
                     and all(np.array_equal(old.data[n], new.data[n], equal_nan=True) for n in common))
            line = f"  {folder.name:22s} fmpy: {'identical' if equal else 'DIFFERENT'} ({len(common)} outputs x {len(new.data)} rows)"
            if added:
                line += f", new outputs {added}"
            # libcosim: every output, read the same way for both FMU sets
            n_steps = LIBCOSIM_CASES.get(folder.name, (steps,))[0]
            columns = [c for c in common if c != "time"]
            ssd = folder / "SystemStructure.ssd"
            a, b = (libcosim_with(ssd, d, label, n_steps, columns, work)
                    for label, d in (("old", old_dir), ("new", FMU_DIR)))
            same = a.shape == b.shape and np.array_equal(a, b)
            equal &= same
            line += f"; libcosim: {'identical' if same else 'DIFFERENT'} ({len(columns)} outputs x {n_steps} steps)"
            differing += not equal
            print(line)
        print(f"wall time under our master, this tree / {revision}: {walls['new'] / walls['old']:.3f} "
              f"({walls['new']:.1f} s / {walls['old']:.1f} s)")
    print(f"{len(scenarios) - differing} of {len(scenarios)} scenarios identical")
    return 1 if differing else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    steps = 2000
    if "--steps" in args:
        i = args.index("--steps")
        steps = int(args[i + 1])
        del args[i:i + 2]
    sys.exit(main(args[0] if args else "3ea44fb", steps))
