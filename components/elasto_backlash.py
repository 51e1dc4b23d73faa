"""ElastoBacklash and ElastoBacklash2: Modelica.Mechanics.Rotational.Components.ElastoBacklash and ElastoBacklash2
(MSL 4.1): a backlash in series with a linear spring and damper, with MSL's Rotational names.

    phi_rel = flange_b.phi − flange_a.phi,   w_rel = flange_b.w − flange_a.w
    phi_diff = phi_rel − phi_rel0,   bMax = b/2,   bMin = −bMax
    tau_c = c·phi_diff                  if |b| <= bEps (1e-10 rad: no backlash)
            c·(phi_diff − bMax)         if phi_diff > bMax       (contact on the upper side)
            c·(phi_diff − bMin)         if phi_diff < bMin       (contact on the lower side)
            0                           else                     (in the gap)
    tau_d = d·w_rel
    flange_b.tau = +tau,  flange_a.tau = −tau

ElastoBacklash never pulls (its damper torque is clamped so that it cannot, without an event):

    tau = tau_c + tau_d                                                   if |b| <= bEps
          0 if tau_c + tau_d <= 0, else tau_c + min(tau_c, tau_d)          upper contact
          0 if tau_c + tau_d >= 0, else tau_c + max(tau_c, tau_d)          lower contact
          0                                                               in the gap
    lossPower = tau_d·w_rel, min(tau_c, tau_d)·w_rel, max(tau_c, tau_d)·w_rel or 0 alike

ElastoBacklash2 lets the torque jump at the start of a contact (an event where it does):

    tau = tau_c + tau_d in contact unless that pulls (then 0), 0 in the gap;  lossPower = tau_d·w_rel where
    tau is not 0

During initialization (FMI initialization mode: MSL's ``initial()``) both use MSL's strictly monotone
characteristic, tau_c = c·(phi_diff − bMax) beyond 1.5·bMax, c·(phi_diff − bMin) below 1.5·bMin, (c/3)·phi_diff
between, with tau = tau_c + tau_d and lossPower = tau_d·w_rel, so that an initialization which solves for
phi_rel is not singular; from the first step on, the law above.

Event indicators (MSL's relations; 0 for |b| <= bEps, which has no switch): ``indicator.upper = phi_diff − bMax``
(> 0 exactly in upper contact), ``indicator.lower = bMin − phi_diff`` (> 0 exactly in lower contact);
ElastoBacklash2 also ``indicator.transmitting = tau_c + tau_d``, the crossing function of MSL's relations
``tau_c + tau_d <= 0`` and ``>= 0``: continuous (tau_c is 0 in the gap), > 0 in upper contact and < 0 in lower
contact exactly while the contact transmits torque (it also crosses 0 where w_rel does in the gap, a switch of
nothing, as in MSL). ElastoBacklash's clamp is continuous (MSL's noEvent) and needs no event.

Parameters: ``c`` [N.m/rad] (>= 1e-60, MSL's Modelica.Constants.small), ``d`` [N.m.s/rad] (>= 0), ``b`` [rad]
(total backlash, >= 0), ``phi_rel0`` [rad] (unstretched spring angle). MSL's ``phi_nominal`` (a nominal value
for the relative states a Modelica tool selects) has no use here: the bodies carry the states. MSL's optional
heat port is the output ``lossPower`` [W] (its ``heatPort.Q_flow = −lossPower``). Tangents are analytic
(components/native/elasto_backlash.c, the law).
"""
from __future__ import annotations

from .base import Output, Param
from .connector import ROTATIONAL, RotationalConnector
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
from .ports import indicator
from .spring_damper import rotational_note

#: MSL's minimum backlash: |b| at most this is none
B_EPS = 1e-10
#: MSL's Modelica.Constants.small, the least spring constant c
SMALL = 1e-60

PARAMETERS = (
    Param("c", 1.0e5, "N.m/rad", "Spring constant (c > 0 required)", min=SMALL),
    Param("d", 0.0, "N.m.s/rad", "Damping constant", min=0.0),
    Param("b", 0.0, "rad", "Total backlash", min=0.0),
    Param("phi_rel0", 0.0, "rad", "Unstretched spring angle"),
)
MAPPING = (("c", "c"), ("d", "d"), ("b", "b"), ("phi_rel0", "phi_rel0"))
LOSS_POWER = Output("lossPower", "W", "Power dissipated by the damper (replaces the heat port: heatPort.Q_flow = "
                    "-lossPower)", ROTATIONAL.flange_inputs)
ANGLES = (ROTATIONAL.flange_inputs[0], ROTATIONAL.flange_inputs[2])
CONTACT_INDICATORS = (
    Output(indicator("upper"), "rad", "Event indicator phi_rel - phi_rel0 - b/2: > 0 exactly in upper contact "
           "(0 without backlash)", ANGLES),
    Output(indicator("lower"), "rad", "Event indicator -b/2 - (phi_rel - phi_rel0): > 0 exactly in lower contact "
           "(0 without backlash)", ANGLES),
)


class ElastoBacklash(NativeComponent, RotationalConnector):
    description = "Modelica ElastoBacklash: backlash in series with a spring and damper that never pulls"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.ElastoBacklash"
    example_parameters = {"c": 2.0e4, "d": 50.0, "b": 0.7853981633974483, "phi_rel0": 0.1}
    parameters = PARAMETERS
    force_description = "Torque tau between the flanges (positive = tension; never pulls)"
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Rotational.Components.ElastoBacklash", MAPPING, (),
                                   rotational_note("the damper torque clamped without an event")),)
    law_outputs = (LOSS_POWER,)
    indicator_outputs = CONTACT_INDICATORS


class ElastoBacklash2(NativeComponent, RotationalConnector):
    description = "Modelica ElastoBacklash2: backlash in series with a spring and damper, the torque jumping at contact"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.ElastoBacklash2"
    example_parameters = ElastoBacklash.example_parameters
    parameters = PARAMETERS
    force_description = "Torque tau between the flanges (positive = tension; 0 where tau_c + tau_d would pull)"
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Rotational.Components.ElastoBacklash2", MAPPING, (),
                                   rotational_note("the torque jumping at the start of a contact, an event")),)
    law_outputs = (LOSS_POWER,)
    indicator_outputs = CONTACT_INDICATORS + (
        Output(indicator("transmitting"), "N.m", "Event indicator tau_c + tau_d (tau_c = 0 in the gap): > 0 in upper "
               "and < 0 in lower contact exactly while the contact transmits torque", ROTATIONAL.flange_inputs),
    )
