"""Run in a fresh Python from a temporary directory (this repository not imported): drive one FMU
through fmpy with a random input sequence, check FMU state get/set and serialization replay the
same steps bit for bit, and print every output value as float.hex JSON for the comparison."""
import json
import random
import sys

from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

fmu_path, seed = sys.argv[1], int(sys.argv[2])
parameters = json.loads(sys.argv[3])
assert not any(m.startswith("mechfmu") for m in sys.modules), "repository must not be imported"
md = read_model_description(fmu_path)
vr = {v.name: v.valueReference for v in md.modelVariables}
inputs = [v.name for v in md.modelVariables if v.causality == "input"]
outputs = [v.name for v in md.modelVariables if v.causality == "output"]
fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(fmu_path), modelIdentifier=md.coSimulation.modelIdentifier,
                instanceName="roundtrip")
fmu.instantiate()
fmu.setupExperiment(startTime=0.0)
for name, value in parameters.items():
    setter = {str: fmu.setString, bool: fmu.setBoolean, int: fmu.setInteger}.get(type(value), fmu.setReal)
    setter([vr[name]], [value])
fmu.enterInitializationMode()
fmu.exitInitializationMode()
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
