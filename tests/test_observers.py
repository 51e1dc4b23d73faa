"""Observers see each communication point once: ``simulate`` reads every output once per point
and hands the row to every observer, so what is attached changes neither the FMU-call count nor
the values (the CSV equals the in-memory result bit for bit)."""
import re
import subprocess
import sys

import numpy as np
from fmpy.util import read_csv

from mechfmu.master.observers import Observer
from mechfmu.master.result_files import CsvWriter
from mechfmu.master.simulate import simulate


class Counting(Observer):
    def __init__(self):
        self.rows = 0

    def initialized(self, run):
        self.rows = 1

    def step_completed(self, run):
        self.rows += 1


def test_fmu_calls_do_not_depend_on_the_observers(fmus, tmp_path):
    plain = simulate("scenarios/oscillator", stop=0.05)
    counting = Counting()
    observed = simulate("scenarios/oscillator", stop=0.05, observers=[CsvWriter(tmp_path / "x.csv"), counting])
    assert plain.ok and observed.ok
    assert observed.counters["fmu_calls"] == plain.counters["fmu_calls"]
    assert counting.rows == len(plain.data) == 501
    written = read_csv(str(tmp_path / "x.csv"))
    assert written.dtype.names == plain.data.dtype.names
    assert all(np.array_equal(written[n], plain.data[n]) for n in plain.data.dtype.names)  # repr round-trips


def test_command_line_with_out_counts_the_same_fmu_calls_as_simulate(fmus, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", "scenarios/oscillator", "--stop", "0.05",
                           "--out", str(tmp_path / "x.csv")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = int(re.search(r"fmu_calls (\d+)", proc.stdout).group(1))
    assert calls == simulate("scenarios/oscillator", stop=0.05).counters["fmu_calls"]
