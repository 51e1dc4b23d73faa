"""The in-process component as a view of the host library (components/native_component.py), as the master's
in-process path runs it: every native class, driven through the same plan (its example parameters, 200 steps of
random inputs) as its Python component, gives the same outputs and warnings bit for bit; its state is saved,
serialized and restored; a refusal has the Python component's words; a class written in Python runs as it is."""
import random

import pytest
from mechfmu.components import COMPONENTS
from mechfmu.components.native_component import NativeComponent

from mechfmu.fmu.build import in_process_class
from mechfmu.fmu.native_tables import NATIVE_HOOKS


def native(name: str):
    """The class the master's in-process path runs for the component ``name``."""
    cls = in_process_class(COMPONENTS[name])
    assert issubclass(cls, NativeComponent) and cls.__name__ == name
    return cls


def plan(component, cls, seed: int, steps: int = 200) -> list:
    rng = random.Random(seed)
    for key, value in cls.example_parameters.items():
        component.set(key, value)
    component.initialize(0.0)
    outputs, rows, t = [o.name for o in cls.outputs], [], 0.0
    for _ in range(steps):
        if cls.inputs:
            component.set_many([i.name for i in cls.inputs], [rng.uniform(-0.5, 0.5) for _ in cls.inputs])
        try:
            component.do_step(t, 1e-3)
        except Exception as exc:  # a refused step: the words count
            rows.append(("step refused", str(exc)))
            break
        t += 1e-3
        rows.append(tuple(float(x).hex() for x in component.get_many(outputs)))
        rows.extend(component.step_warnings())
    return rows


@pytest.mark.parametrize("name", sorted(NATIVE_HOOKS))
def test_the_native_component_is_the_python_one_bit_for_bit(name):
    cls = COMPONENTS[name]
    assert plan(native(name)("x"), cls, 3) == plan(cls("x"), cls, 3)


def test_a_native_state_is_saved_serialized_and_restored():
    cls = native("Mass")
    component = cls("m")
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


def test_a_refusal_is_a_component_error_in_the_python_words():
    python, native_ = COMPONENTS["Mass"]("m"), native("Mass")("m")
    for component in (python, native_):
        with pytest.raises(ValueError) as caught:
            component.set("m", -1.0)
        component.words = str(caught.value)
    assert native_.words == python.words


def test_a_class_written_in_python_runs_as_it_is():
    from mechfmu.components.connector import Connector

    class Spring(Connector):
        def element_force(self, q: float, v: float) -> float:
            return 10.0 * q

    assert in_process_class(Spring) is Spring
