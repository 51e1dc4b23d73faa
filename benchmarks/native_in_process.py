"""In-process component step, the Python law against the C law through the host library (one run, side by side).

Per component: set every input, step, read every output, 2e4 times (Mass: 1e5), as the master's in-process path
does; the component's Python class against the same class as a view of the host library
(components/native_component.py). Prints microseconds per step and the ratio.

    python3 benchmarks/native_in_process.py
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import mechfmu.components.native_library as native_library
from mechfmu.components import COMPONENTS
from mechfmu.components.native_component import NativeComponent

from mechfmu.fmu.native import compile_library

MODELS = ("Mass", "ElastoGap", "CoordinateSpringDamper", "CoordinateSpringDamperExt", "SmoothSphereHalfSpaceForce",
          "RigidBody")


def per_step(component, cls, steps: int) -> float:
    for key, value in cls.example_parameters.items():
        component.set(key, value)
    component.initialize(0.0)
    inputs, outputs = [i.name for i in cls.inputs], [o.name for o in cls.outputs]
    values, t = [0.01] * len(inputs), 0.0
    start = time.perf_counter()
    for _ in range(steps):
        component.set_many(inputs, values)
        component.do_step(t, 1e-3)
        component.get_many(outputs)
        t += 1e-3
    return (time.perf_counter() - start) / steps * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        native_library.library_path = str(Path(tmp) / "libmechfmu_components.so")
        compile_library(Path(native_library.library_path))
        print(f"{'component':28s} {'Python law':>12s} {'C law':>10s} {'ratio':>7s}   (us per step)")
        for name in MODELS:
            cls = COMPONENTS[name]
            steps = 100_000 if name == "Mass" else 20_000
            native = type(name, (NativeComponent, cls), {"__module__": cls.__module__})
            python_time, c_time = per_step(cls("x"), cls, steps), per_step(native("x"), cls, steps)
            print(f"{name:28s} {python_time:12.2f} {c_time:10.2f} {python_time / c_time:7.1f}")


if __name__ == "__main__":
    main()
