"""Flanges with many connections. A body has PORTS force ports per flange (``flange_a``,
``flange_a[2]``, ...; components/mass.py), each with its tangents, and ``write_scenario`` wires Modelica
connects ``"A.x <-> B.y"`` by flange name, each element into the next free port. Expectations: forces on
one flange add exactly as the old wiring added them; two identical contacts act as one with doubled
stiffness and damping, bit for bit (doubling is exact in floating point); a connect writes the same wires
as the hand-written ones."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from mechfmu.components.mass import PORTS, Mass

from mechfmu.master.simulate import simulate
from mechfmu.ssp import flange_connections, write_scenario
from mechfmu.ssp.scenario import NS

GAP = {"c": 1000.0, "d": 5.0, "s_rel0": 0.1}


def spool(tmp_path, name, gaps, algorithm="jacobi", connect=True, trick=False):
    """A spool (1 kg, L = 0.2 m, 1 m/s) between walls, touched by ElastoGaps: (gap, side, wall position,
    parameters); on side "a" the gap's flange_b is on the spool's flange_a, on side "b" its flange_a on
    the spool's flange_b. ``trick``: the second gap of side a wired as before flanges had ports, its
    other flange's cut force (flange_a.f = -f) into the spool's f_drive."""
    components = [("spool", "Mass", {"m": 1.0, "L": 0.2, "v_start": 1.0})]
    wires = []
    for k, (gap, side, wall, parameters) in enumerate(gaps):
        components += [(f"wall{k}", "Fixed", {"s0": wall}), (gap, "ElastoGap", parameters)]
        housing, body = ("flange_a", "flange_b") if side == "a" else ("flange_b", "flange_a")
        wires += [f"wall{k}.flange.{q} -> {gap}.{housing}.{q}" for q in "sv"]
        if trick and k == 1:
            wires += [f"spool.flange_a.{q} -> {gap}.flange_b.{q}" for q in "sv"]
            wires.append(f"{gap}.flange_a.f -> spool.f_drive")
        elif connect:
            wires.append(f"spool.flange_{side} <-> {gap}.{body}")
        else:
            port = "flange_a" if side == "a" else "flange_b"
            wires += [f"spool.{port}.{q} -> {gap}.{body}.{q}" for q in "sv"] + [f"{gap}.{body}.f -> spool.{port}.f"]
    return write_scenario(tmp_path / name, name, components, wires, 1.0, 1e-3, algorithm=algorithm).parent


def run(folder, local=True):
    result = simulate(folder, local=local)
    assert result.ok, result.message
    return result.data


def acceleration(loads: dict[str, float]) -> float:
    mass = Mass("mass")
    mass.set("m", 2.0)
    mass.initialize(0.0)
    mass.set_many(list(loads), list(loads.values()))
    return mass.get("a")


def test_forces_at_a_flange_add_in_port_order():
    assert acceleration({"f_drive": 1.0, "flange_a.f": 3.0, "flange_b[3].f": -5.0}) == (1.0 - 3.0 - (-5.0)) / 2.0
    assert acceleration({"f_drive": 0.7, "flange_a[2].f": 0.1, "flange_b.f": 0.2}) == (0.7 - 0.1 - 0.2) / 2.0
    assert acceleration({"f_drive": 0.7, "flange_a.f": 0.1, "flange_a[4].f": 0.2}) == (0.7 - 0.1 - 0.2) / 2.0
    assert [i.name for i in Mass.inputs if i.name.startswith("flange_a") and i.name.endswith(".f")] == [
        "flange_a.f", *(f"flange_a[{k}].f" for k in range(2, PORTS + 1))]


def test_a_second_contact_on_a_flange_equals_the_sign_trick_bit_for_bit(tmp_path):
    """Three contacts, two on flange_a: through ports (connects) and as before, the second one's other
    flange force into f_drive (Jacobi: the trick carries no tangents). -fa - f2 and -f2 - fa are the
    same float: the runs are equal bit for bit, in-process and through the FMUs."""
    gaps = [("gap1", "a", -0.45, GAP), ("gap2", "a", -0.4, {**GAP, "c": 2000.0}), ("gap3", "b", 0.5, GAP)]
    ports = run(spool(tmp_path, "ports", gaps))
    trick = run(spool(tmp_path, "trick", gaps, trick=True))
    assert np.array_equal(ports["spool.s"], trick["spool.s"]) and np.array_equal(ports["spool.v"], trick["spool.v"])
    assert np.ptp(ports["spool.v"]) > 1.0  # it bounces
    assert np.array_equal(run(spool(tmp_path, "ports_fmu", gaps), local=False)["spool.s"], ports["spool.s"])


@pytest.mark.parametrize("algorithm", ["jacobi", "linear-implicit"])
def test_four_contacts_act_as_two_doubled_ones_bit_for_bit(tmp_path, algorithm):
    """Two identical contacts on each flange (ports flange_x and flange_x[2], tangents per port under
    linear-implicit) against one contact per flange with doubled c and d: f + f = 2f and (2c)·x = 2(c·x)
    exactly, so the spool moves identically, bit for bit."""
    double = {**GAP, "c": 2 * GAP["c"], "d": 2 * GAP["d"]}
    four = run(spool(tmp_path, "four", [("gap1", "a", -0.45, GAP), ("gap2", "a", -0.45, GAP),
                                        ("gap3", "b", 0.5, GAP), ("gap4", "b", 0.5, GAP)], algorithm))
    two = run(spool(tmp_path, "two", [("gap1", "a", -0.45, double), ("gap3", "b", 0.5, double)], algorithm,
                    connect=False))
    assert np.array_equal(four["spool.s"], two["spool.s"]) and np.array_equal(four["spool.v"], two["spool.v"])
    assert np.ptp(four["spool.v"]) > 1.0


def connections(path):
    root = ET.parse(path).getroot()
    return [(c.get("startElement"), c.get("startConnector"), c.get("endElement"), c.get("endConnector"))
            for c in root.iter(f"{{{NS['ssd']}}}Connection")]


def test_connects_write_the_wires_and_refuse_what_cannot_be_wired(tmp_path):
    components = [("mass", "Mass", {}), ("spring", "CoordinateSpringDamper", {}), ("wall", "Fixed", {}),
                  ("force", "Force", {}), ("rod", "Rod", {"L": 0.1})]
    wires = flange_connections(components, ["mass.flange_b <-> spring.flange_a", "wall.flange <-> spring.flange_b",
                                            "force.flange <-> mass.flange_b", "mass.flange_a <-> rod.flange_a",
                                            "sine.y -> force.f"])
    assert wires == ["mass.flange_b.s -> spring.flange_a.s", "mass.flange_b.v -> spring.flange_a.v",
                     "spring.flange_a.f -> mass.flange_b.f",
                     "wall.flange.s -> spring.flange_b.s", "wall.flange.v -> spring.flange_b.v",
                     "force.flange.f -> mass.flange_b[2].f",
                     "mass.flange_a.s -> rod.flange_a.s", "mass.flange_a.v -> rod.flange_a.v",
                     "rod.flange_a.f -> mass.flange_a.f",
                     "sine.y -> force.f"]
    full = [("mass", "Mass", {})] + [(f"s{k}", "CoordinateSpringDamper", {}) for k in range(PORTS + 1)]
    with pytest.raises(ValueError, match=r"mass.flange_a takes no \(more\) force: 4 port\(s\), all wired"):
        flange_connections(full, [f"mass.flange_a <-> s{k}.flange_b" for k in range(PORTS + 1)])
    with pytest.raises(ValueError, match="exactly one side must output the flange's position \\(neither does\\)"):
        flange_connections(full, ["s0.flange_b <-> s1.flange_a"])
    with pytest.raises(ValueError, match="the system has no component 'nobody'; its components: mass, s0"):
        flange_connections(full, ["nobody.flange_a <-> s1.flange_a"])
    with pytest.raises(ValueError, match="s1 has no flange 'flange_c' .did you mean 'flange_.'..; its flanges: flange_a, flange_b$"):
        flange_connections(full, ["mass.flange_a <-> s1.flange_c"])
    with pytest.raises(ValueError, match="write COMPONENT.FLANGE <-> COMPONENT.FLANGE"):
        flange_connections(full, ["mass <-> s1.flange_a"])
    path = write_scenario(tmp_path / "c", "c", components[:3], ["mass.flange_b <-> spring.flange_a",
                                                                 "wall.flange <-> spring.flange_b"], 1.0, 1e-3)
    assert ("spring", "flange_a.f", "mass", "flange_b.f") in connections(path)
