"""The FMU binary under valgrind (a native FMU: the component in C; a Python-embedding one: the loader and Python):
a Python host that instantiates our FMUs, runs them through errors,
FMU states (get, set, serialize, deserialize, a refused blob), frees every instance and exits
normally reads or writes no memory it should not, in our native code or in code it loaded.

pythonfmu 0.7.0's binary failed this at every such exit: its library destructor reset a shared pointer
that a static destructor had already freed ("Invalid read of size 4 ... finalizePythonInterpreter"),
which corrupted the heap now and then ("corrupted double-linked list", exit 134). Python itself gives
valgrind reports (uninitialised reads in its allocator, strncmp in the dynamic loader); only reports
whose stack passes through an FMU binary (a path with binaries/linux64/) count."""
import os
import re
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # valgrind: about 10 s

HOST = """import sys
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
fmu_path = sys.argv[1]
try:
    simulate_fmu(fmu_path, start_values={"m": -1.0}, stop_time=0.01, output_interval=1e-3)
except FMICallException as exc:
    print("refused:", exc)
result = simulate_fmu(fmu_path, start_values={"m": 2.0, "f_drive": 1.0}, stop_time=0.1, output_interval=1e-2)
md = read_model_description(fmu_path)
unzipped = extract(fmu_path)
fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                instanceName="probe")
fmu.instantiate(); fmu.setupExperiment(startTime=0.0); fmu.enterInitializationMode(); fmu.exitInitializationMode()
fmu.doStep(0.0, 1e-3)
state = fmu.getFMUstate()
blob = fmu.serializeFMUstate(state)
fmu.doStep(1e-3, 1e-3)
fmu.setFMUstate(fmu.deSerializeFMUstate(blob))
try:
    fmu.deSerializeFMUstate(blob[:9] + b"{garbage")
except FMICallException:
    print("garbage refused")
fmu.doStep(1e-3, 1e-3)
names = [v.name for v in md.modelVariables]
print("x", fmu.getReal([md.modelVariables[names.index("s")].valueReference]))
fmu.freeFMUstate(state)
fmu.terminate(); fmu.freeInstance()
print("done", float(result["s"][-1]))
"""


@pytest.mark.parametrize("kind", ["native", "python"])
def test_no_invalid_memory_access_in_the_fmu_binary(fmus, python_fmus, kind, tmp_path):
    assert shutil.which("valgrind"), "this test needs valgrind (apt-get install valgrind; .ci/run installs it)"
    log = tmp_path / "valgrind.txt"
    fmu = (fmus if kind == "native" else python_fmus)["Mass"]
    proc = subprocess.run(["valgrind", "--error-limit=no", "--num-callers=40", f"--log-file={log}",
                           sys.executable, "-c", HOST, str(fmu)],
                          capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PYTHONMALLOC="malloc"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "garbage refused" in proc.stdout and "refused:" in proc.stdout, proc.stdout
    # x(0.1) = f t^2 / (2 m) = 1 * 0.01 / 4 (explicit step of a constant force: exact to rounding)
    assert abs(float(proc.stdout.split("done")[-1]) - 0.0025) < 1e-12, proc.stdout
    reports = re.split(r"==\d+== \n", log.read_text())
    ours = [r for r in reports if re.search(r"Invalid|uninitialised|Mismatched|free'd", r)
            and "/binaries/linux64/" in r]
    assert not ours, "\n".join(ours)
    assert "ERROR SUMMARY" in reports[-1]
