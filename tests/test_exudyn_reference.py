"""CoordinateSpringDamper against exudyn 1.13.6's own force output."""
import random

import pytest
from mechfmu.components import CoordinateSpringDamper

exu = pytest.importorskip("exudyn")  # the test extra (pins 1.13.6)
from exudyn.itemInterface import CoordinateSpringDamper as ExuCSD  # noqa: E402
from exudyn_states import two_coordinates  # noqa: E402

USER_LAW = "0.1*k*u + k*u**3 + v*d"


def exudyn_force(q0, q1, v0, v1, k, d, offset, user):
    SC, mbs, markers = two_coordinates(q0, q1, v0, v1)
    kwargs = {}
    if user:
        kwargs["springForceUserFunction"] = lambda mbs, t, i, u, v, k, d, off: 0.1 * k * u + k * u**3 + v * d
    obj = mbs.AddObject(ExuCSD(markerNumbers=markers, stiffness=k, damping=d, offset=offset, **kwargs))
    mbs.Assemble()
    return mbs.GetObjectOutput(obj, exu.OutputVariableType.Force)


@pytest.mark.parametrize("user", [False, True])
def test_force_equals_exudyn_at_random_states(user):
    rng = random.Random(3 + user)
    worst = 0.0
    for _ in range(50):
        q0, q1, v0, v1 = (rng.uniform(-0.5, 0.5) for _ in range(4))
        k, d, offset = rng.uniform(10, 1e4), rng.uniform(0, 200), rng.uniform(-0.2, 0.2)
        c = CoordinateSpringDamper("c")
        for name, value in dict(stiffness=k, damping=d, offset=offset,
                                springForceUserFunction=USER_LAW if user else "").items():
            c.set(name, value)
        c.initialize()
        for name, value in {"flange_a.s": q0, "flange_b.s": q1, "flange_a.v": v0, "flange_b.v": v1}.items():
            c.set(name, value)
        ref = exudyn_force(q0, q1, v0, v1, k, d, offset, user)
        worst = max(worst, abs(c.get("f") - ref) / max(abs(ref), 1e-300))
    print(f"\nmax relative difference to exudyn ({'user function' if user else 'linear'}): {worst:.2e}")
    assert worst <= 1e-12
