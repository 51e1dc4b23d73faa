"""RotationalSpringDamper: Modelica.Mechanics.Rotational.Components.SpringDamper (MSL 4.1), with MSL's Rotational
names.

    phi_rel = flange_b.phi − flange_a.phi,   w_rel = flange_b.w − flange_a.w
    tau_c = c·(phi_rel − phi_rel0),   tau_d = d·w_rel,   tau = tau_c + tau_d
    lossPower = tau_d·w_rel
    flange_b.tau = +tau,  flange_a.tau = −tau

Parameters: ``c`` [N.m/rad] (>= 0), ``d`` [N.m.s/rad] (>= 0), ``phi_rel0`` [rad] (unstretched spring angle).
MSL's ``phi_nominal`` (a nominal value for the relative states a Modelica tool selects) has no use here: the
bodies carry the states. MSL's optional heat port is the output ``lossPower`` [W] (``heatPort.Q_flow =
−lossPower``). Tangents: c and d. Invariant: flange_a.tau + flange_b.tau = 0.
"""
from __future__ import annotations

from .base import Output, Param
from .connector import ROTATIONAL, RotationalConnector
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent


def rotational_note(law: str) -> str:
    """The note of an MSL Rotational compliant element's equivalent whose torque law is ``law``."""
    return (f"the same law, names and signs ({law}); phi_nominal has no use here (the bodies carry the states); "
            "the heat port's heatPort.Q_flow is -lossPower")


class RotationalSpringDamper(NativeComponent, RotationalConnector):
    description = "Modelica Rotational SpringDamper: linear spring and damper in parallel"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.SpringDamper"
    example_parameters = {"c": 2.0e4, "d": 50.0, "phi_rel0": 0.2}
    parameters = (
        Param("c", 1.0e5, "N.m/rad", "Spring constant", min=0.0),
        Param("d", 0.0, "N.m.s/rad", "Damping constant", min=0.0),
        Param("phi_rel0", 0.0, "rad", "Unstretched spring angle"),
    )
    force_description = "Torque tau between the flanges (positive = tension)"
    modelica = (ModelicaEquivalent(
        "Modelica.Mechanics.Rotational.Components.SpringDamper", (("c", "c"), ("d", "d"), ("phi_rel0", "phi_rel0")),
        (), rotational_note("tau = c*(phi_rel - phi_rel0) + d*w_rel")),)
    law_outputs = (Output("lossPower", "W", "Power dissipated by the damper d*w_rel^2 (replaces the heat port)",
                          ROTATIONAL.flange_inputs),)
