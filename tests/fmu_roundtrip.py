"""Run in a fresh Python from a temporary directory (this repository not imported): drive one FMU
through fmpy with a random input sequence, check FMU state get/set and serialization replay the
same steps bit for bit, and print every output value as float.hex JSON for the comparison."""
import atexit
import json
import random
import shutil
import sys
from pathlib import Path

from fmpy import extract, read_model_description

sys.path.insert(0, str(Path(__file__).resolve().parent))  # -I leaves the script's folder out
from fmpy_driver import initialized_slave  # noqa: E402

fmu_path, seed = sys.argv[1], int(sys.argv[2])
parameters = json.loads(sys.argv[3])
assert not any(m.startswith("mechfmu") for m in sys.modules), "repository must not be imported"
md = read_model_description(fmu_path)
vr = {v.name: v.valueReference for v in md.modelVariables}
inputs = [v.name for v in md.modelVariables if v.causality == "input"]
outputs = [v.name for v in md.modelVariables if v.causality == "output"]
unzipped = extract(fmu_path)
atexit.register(shutil.rmtree, unzipped, ignore_errors=True)  # fmpy leaves its extraction in /tmp
fmu = initialized_slave(unzipped, md, parameters, "roundtrip")
rng = random.Random(seed)
sequence = [[rng.uniform(-2, 2) for _ in inputs] for _ in range(60)]


def run(steps, n0):
    rows = []
    for n, values in enumerate(steps):
        if inputs:
            fmu.setReal([vr[i] for i in inputs], values)
        fmu.doStep((n0 + n) * 1e-3, 1e-3)
        rows.append(fmu.getReal([vr[o] for o in outputs]))
    return rows


rows = run(sequence[:20], 0)
state = fmu.getFMUstate()
serialized = fmu.serializeFMUstate(state)
after = run(sequence[20:], 20)
fmu.setFMUstate(state)
replay = run(sequence[20:], 20)
fmu.setFMUstate(fmu.deSerializeFMUstate(serialized))
replay_serialized = run(sequence[20:], 20)
print(json.dumps({"inputs": inputs, "outputs": outputs, "sequence": [[x.hex() for x in r] for r in sequence],
                  "rows": [[x.hex() for x in r] for r in rows + after],
                  "replay_equal": replay == after, "serialized_equal": replay_serialized == after}))
fmu.terminate()
