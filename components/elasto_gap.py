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
``indicator.damperLimit = |f_c| − |d·v_rel|`` [N] (0 out of contact) negative exactly while the damper
is clamped: between these switches the law is smooth (for n = 1 linear, which linear-implicit coupling
integrates exactly).
Tangents (components/connector.py) are analytic: in contact ∂f_c/∂s_rel = f_ref·n·|ratio|^(n−1)/s_ref,
the damper adds ∂f/∂v_rel = d while unclamped, or ∓∂f_c/∂s_rel while clamped at ±f_c.
"""
from __future__ import annotations

from .base import Output, Param
from .connector import FLANGE_INPUT_NAMES, Connector
from .ports import indicator

#: the f_ref value that means "f_ref = c·s_ref" (MSL's default binding)
F_REF_FROM_C = -1.0


def elasto_gap_force(s_rel: float, v_rel: float, d: float, s_rel0: float, n: float, f_ref: float,
                     s_ref: float) -> tuple[float, float, float]:
    """(f, f_c, f_d) [N] of MSL's ElastoGap (f_ref already resolved)."""
    if not s_rel < s_rel0:
        return 0.0, 0.0, 0.0
    f_c = -f_ref * abs((s_rel - s_rel0) / s_ref) ** n
    f_d = min(max(d * v_rel, f_c), -f_c)
    return f_c + f_d, f_c, f_d


def elasto_gap_derivatives(s_rel: float, v_rel: float, d: float, s_rel0: float, n: float, f_ref: float,
                           s_ref: float) -> tuple[float, float]:
    """(∂f/∂s_rel, ∂f/∂v_rel) of ``elasto_gap_force`` (one-sided where the law has a kink)."""
    if not s_rel < s_rel0:
        return 0.0, 0.0
    ratio = abs((s_rel - s_rel0) / s_ref)
    f_c = -f_ref * ratio ** n
    df_c = f_ref * n * ratio ** (n - 1) / s_ref
    f_d2 = d * v_rel
    if f_d2 < f_c:
        return df_c + df_c, 0.0
    if f_d2 > -f_c:
        return 0.0, 0.0
    return df_c, d


class ElastoGap(Connector):
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
    law_outputs = (
        Output("contact", "1", "1 while in contact (s_rel < s_rel0), else 0", ("flange_a.s", "flange_b.s")),
        Output("lossPower", "W", "Power dissipated by the damper f_d*v_rel (replaces the heat port)",
               FLANGE_INPUT_NAMES),
    )

    indicator_outputs = (
        Output(indicator("gap"), "m", "Event indicator s_rel - s_rel0: < 0 exactly in contact",
               ("flange_a.s", "flange_b.s")),
        Output(indicator("damperLimit"), "N", "Event indicator |f_c| - |d*v_rel| in contact (0 out of it): < 0 "
               "exactly while the damper force is clamped to |f_c|", FLANGE_INPUT_NAMES),
    )

    def validate(self) -> None:
        f_ref = self.values["f_ref"]
        if f_ref < 0 and f_ref != F_REF_FROM_C:
            raise self.error("f_ref", f_ref, f"is out of range: must be >= 0 N, or {F_REF_FROM_C:g} for c*s_ref")

    def law(self) -> tuple[float, float, float, float, float]:
        """(d, s_rel0, n, f_ref, s_ref) with f_ref resolved."""
        vals = self.values
        f_ref = vals["c"] * vals["s_ref"] if vals["f_ref"] == F_REF_FROM_C else vals["f_ref"]
        return vals["d"], vals["s_rel0"], vals["n"], f_ref, vals["s_ref"]

    def element_force(self, q: float, v: float) -> float:
        return elasto_gap_force(q, v, *self.law())[0]

    def force_derivatives(self, q: float, v: float) -> tuple[float, float]:
        return elasto_gap_derivatives(q, v, *self.law())

    def law_parts(self, q: float, v: float) -> tuple[float, dict[str, float]]:
        f, _, f_d = elasto_gap_force(q, v, *self.law())
        return f, {"contact": 1.0 if q < self.values["s_rel0"] else 0.0, "lossPower": f_d * v}

    def indicators(self, q: float, v: float) -> dict[str, float]:
        law = self.law()
        d, s_rel0 = law[0], law[1]
        _, f_c, _ = elasto_gap_force(q, v, *law)
        limit = abs(f_c) - abs(d * v) if q < s_rel0 else 0.0
        return {indicator("gap"): q - s_rel0, indicator("damperLimit"): limit}
