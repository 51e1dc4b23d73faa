"""ElastoGap: Modelica.Mechanics.Translational.Components.ElastoGap (MSL 4.1).

A spring-damper that acts only in contact (compression) and never pulls:

    s_rel = flange_b.s − flange_a.s,   v_rel = flange_b.v − flange_a.v
    contact = s_rel < s_rel0
    f_c = −f_ref·|(s_rel − s_rel0)/s_ref|^n          if contact, else 0   (spring, pushing: <= 0)
    f_d = min(max(d·v_rel, f_c), −f_c)               if contact, else 0   (damper, clamped |f_d| <= |f_c|)
    f = f_c + f_d                                                          (tension positive, so f <= 0)
    lossPower = f_d·v_rel >= 0
    flange_b.f = +f,  flange_a.f = −f

Parameters: ``c`` [N/m] (>= 0; with n != 1 effectively N/m^n), ``d`` [N.s/m] (>= 0), ``s_rel0`` [m]
(unstretched length), ``n`` [1] (>= 1; Hertz contact of spheres 1.5, plates 1), MSL 4.1's ``f_ref`` [N]
and ``s_ref`` [m] (> 0). MSL's default binding ``f_ref = c·s_ref`` cannot be an FMI start value (it
would not follow a changed c), so ``f_ref = −1`` (the default) means "c·s_ref": with ``s_ref = 1``
the law is MSL 4.0's ``f_c = −c·|s_rel − s_rel0|^n``. Any f_ref >= 0 is used as given (c then only
enters through that default).

The force is continuous at s_rel = s_rel0 for every v_rel (f_d is clamped by f_c, which is 0 there)
and never pulls. MSL's optional heat port is replaced by the output ``lossPower`` [W] (the heat flow
``heatPort.Q_flow = −lossPower`` a thermal model would receive). ``contact`` is output as 1/0; the event
indicator ``indicator.gap = s_rel − s_rel0`` [m] is negative exactly in contact, and
``indicator.damperLimit = |f_c| − |d·v_rel|`` [N] (0 out of contact and for d = 0, which has no clamp)
negative exactly while the damper is clamped: between these switches the law is smooth (for n = 1 linear,
which linear-implicit coupling integrates exactly).
Tangents are analytic (components/native/elasto_gap.c, the law): in contact ∂f_c/∂s_rel = f_ref·n·|ratio|^(n−1)/s_ref,
the damper adds ∂f/∂v_rel = d while unclamped, or ∓∂f_c/∂s_rel while clamped at ±f_c.
"""
from __future__ import annotations

from .base import Output, Param
from .connector import FLANGE_INPUT_NAMES, Connector
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
from .ports import indicator

#: the f_ref value that means "f_ref = c·s_ref" (MSL's default binding)
F_REF_FROM_C = -1.0


class ElastoGap(NativeComponent, Connector):
    description = "Modelica ElastoGap: spring-damper in contact only, damper clamped so it never pulls"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.ElastoGap"
    example_parameters = {"c": 1000.0, "d": 30.0, "s_rel0": 0.5, "n": 1.5}
    parameters = (
        Param("c", 1.0, "N/m", "Spring constant (N/m^n for n != 1)", min=0.0),
        Param("d", 1.0, "N.s/m", "Damping constant", min=0.0),
        Param("s_rel0", 0.0, "m", "Unstretched spring length; contact while s_rel < s_rel0"),
        Param("n", 1.0, "1", "Exponent of the spring force f_c = -f_ref*|(s_rel-s_rel0)/s_ref|^n", min=1.0),
        Param("f_ref", F_REF_FROM_C, "N", "Reference spring force at s_ref; -1 (default) = c*s_ref (MSL default)"),
        Param("s_ref", 1.0, "m", "Reference relative compression at which f = f_ref", min=0.0, min_exclusive=True),
    )
    force_description = "Contact force (tension positive, so <= 0)"
    modelica = (ModelicaEquivalent(
        "Modelica.Mechanics.Translational.Components.ElastoGap",
        (("c", "c"), ("d", "d"), ("s_rel0", "s_rel0"), ("n", "n"), ("f_ref", "f_ref"), ("s_ref", "s_ref")), (),
        "the same law, names and signs; MSL's default binding f_ref = c*s_ref is f_ref = -1 here, MSL 4.0's law "
        "(no f_ref, s_ref) is s_ref = 1; the heat port's heatPort.Q_flow is -lossPower"),)
    law_outputs = (
        Output("contact", "1", "1 while in contact (s_rel < s_rel0), else 0", ("flange_a.s", "flange_b.s")),
        Output("lossPower", "W", "Power dissipated by the damper f_d*v_rel (replaces the heat port)",
               FLANGE_INPUT_NAMES),
    )

    indicator_outputs = (
        Output(indicator("gap"), "m", "Event indicator s_rel - s_rel0: < 0 exactly in contact",
               ("flange_a.s", "flange_b.s")),
        Output(indicator("damperLimit"), "N", "Event indicator |f_c| - |d*v_rel| in contact (0 out of it, and for "
               "d = 0): < 0 exactly while the damper force is clamped to |f_c|", FLANGE_INPUT_NAMES),
    )
