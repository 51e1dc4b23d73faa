"""Result plots show forces and switching states as well as positions: ``mechfmu draw --plot`` gives a panel of the
connectors' forces in N and one of the contact states under the positions, ``--plot-quantities`` chooses among them,
and a state appears only where the system's parameters let it switch."""
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from mechfmu.components import COMPONENTS

from mechfmu.cli.main import main
from mechfmu.drawing.plot import QUANTITIES, force_columns, plot_quantities, state_columns
from mechfmu.ssp.scenario import ComponentSpec, Scenario

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"
ELASTOGAP = ROOT / "scenarios" / "elastogap"


def ids(root: ET.Element, prefix: str) -> list[str]:
    """The names after ``prefix`` of the SVG groups whose id starts with it (the plot's panels and lines)."""
    return [g.get("id", "").removeprefix(prefix) for g in root.iter(SVG + "g") if g.get("id", "").startswith(prefix)]


def texts(root: ET.Element) -> set[str]:
    return {"".join(t.itertext()).strip() for t in root.iter(SVG + "text")}


def test_an_elastogap_plot_shows_positions_forces_and_contact_states(tmp_path, capsys):
    plot = tmp_path / "elastogap_result.svg"
    assert main(["draw", str(ELASTOGAP), "-o", str(tmp_path / "elastogap.svg"), "--plot", str(plot)]) == 0
    assert "elastoGap1.f" in capsys.readouterr().out  # the plotted columns are reported
    root = ET.parse(plot).getroot()
    # the reference's two units (m, m/s) above the forces in N and the states
    assert ids(root, "panel:") == ["positions", "positions", "forces", "states"]
    assert sorted(ids(root, "forces:")) == ["elastoGap1.f", "elastoGap2.f", "springDamper1.f", "springDamper2.f"]
    assert sorted(ids(root, "states:")) == ["elastoGap1.contact", "elastoGap2.contact"]
    assert len(ids(root, "reference:")) == 4  # the reference still drawn with the positions
    shown = texts(root)
    assert {"force [N]", "state", "time [s]", "relative position [m]", "relative velocity [m/s]"} <= shown
    assert {"free", "contact", "elastoGap1.contact", "elastoGap2.contact", "springDamper1.f", "elastoGap2.f"} <= shown


def test_plot_quantities_choose_the_panels(tmp_path):
    plot = tmp_path / "forces.svg"
    assert main(["draw", str(ELASTOGAP), "-o", str(tmp_path / "d.svg"), "--plot", str(plot),
                 "--plot-quantities", "states,forces"]) == 0
    root = ET.parse(plot).getroot()
    assert ids(root, "panel:") == ["forces", "states"]  # in QUANTITIES' order, whatever the list's
    assert not ids(root, "positions:") and not ids(root, "reference:") and len(ids(root, "forces:")) == 4


def test_bad_plot_quantities_are_refused_before_anything_is_written(tmp_path, capsys):
    for extra in (["--plot", str(tmp_path / "p.svg"), "--plot-quantities", "positions,speeds"],
                  ["--plot", str(tmp_path / "p.svg"), "--plot-quantities", ","],
                  ["--plot-quantities", "forces"]):
        assert main(["draw", str(ELASTOGAP), "-o", str(tmp_path / "d.svg"), *extra]) == 2
        assert "--plot-quantities" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    assert plot_quantities(None) == QUANTITIES == ("positions", "forces", "states")
    assert plot_quantities(" forces , positions ") == ("positions", "forces")


def recorded(scenario: Scenario):
    """A stand-in for a run's result that recorded every output of the scenario's components."""
    columns = [f"{name}.{o.name}" for name, spec in scenario.components.items()
               for o in COMPONENTS[spec.fmu.stem].outputs]

    class Recorded:
        data = np.zeros(2, dtype=[("time", float)] + [(c, float) for c in columns])
    return Recorded()


def system(**components: tuple[str, dict]) -> Scenario:
    return Scenario("s", ROOT, {name: ComponentSpec(name, Path(f"{model}.fmu"), parameters=parameters)
                                for name, (model, parameters) in components.items()}, [])


@pytest.mark.parametrize(("parameters", "states"), [
    ({}, []),  # no friction, no stops: nothing switches
    ({"fDynamicFriction": 5.0, "stickingStiffness": 1e4}, ["frictionMode"]),  # bristles: stick and slip
    ({"fDynamicFriction": 5.0, "frictionProportionalZone": 0.01}, []),  # regularized Stribeck: never sticks
    ({"useLimitStops": True, "limitStopsStiffness": 1e4}, ["limitStopState"]),
    ({"fStaticFrictionOffset": 1.0, "useLimitStops": True, "springForceUserFunction": "k*u"}, []),  # the law replaced
])
def test_a_friction_connector_shows_the_states_its_parameters_let_switch(parameters, states):
    for model in ("CoordinateSpringDamperExt", "RotationalSpringDamperExt"):
        scenario = system(body=("Mass", {}), link=(model, parameters))
        result = recorded(scenario)
        assert [name for name, _ in state_columns(result, scenario)] == [f"link.{s}" for s in states]
        assert force_columns(result, scenario) == ["link.f"]


def test_each_connector_shows_its_force_law_and_a_gap_its_contact():
    scenario = system(wall=("Fixed", {}), gap=("ElastoGap", {}), body=("Mass", {}), rod=("Rod", {}),
                      sphere=("SmoothSphereHalfSpaceForce", {}), spring=("CoordinateSpringDamper", {}),
                      constraint=("CoordinateConstraint", {}))
    result = recorded(scenario)
    assert force_columns(result, scenario) == ["gap.f", "sphere.normalForce", "spring.f", "constraint.f"]
    states = state_columns(result, scenario)
    assert [name for name, _ in states] == ["gap.contact"]
    contact = states[0][1]
    assert contact.words == ("free", "contact") and list(contact.level(np.array([0.0, 1.0, 0.0]))) == [0, 1, 0]
    friction = dict(state_columns(recorded(system(f=("CoordinateSpringDamperExt", {"fDynamicFriction": 1.0}))),
                                  system(f=("CoordinateSpringDamperExt", {"fDynamicFriction": 1.0}))))["f.frictionMode"]
    # frictionMode is 0 while sticking, else the signed slip force (its sign: v_rel's)
    assert [friction.words[k] for k in friction.level(np.array([-6.0, 0.0, 6.0]))] == ["slip v<0", "stick", "slip v>0"]
