"""A shipped component object is a view of the host library (components/native_component.py): its law is the C of
its native FMU, the one implementation. No shipped class carries a Python law beside it; an object's state is
saved, serialized and restored; a refusal names the component, the parameter and the value; the object and the
native FMU give the same outputs bit for bit."""
import random

import pytest
from mechfmu.components import COMPONENTS
from mechfmu.components.native_component import NativeComponent
from mechfmu.fmu.native_tables import NATIVE_HOOKS
from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.slaves import LocalSlave


def test_every_shipped_class_is_its_c_law_and_declares_only():
    assert sorted(NATIVE_HOOKS) == sorted(COMPONENTS)
    for name, cls in COMPONENTS.items():
        assert issubclass(cls, NativeComponent), name
        # between the class and NativeComponent (which forwards every call to the C) no method is defined
        below = cls.__mro__[:cls.__mro__.index(NativeComponent)]
        methods = [f"{k.__name__}.{n}" for k in below for n, v in vars(k).items() if callable(v) and n[:2] != "__"]
        assert not methods, methods


def test_a_native_state_is_saved_serialized_and_restored():
    component = COMPONENTS["Mass"]("m")
    component.set("f_drive", 2.0)
    component.initialize(0.0)
    component.do_step(0.0, 0.1)
    saved = component.get_state()
    blob = component.serialize_state(saved)
    component.do_step(0.1, 0.1)
    after = component.get_many(["s", "v"])
    component.set_state(component.deserialize_state(blob))
    assert component.time == 0.1
    component.do_step(0.1, 0.1)
    assert component.get_many(["s", "v"]) == after
    assert component.get_many(["s", "v"]) == [0.5 * 2.0 * 0.2 ** 2, 2.0 * 0.2]  # m = 1 kg, from rest: exact


def test_a_refusal_names_the_component_the_parameter_and_the_value():
    component = COMPONENTS["Mass"]("body")
    with pytest.raises(ValueError, match=r"Mass 'body': m = -1 is out of range"):
        component.set("m", -1.0)
    component.set("m", 2.0)  # the instance is unchanged by the refusal and goes on
    component.initialize(0.0)
    assert component.values["m"] == 2.0


def drive(slave, cls, seed: int, steps: int = 100) -> list:
    """The example parameters, then steps of random inputs: the outputs as hex, or the refusal's words."""
    rng = random.Random(seed)
    slave.set_parameters(dict(cls.example_parameters))
    slave.enter_initialization(0.0, None)
    slave.exit_initialization()
    outputs, rows, t = [o.name for o in cls.outputs], [], 0.0
    for _ in range(steps):
        if cls.inputs:
            slave.set([i.name for i in cls.inputs], [rng.uniform(-0.5, 0.5) for _ in cls.inputs])
        try:
            slave.do_step(t, 1e-3)
        except Exception as exc:  # a refused step: the words count
            rows.append(("step refused", str(exc).split(": ", 1)[-1]))
            break
        t += 1e-3
        rows.append(tuple(float(x).hex() for x in slave.get(outputs)))
    return rows


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_the_object_and_the_native_fmu_give_the_same_bits(name, fmus):
    cls = COMPONENTS[name]
    assert drive(LocalSlave("x", cls), cls, 3) == drive(FmuSlave("x", fmus[name]), cls, 3)
