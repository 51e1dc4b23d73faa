"""One FMU instance through fmpy, initialized with parameter values (imports fmpy only: also used by
fmu_roundtrip.py, which runs without this repository)."""
from fmpy.fmi2 import FMU2Slave


def initialized_slave(unzipped: str, md, parameters: dict, instance_name: str) -> FMU2Slave:
    """Instantiate, set parameters by Python type (str, bool, int, else Real), initialize."""
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                    instanceName=instance_name)
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    for name, value in parameters.items():
        setter = {str: fmu.setString, bool: fmu.setBoolean, int: fmu.setInteger}.get(type(value), fmu.setReal)
        setter([vr[name]], [value])
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    return fmu
