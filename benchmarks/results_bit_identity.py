"""Does this tree's whole pipeline (master + FMUs) write the same result files as an earlier revision?

Runs every shipped scenario to its stop time with its own algorithm through the command line,
``mechfmu run SCENARIO --out X.csv``, once with REV's code and FMUs (a git worktree, built there) and
once with this tree's, and compares the two CSV files byte for byte (the values are written with
``repr``, so equal bytes are equal bits). Where this tree's FMUs output more variables (new columns),
the columns both have are compared value text for value text and the new ones listed. Use it around a
refactoring: REV is the commit before it. ``--local`` runs both as ``mechfmu run ... --local`` (the
components in-process, no FMUs): the in-process path compared the same way. ``--python`` runs this tree with
Python-embedding FMUs (``mechfmu build --backend python``) instead of the native ones it builds by default.
Default scenarios: every shipped one (``scenarios/*`` and ``scenarios/msl/*``).

    python3 benchmarks/results_bit_identity.py REV [--local | --python] [SCENARIO ...]
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from fmu_bit_identity import ROOT, checkout


def run(tree: Path, env: dict | None, scenario: str, out: Path, local: bool = False) -> subprocess.Popen:
    command = [sys.executable, "-m", "mechfmu.cli", "run", f"scenarios/{scenario}", "--out", str(out)]
    return subprocess.Popen(command + ["--local"] * local, cwd=tree, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def main(revision: str, scenarios: list[str], local: bool = False, python: bool = False) -> int:
    scenarios = scenarios or sorted(p.parent.relative_to(ROOT / "scenarios").as_posix()
                                    for p in (ROOT / "scenarios").glob("**/SystemStructure.ssd"))
    differing = 0
    with tempfile.TemporaryDirectory(prefix="mechfmu_results_") as tmp, checkout(revision, Path(tmp)) as (tree, env):
        work = Path(tmp)
        mine = None
        if python:
            from mechfmu.fmu.build import build
            build(directory=work / "python_fmus", platforms=["linux64"], backend="python")
            mine = {**os.environ, "MECHFMU_FMU_DIR": str(work / "python_fmus")}
        how = " --local" if local else " (this tree: Python-embedding FMUs)" if python else ""
        print(f"mechfmu run SCENARIO --out{how}: {revision} against this tree, byte for byte")
        for scenario in scenarios:
            old, new = work / f"{scenario}.old.csv", work / f"{scenario}.new.csv"
            runs = [run(tree, env, scenario, old, local), run(ROOT, mine, scenario, new, local)]  # at once: 2 cores
            outputs = [p.communicate()[0] for p in runs]
            if any(p.returncode != 0 for p in runs):
                print(f"  {scenario:22s} run failed:\n{outputs[0][-800:]}\n{outputs[1][-800:]}")
                differing += 1
                continue
            a, b = old.read_bytes(), new.read_bytes()
            rows = a.count(b"\n") - 1
            if a == b:
                print(f"  {scenario:22s} identical ({rows} rows, {len(a)} bytes)")
                continue
            same, added = common_columns_equal(old, new)
            verdict = (f"identical in all {same} columns of {revision}; new columns: {', '.join(added)}"
                       if same is not None else "DIFFERENT")
            print(f"  {scenario:22s} {verdict} ({rows} rows)")
            differing += same is None
    print(f"{len(scenarios) - differing} of {len(scenarios)} scenarios identical")
    return 1 if differing else 0


def common_columns_equal(old: Path, new: Path) -> tuple[int | None, list[str]]:
    """(number of old columns, columns only new has) if every old column is in the new file with the same
    values (as written) in the same rows, else (None, [])."""
    with open(old, newline="") as f_old, open(new, newline="") as f_new:
        a, b = list(csv.reader(f_old)), list(csv.reader(f_new))
    if len(a) != len(b) or not set(a[0]) <= set(b[0]):
        return None, []
    where = [b[0].index(name) for name in a[0]]
    if any([row_b[i] for i in where] != row_a for row_a, row_b in zip(a[1:], b[1:])):
        return None, []
    return len(a[0]), [name for name in b[0] if name not in a[0]]


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a not in ("--local", "--python")]
    sys.exit(main(arguments[0], arguments[1:], local="--local" in sys.argv[1:], python="--python" in sys.argv[1:])
             if arguments else "usage: results_bit_identity.py REV [--local | --python] [SCENARIO ...]")
