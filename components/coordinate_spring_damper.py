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

Sign of ``offset``: the spring is relaxed (f = 0) where s_rel = flange_b.s − flange_a.s = offset, so offset
is the signed distance from flange_a to flange_b at rest (positive: flange_b lies in +s of flange_a), exactly
MSL's ``s_rel0`` (unstretched length: the same law, f = c·(s_rel − s_rel0) + d·v_rel, the same sign).
Worked example: a housing (Fixed, s0 = 0) wired to flange_a, a Mass (L = 0.1 m, s_start = 0.09 m) whose
flange_a (at s − L/2 = 0.04 m) is wired to flange_b, stiffness 1000 N/m: s_rel = 0.04 m.
  offset = 0.04 m:  f = 1000·(0.04 − 0.04) = 0, the spring starts relaxed and the mass at rest.
  offset = −0.04 m (the distance taken from flange_b to flange_a): f = 1000·(0.04 + 0.04) = +80 N, an 80 N
                    tension preload pulling the mass toward the housing from the start.
  offset = 0.09 m (to the mass's centre, not its flange): f = 1000·(0.04 − 0.09) = −50 N, a push.
Swapping the wiring (housing at flange_b, the mass at flange_a) makes s_rel = −0.04 m: then offset = −0.04 m is
relaxed and offset = 0.04 m gives f = −80 N. Read the sign off s_rel at the relaxed position.
"""
from __future__ import annotations

from .base import Param
from .connector import Connector
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent


def _as_msl(law: str) -> str:
    """The note of an MSL equivalent whose force law is ``law``."""
    return (f"the same law and signs: s_rel = flange_b.s - flange_a.s, v_rel = der(s_rel), {law}, flange_b.f = +f, "
            "flange_a.f = -f; MSL's lossPower (heat port) is not an output")


class CoordinateSpringDamper(NativeComponent, Connector):
    description = "Exudyn CoordinateSpringDamper: linear (or user-defined) spring-damper between two coordinates"
    source = "Exudyn 1.13.6 ObjectConnectorCoordinateSpringDamper (force equal to exudyn's GetObjectOutput Force)"
    example_parameters = {"stiffness": 5000.0, "damping": 80.0, "offset": 0.1,
                          "springForceUserFunction": "0.1*k*u + k*u**3 + v*d + sin(t)"}
    parameters = (
        Param("stiffness", 0.0, "N/m", "Spring stiffness k; acts against the relative coordinate"),
        Param("damping", 0.0, "N.s/m", "Damping d; acts against the relative velocity"),
        Param("offset", 0.0, "m", "Offset l_off: relaxed where s_rel = offset (MSL s_rel0; > 0: flange_b in +s of "
              "flange_a)"),
        Param("activeConnector", True, type="Boolean", description="If false, the connector force is zero"),
        Param("springForceUserFunction", "", type="String",
              description="Expression replacing the force law, in t, itemNumber, u, v, k, d, offset; empty = none"),
        Param("itemNumber", 0, type="Integer", description="Item number passed to the user function"),
    )
    force_description = "Connector force f_SD (positive = tension)"
    modelica = (
        ModelicaEquivalent("Modelica.Mechanics.Translational.Components.Spring",
                           (("c", "stiffness"), ("s_rel0", "offset")), (("damping", "0"),),
                           _as_msl("f = c*(s_rel - s_rel0)")),
        ModelicaEquivalent("Modelica.Mechanics.Translational.Components.Damper", (("d", "damping"),),
                           (("stiffness", "0"),), _as_msl("f = d*v_rel")),
        ModelicaEquivalent("Modelica.Mechanics.Translational.Components.SpringDamper",
                           (("c", "stiffness"), ("d", "damping"), ("s_rel0", "offset")), (),
                           _as_msl("f = c*(s_rel - s_rel0) + d*v_rel")),
    )
