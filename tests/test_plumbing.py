"""The master's per-step plumbing: the native loader's set of live instances (O(1) per
call, open addressing with deletion by backward shift) and the components' batched get/set, which must
answer exactly as the single-name calls do."""
import ctypes
import math
import random

import pytest
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
from mechfmu.components import COMPONENTS

from mechfmu.master.fmu_slave import FmuSlave


def test_hundreds_of_instances_freed_in_any_order_stay_told_apart(fmus):
    """More instances than the live set's first size (it grows), freed in a shuffled order: every live one
    keeps answering, every freed one (and a pointer never handed out) is refused with fmi2Error."""
    md, folder = FmuSlave.unpacked(str(fmus["Fixed"]))
    vr, s0 = (next(v.valueReference for v in md.modelVariables if v.name == name) for name in ("flange.s", "s0"))

    def instance(i: int) -> FMU2Slave:
        slave = FMU2Slave(guid=md.guid, unzipDirectory=folder, modelIdentifier=md.coSimulation.modelIdentifier,
                          instanceName=f"fixed{i}")
        slave.instantiate()
        slave.setReal([s0], [float(i)])  # s0 = i: each instance tells its own number
        return slave

    keeper = instance(-1)  # holds the library and calls the freed handles through its function pointers
    live = {i: instance(i) for i in range(300)}
    rng = random.Random(15)
    order = list(live)
    rng.shuffle(order)
    value = (ctypes.c_double * 1)()
    refs = (ctypes.c_uint * 1)(vr)
    for count, i in enumerate(order):
        handle = live.pop(i).component
        keeper.fmi2FreeInstance(handle)
        keeper.fmi2FreeInstance(handle)  # freed twice: nothing happens
        with pytest.raises(FMICallException) as refused:
            keeper.fmi2GetReal(handle, refs, 1, value)
        assert refused.value.status == 3  # fmi2Error, not a crash or another instance's value
        if count % 10 == 0 or len(live) < 10:
            for j in rng.sample(sorted(live), min(len(live), 20)):
                assert live[j].getReal([vr]) == [float(j)]
    with pytest.raises(FMICallException):
        keeper.fmi2GetReal(ctypes.c_void_p(ctypes.addressof(value)), refs, 1, value)  # never an instance
    assert keeper.getReal([vr]) == [-1.0]
    keeper.terminate()
    keeper.freeInstance()


def example_component(cls):
    component = cls("batched")
    for name, value in cls.example_parameters.items():
        component.set(name, value)
    component.initialize(0.0)
    return component


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_batched_get_and_set_answer_as_single_calls(model):
    """``get_many``/``set_many`` give the values (bit for bit) and the errors of ``get``/``set`` name by name."""
    cls = COMPONENTS[model]
    batched, single = example_component(cls), example_component(cls)
    inputs, outputs = [i.name for i in cls.inputs], [o.name for o in cls.outputs]
    rng = random.Random(model)
    for _ in range(20):
        values = [rng.uniform(-2.0, 2.0) for _ in inputs]
        batched.set_many(inputs, values)
        for name, value in zip(inputs, values):
            single.set(name, value)
        names = outputs + inputs + [p.name for p in cls.parameters]
        assert [repr(x) for x in batched.get_many(names)] == [repr(single.get(n)) for n in names]
        batched.do_step(batched.time, 1e-3)
        single.do_step(single.time, 1e-3)
    for names, values in ((inputs[:1] + ["nope"], [0.5, 1.0]), (inputs[:2], [1.0, math.inf]),
                          (outputs[:1], [1.0]), (inputs[:1], ["x"])):
        errors: list = [[], []]
        for k, (component, write) in enumerate(((batched, batched.set_many), (single, None))):
            try:
                if write is not None:
                    write(names, values)
                else:
                    for name, value in zip(names, values):
                        component.set(name, value)
            except Exception as exc:
                errors[k] = [type(exc), str(exc)]
        assert errors[0] == errors[1]
    with pytest.raises(Exception, match="no variable named 'nope'"):
        batched.get_many(outputs[:2] + ["nope"])
    assert batched.get_many([]) == []
