"""CoordinateSpringDamper: Exudyn ObjectConnectorCoordinateSpringDamper.

Marker m0 = ``flange_a``, marker m1 = ``flange_b``.

    s_rel = flange_b.s − flange_a.s                       (Exudyn Displacement, Δq)
    v_rel = flange_b.v − flange_a.v                       (Exudyn Velocity, Δv)
    f     = stiffness·(s_rel − offset) + damping·v_rel    (Exudyn Force, f_SD; tension positive)
    f     = UF(t, itemNumber, u, v, k, d, offset)         if springForceUserFunction is set (replaces the law)
    f     = 0                                             if activeConnector is false
    flange_b.f = +f,  flange_a.f = −f                     (Modelica cut forces; Exudyn applies +f on m0, −f on m1)
    flange_x.c = stiffness, flange_x.d = damping          (tangents; central differences for a user function)

Parameters: ``stiffness`` [N/m], ``damping`` [N.s/m], ``offset`` [m], ``activeConnector``,
``springForceUserFunction`` (expression; empty = none), ``itemNumber`` (the value passed as
``itemNumber`` to the user function). User-function names: ``t`` [s], ``itemNumber``,
``u`` or ``displacement`` (= s_rel), ``v`` or ``velocity`` (= v_rel), ``k`` or ``stiffness``,
``d`` or ``damping``, ``offset``; example ``0.1*k*u + k*u**3 + v*d``. ``t`` is the component's
current time (the communication point at which the force is read).
Invariant: flange_a.f + flange_b.f = 0 (the element conserves momentum).
"""
from __future__ import annotations

from .base import Param
from .connector import Connector
from .native_component import NativeComponent


class CoordinateSpringDamper(NativeComponent, Connector):
    description = "Exudyn CoordinateSpringDamper: linear (or user-defined) spring-damper between two coordinates"
    source = "Exudyn 1.13.6 ObjectConnectorCoordinateSpringDamper (force equal to exudyn's GetObjectOutput Force)"
    example_parameters = {"stiffness": 5000.0, "damping": 80.0, "offset": 0.1,
                          "springForceUserFunction": "0.1*k*u + k*u**3 + v*d + sin(t)"}
    parameters = (
        Param("stiffness", 0.0, "N/m", "Spring stiffness k; acts against the relative coordinate"),
        Param("damping", 0.0, "N.s/m", "Damping d; acts against the relative velocity"),
        Param("offset", 0.0, "m", "Offset l_off between the two coordinates (reference length of the spring)"),
        Param("activeConnector", True, type="Boolean", description="If false, the connector force is zero"),
        Param("springForceUserFunction", "", type="String",
              description="Expression replacing the force law, in t, itemNumber, u, v, k, d, offset; empty = none"),
        Param("itemNumber", 0, type="Integer", description="Item number passed to the user function"),
    )
    force_description = "Connector force f_SD (positive = tension)"
