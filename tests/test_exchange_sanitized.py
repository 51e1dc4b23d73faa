"""The compiled exchange (mechfmu/master/exchange.c, csv_text.c, dense_points.c) under AddressSanitizer and UBSan:
the library built with clang's sanitizers and loaded into a Python process (the sanitizer's runtime preloaded) runs
Jacobi in blocks (``exchange_steps``: the run, its error estimate, a row written as CSV), a run that diverges
mid-block, one whose step a table refuses mid-block and a monolithic run with state events (its points between the
integrator's steps: ``dense_points``), each without a sanitizer report and with the same rows, bit for bit, as the
library built as usual. Without clang the test is skipped (under CI it fails: .ci/run installs clang)."""
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import unavailable

from mechfmu.fmu.native import exchange_arguments

ROOT = Path(__file__).resolve().parent.parent
RUNS = """import hashlib, sys
from pathlib import Path
from mechfmu.master import exchange
if sys.argv[1] != "-":
    exchange._built = lambda: Path(sys.argv[1])
from mechfmu import Force, Mass, System, Table
from mechfmu.master.result_files import CsvWriter
from mechfmu.master.simulate import simulate
assert exchange.library() is not None
out = Path(sys.argv[2])
runs = [simulate("scenarios/stick_slip", stop=0.5, observers=[CsvWriter(out)]),
        simulate("scenarios/two_mass_oscillator", algorithm="jacobi", step=0.05, stop=50.0, estimate_error=False),
        simulate("scenarios/elastogap", algorithm="monolithic", stop=0.5, estimate_error=False)]
s = System("table_force")
table = s.add("table", Table(table="0, 1; 0.05, 1", extrapolation=4))
force, mass = s.add("force", Force()), s.add("mass", Mass(m=1.0))
s.connect(table.y, force.f)
s.connect(force.flange, mass.flange_a)
runs.append(s.run(stop=0.1, step=1e-3, algorithm="jacobi", estimate_error=False))
for r in runs:
    print(r.status, r.end_time, hashlib.sha256(r.data.tobytes()).hexdigest(), r.counters["fmu_calls"],
          r.accuracy.estimate if r.accuracy else None)
print("csv", hashlib.sha256(out.read_bytes()).hexdigest())
"""


@pytest.mark.slow
def test_the_exchange_in_blocks_runs_clean_under_address_and_undefined_behaviour_sanitizers(fmus, tmp_path):
    clang = shutil.which("clang")
    if clang is None:
        unavailable("clang is needed to build the exchange with sanitizers (apt-get install clang; .ci/run installs "
                    "it)")
    runtime = subprocess.run([clang, "-print-file-name=libclang_rt.asan-x86_64.so"], capture_output=True,
                             text=True).stdout.strip()
    if not Path(runtime).is_file():
        unavailable(f"clang's AddressSanitizer runtime is missing ({runtime})")
    arguments, sources = exchange_arguments()
    library = tmp_path / "exchange_sanitized.so"
    subprocess.run([clang, *[a for a in arguments if a != "-O2"], "-O1", "-g", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-shared", "-fPIC", "-o", str(library),
                    *map(str, sources)], check=True, capture_output=True, text=True)
    script = tmp_path / "runs.py"
    script.write_text(RUNS)
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = subprocess.run([sys.executable, str(script), "-", str(tmp_path / "plain.csv")], cwd=ROOT,
                           capture_output=True, text=True, timeout=600, env=environment).stdout
    sanitized = subprocess.run(
        [sys.executable, str(script), str(library), str(tmp_path / "sanitized.csv")], cwd=ROOT, capture_output=True,
        text=True, timeout=600, env={**environment, "LD_PRELOAD": runtime, "PYTHONMALLOC": "malloc",
                                     "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
                                     "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"})
    assert sanitized.returncode == 0 and "ERROR: AddressSanitizer" not in sanitized.stderr, sanitized.stderr[-3000:]
    assert "runtime error" not in sanitized.stderr, sanitized.stderr[-3000:]
    lines = sanitized.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["ok", "error", "ok", "error", "csv"], sanitized.stdout
    assert sanitized.stdout == plain, (sanitized.stdout, plain)
    assert hashlib.sha256(b"").hexdigest() not in sanitized.stdout
