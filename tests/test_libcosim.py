"""The two_mass_oscillator folder runs unchanged in libcosim and equals our strict Jacobi run."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from mechfmu.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ["mass1.s", "mass1.v", "mass2.s", "mass2.v"]


def test_two_mass_oscillator_in_libcosim_equals_strict_jacobi(fmus):
    ssd = ROOT / "scenarios/two_mass_oscillator/SystemStructure.ssd"
    proc = subprocess.run([sys.executable, str(Path(__file__).with_name("libcosim_run.py")), str(ssd), "2000", *COLUMNS],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    libcosim = np.array(json.loads(proc.stdout.strip().splitlines()[-1]))
    ours = simulate(ssd.parent, exchange="strict")
    assert ours.ok, ours.message
    mine = np.array([ours.data[c][1:] for c in COLUMNS]).T
    assert mine.shape == libcosim.shape == (2000, 4)
    difference = np.abs(mine - libcosim).max()
    print(f"\nmax |ours(strict) - libcosim| over 2 s: {difference:.2e}")
    assert difference < 1e-12
