"""CoordinateSpringDamper: Exudyn ObjectConnectorCoordinateSpringDamper (seed 003, REFERENCES §1.2).

Marker m0 = ``flange_a``, marker m1 = ``flange_b``.

    s_rel = flange_b.s − flange_a.s                       (Exudyn Displacement, Δq)
    v_rel = flange_b.v − flange_a.v                       (Exudyn Velocity, Δv)
    f     = stiffness·(s_rel − offset) + damping·v_rel    (Exudyn Force, f_SD; tension positive)
    f     = UF(t, itemNumber, u, v, k, d, offset)         if springForceUserFunction is set (replaces the law)
    f     = 0                                             if activeConnector is false
    flange_b.f = +f,  flange_a.f = −f                     (Modelica cut forces; Exudyn applies +f on m0, −f on m1)

Parameters: ``stiffness`` [N/m], ``damping`` [N.s/m], ``offset`` [m], ``activeConnector``,
``springForceUserFunction`` (expression; empty = none), ``itemNumber`` (the value passed as
``itemNumber`` to the user function). User-function names: ``t`` [s], ``itemNumber``,
``u`` or ``displacement`` (= s_rel), ``v`` or ``velocity`` (= v_rel), ``k`` or ``stiffness``,
``d`` or ``damping``, ``offset``; example ``0.1*k*u + k*u**3 + v*d``. ``t`` is the component's
current time (the communication point at which the force is read).
Invariant: flange_a.f + flange_b.f = 0 (the element conserves momentum).
"""
from __future__ import annotations

from .base import Component, Input, Output, Param
from .expressions import Expression, ExpressionError

FLANGE_INPUTS = ("flange_a.s", "flange_a.v", "flange_b.s", "flange_b.v")
USER_FUNCTION_ARGUMENTS = ("t", "itemNumber", "u", "displacement", "v", "velocity",
                           "k", "stiffness", "d", "damping", "offset")


def spring_damper_force(s_rel: float, v_rel: float, stiffness: float, damping: float,
                        offset: float) -> float:
    """Linear spring-damper force f_SD [N] (tension positive)."""
    return stiffness * (s_rel - offset) + damping * v_rel


#: the flange inputs of every 1D connector (Exudyn marker m0 = flange_a, m1 = flange_b)
CONNECTOR_INPUTS = (
    Input("flange_a.s", 0.0, "m", "Absolute position of flange_a (marker m0 coordinate)"),
    Input("flange_a.v", 0.0, "m/s", "Absolute velocity of flange_a"),
    Input("flange_b.s", 0.0, "m", "Absolute position of flange_b (marker m1 coordinate)"),
    Input("flange_b.v", 0.0, "m/s", "Absolute velocity of flange_b"),
)


class UserFunctionConnector(Component):
    """A connector whose force law a ``springForceUserFunction`` expression can replace; the names
    it may use are ``user_function_names``."""

    user_function_names: tuple[str, ...] = ()
    _parsed: tuple[str, Expression | None] = ("", None)

    def validate(self) -> None:
        self.user_function()

    def user_function(self) -> Expression | None:
        """The parsed springForceUserFunction (parsed once per text), or None if empty."""
        text = self.values["springForceUserFunction"]
        if text != self._parsed[0]:
            try:
                self._parsed = (text, Expression(text, self.user_function_names) if text.strip() else None)
            except ExpressionError as exc:
                raise self.error("springForceUserFunction", text, f"is invalid: {exc}") from None
        return self._parsed[1]

    def call_user_function(self, **arguments: float) -> float:
        try:
            return self.user_function()(**arguments)
        except ExpressionError as exc:
            raise self.error("springForceUserFunction", self.values["springForceUserFunction"], str(exc)) from None


class CoordinateSpringDamper(UserFunctionConnector):
    description = "Exudyn CoordinateSpringDamper: linear (or user-defined) spring-damper between two coordinates"
    parameters = (
        Param("stiffness", 0.0, "N/m", "Spring stiffness k; acts against the relative coordinate"),
        Param("damping", 0.0, "N.s/m", "Damping d; acts against the relative velocity"),
        Param("offset", 0.0, "m", "Offset l_off between the two coordinates (reference length of the spring)"),
        Param("activeConnector", True, type="Boolean", description="If false, the connector force is zero"),
        Param("springForceUserFunction", "", type="String",
              description="Expression replacing the force law, in t, itemNumber, u, v, k, d, offset; empty = none"),
        Param("itemNumber", 0, type="Integer", description="Item number passed to the user function"),
    )
    inputs = CONNECTOR_INPUTS
    outputs = (
        Output("s_rel", "m", "Relative displacement flange_b.s − flange_a.s", ("flange_a.s", "flange_b.s")),
        Output("v_rel", "m/s", "Relative velocity flange_b.v − flange_a.v", ("flange_a.v", "flange_b.v")),
        Output("f", "N", "Connector force f_SD (positive = tension)", FLANGE_INPUTS),
        Output("flange_a.f", "N", "Cut force at flange_a (= −f)", FLANGE_INPUTS),
        Output("flange_b.f", "N", "Cut force at flange_b (= +f)", FLANGE_INPUTS),
    )

    user_function_names = USER_FUNCTION_ARGUMENTS

    def force(self, s_rel: float, v_rel: float) -> float:
        vals = self.values
        if not vals["activeConnector"]:
            return 0.0
        k, d, offset = vals["stiffness"], vals["damping"], vals["offset"]
        if self.user_function() is None:
            return spring_damper_force(s_rel, v_rel, k, d, offset)
        return self.call_user_function(t=self.time, itemNumber=vals["itemNumber"], u=s_rel, displacement=s_rel,
                                       v=v_rel, velocity=v_rel, k=k, stiffness=k, d=d, damping=d, offset=offset)

    def compute_outputs(self) -> dict[str, float]:
        vals = self.values
        s_rel = vals["flange_b.s"] - vals["flange_a.s"]
        v_rel = vals["flange_b.v"] - vals["flange_a.v"]
        f = self.force(s_rel, v_rel)
        return {"s_rel": s_rel, "v_rel": v_rel, "f": f, "flange_a.f": -f, "flange_b.f": f}
