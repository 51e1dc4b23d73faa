"""Energy audit of the couplings: per power bond, the energy the co-simulation coupling injects.

A power bond is a connector's force output wired to a body together with the body's velocity wired
back to the connector at the same port: ``C.x.f -> B.y.f`` with ``B.y.v -> C.x.v`` (1D flanges,
rotational ``B.y.tau``/``B.y.w`` alike), or ``C.p.force.i -> B.q.i`` with ``B.w.i -> C.p.velocity.i``
(and ``torque``/``angularVelocity``) for 3D contacts. Over a macro step of length h the body applies
the force it holds, f_B (read when it steps; with linear-implicit coupling it moves along the tangents
it holds, to f_B' = f_B + c·Δs + d·Δv + ḟ·h at the end), while the connector's law gives f_C at the
start and at the end of the step (after the exchange). With the body's velocity v at both ends, the
power-bond residual integrated over the step by the trapezoidal rule is the energy the coupling
injected (> 0: created, < 0: removed):

    ΔE = σ·h/2·[(f_C(t) − f_B)·v(t) + (f_C(t+h) − f_B')·v(t+h)]     [J]   (3D: summed over components)

A force wire with a factor or offset (``mechfmu.ssp.connection_maps``) compares the body's force with what the wire
delivers, k·f_C + b: the transformation's own work is the model's, not the coupling's.

σ = +1 for Modelica flanges (the connector outputs its own cut force, the body applies its
negative), −1 for 3D ports (the connector outputs the force on the body). A zero-order hold (Jacobi)
injects ½·Δf·v·h per step (for a linear spring ½·k·v²·h², the energy its explicit coupling is known to
create); the trapezoidal coupling of fixed-point and Newton injects O(h³) per step. The audit adds
ΔE over the accepted steps of a run (``injected``, and the sum of |ΔE|, ECCO's accumulated residual,
Sadjina et al. 2017), and ``error_estimate="energy"`` of the adaptive step uses ΔE per step.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from mechfmu.components.ports import (
    ANGLE,
    ANGULAR_VELOCITY,
    DAMPING_TANGENT,
    FORCE_SUFFIXES,
    POSITION,
    RATE,
    STIFFNESS_TANGENT,
    VELOCITY,
)
from mechfmu.master.slaves import Slave
from mechfmu.ssp.scenario import Connection

#: 3D ports (RigidBody, SmoothSphereHalfSpaceForce): (force marker, the connector's velocity input's, σ)
_VECTOR_KINDS = ((".force.", ".velocity.", -1.0), (".torque.", ".angularVelocity.", -1.0))
#: a body's flange velocity output -> its position output (translational, rotational)
_POSITION_OF = {f".{VELOCITY}": f".{POSITION}", f".{ANGULAR_VELOCITY}": f".{ANGLE}"}


@dataclass
class PowerBond:
    """One bond: the connector's force outputs and velocity inputs, the body's force inputs and
    velocity outputs (component-wise, equal lengths), and the sign σ of the port convention."""
    label: str
    connector: Slave
    body: Slave
    connector_forces: list[str] = field(default_factory=list)
    connector_velocities: list[str] = field(default_factory=list)
    body_forces: list[str] = field(default_factory=list)
    body_velocities: list[str] = field(default_factory=list)
    sign: float = 1.0
    #: per force wire its (factor, offset), None where it passes the force unchanged
    force_maps: list[tuple[float, float] | None] = field(default_factory=list)

    def delivered_forces(self) -> list[float]:
        """The connector's forces as its wires deliver them to the body."""
        forces = self.connector.get(self.connector_forces)
        if not any(self.force_maps):
            return forces
        return [f if m is None else m[0] * f + m[1] for f, m in zip(forces, self.force_maps)]


def _velocity_input(output: str) -> tuple[str, float, str] | None:
    """The connector's velocity input paired with its force output ``output``, the sign σ and the port."""
    for marker, velocity, sign in _VECTOR_KINDS:
        if marker in output:
            return output.replace(marker, velocity, 1), sign, output.split(marker, 1)[0]
    for suffix in FORCE_SUFFIXES:  # a connector's flange: its velocity input is <flange>.v
        flange = output[:-len(suffix)]
        if output.endswith(suffix) and flange:
            return f"{flange}.{VELOCITY}", 1.0, flange
    return None


def power_bonds(connections: list[Connection], slaves: dict[str, Slave]) -> list[PowerBond]:
    """The power bonds among ``connections`` (see the module docstring), in connection order."""
    into = {(c.target, c.target_variable): c for c in connections}
    bonds: dict[tuple[str, str, str], PowerBond] = {}
    for c in connections:
        paired = _velocity_input(c.source_variable)
        if paired is None:
            continue
        velocity_input, sign, port = paired
        back = into.get((c.source, velocity_input))
        if back is None or back.source != c.target:
            continue
        key = (c.source, port, c.target)
        bond = bonds.setdefault(key, PowerBond(f"{c.source}.{port}-{c.target}", slaves[c.source], slaves[c.target],
                                               sign=sign))
        bond.connector_forces.append(c.source_variable)
        bond.connector_velocities.append(velocity_input)
        bond.body_forces.append(c.target_variable)
        bond.body_velocities.append(back.source_variable)
        bond.force_maps.append(None if (c.factor, c.offset) == (1.0, 0.0) else (c.factor, c.offset))
    return list(bonds.values())


def _linearization(bond: PowerBond) -> tuple[list[str], list[str]]:
    """For a 1D bond whose body takes the linear-implicit tangents: the body's inputs (c, d, rate) at
    the flange and its position output there; else ([], [])."""
    force, velocity = bond.body_forces[0], bond.body_velocities[0]
    suffix = next((s for s in _POSITION_OF if velocity.endswith(s)), None)
    if bond.sign < 0 or len(bond.body_forces) != 1 or suffix is None or not force.endswith(FORCE_SUFFIXES):
        return [], []
    flange = force.rsplit(".", 1)[0]
    tangents = [f"{flange}.{STIFFNESS_TANGENT}", f"{flange}.{DAMPING_TANGENT}", force + RATE]
    position = velocity[:-len(suffix)] + _POSITION_OF[suffix]
    if all(n in bond.body.inputs() for n in tangents) and position in bond.body.variables:
        return tangents, [position]
    return [], []


class EnergyAudit:
    """Accumulates every bond's injected energy over the accepted steps of a run (module docstring):
    ``begin()`` at the start of a step, ``held(slave)`` whenever a slave is about to step (the
    system's ``before_step`` hook: a body's held force and tangents), ``end(h)`` after the step and
    its exchange."""

    def __init__(self, bonds: list[PowerBond]):
        self.bonds = bonds
        self.labels = [b.label for b in bonds]
        self.injected = [0.0] * len(bonds)   # Σ ΔE [J], signed
        self.absolute = [0.0] * len(bonds)   # Σ |ΔE| [J], ECCO's accumulated residual
        self.power = [0.0] * len(bonds)      # largest |f·v| at the end of the last step [W] (scale of the flow)
        #: per bond: the body's tangent inputs (c, d, rate) and its position output, where it takes them
        self._tangents, self._positions = map(list, zip(*map(_linearization, bonds))) if bonds else ([], [])
        self._by_body: dict[str, list[int]] = {}
        for i, b in enumerate(bonds):
            self._by_body.setdefault(b.body.name, []).append(i)
        self._start: list[tuple[list[float], list[float], list[float]]] = []
        self._held: list[tuple[list[float], list[float]]] = []

    def begin(self) -> None:
        self._start = [(b.delivered_forces(), b.body.get(b.body_velocities), b.body.get(p))
                       for b, p in zip(self.bonds, self._positions)]
        self._held = [([0.0] * len(b.body_forces), []) for b in self.bonds]

    def held(self, slave: Slave) -> None:
        for i in self._by_body.get(slave.name, ()):
            bond = self.bonds[i]
            self._held[i] = (bond.body.get(bond.body_forces), bond.body.get(self._tangents[i]))

    def end(self, h: float) -> list[float]:
        """Add the step's ΔE per bond; returns them [J]."""
        step = []
        for i, bond in enumerate(self.bonds):
            f_start, v_start, s_start = self._start[i]
            f_held, tangents = self._held[i]
            f_end, v_end = bond.delivered_forces(), bond.body.get(bond.body_velocities)
            f_held_end = list(f_held)
            if tangents:
                c, d, rate = tangents
                s_end = bond.body.get(self._positions[i])
                f_held_end[0] += c * (s_end[0] - s_start[0]) + d * (v_end[0] - v_start[0]) + rate * h
            residual = (sum((a - b) * v for a, b, v in zip(f_start, f_held, v_start))
                        + sum((a - b) * v for a, b, v in zip(f_end, f_held_end, v_end)))
            energy = bond.sign * 0.5 * h * residual
            self.power[i] = max(abs(sum(f * v for f, v in zip(f_end, v_end))),
                                abs(sum(f * v for f, v in zip(f_start, v_start))))
            self.injected[i] += energy
            self.absolute[i] += abs(energy)
            step.append(energy)
        return step

    def snapshot(self) -> tuple[list[float], list[float]]:
        return list(self.injected), list(self.absolute)

    def restore(self, memory: tuple[list[float], list[float]]) -> None:
        self.injected, self.absolute = list(memory[0]), list(memory[1])

    def statistics(self) -> dict[str, dict[str, float]]:
        """Per bond: injected energy [J] (signed) and the accumulated |ΔE| [J]."""
        return {label: {"injected": e, "absolute": a} for label, e, a in zip(self.labels, self.injected, self.absolute)}
