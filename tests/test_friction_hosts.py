"""A friction element's Model Exchange interface under the two kinds of host it meets (components/native/friction.c),
through the FMU's own C law in-process:

- a master that passes the outputs on between event iterations (mechfmu's: every iteration follows written
  inputs) gets MSL's iteration at one instant, and ``indicator.resume`` stays 1;
- a host that calls ``fmi2NewDiscreteStates`` again with the inputs held (OMSimulator, fmpy) gets the iteration
  stopped where it would read ``sa`` from outputs that do not yet follow the change; once the outputs are passed
  on, ``indicator.resume`` falls through 0 ``RESUME_DELAY`` after the event, where the iteration goes on, with
  MSL's ``sign(w_rel)`` of the instant the transient configuration was entered; and an exact 0 of a speed
  indicator reads as the smallest negative normal number (FMI's domain z <= 0, which CVODE would take as no sign).

The clutch: mu_pos 0.5, peak 1.1, fn_max 10, engaged: tau0 = 5 N.m, tau0_max = 5.5 N.m. It slides forward, and
its relative speed has just crossed 0 with a_rel = −2 rad/s2: MSL's first iteration gives stuck (not locked, the
transient configuration); with the transient's torque passed on (its backward branch, +5 N.m on flange_b) the
bodies' relative acceleration becomes +3 rad/s2, and MSL's second iteration locks (sa = 3 − 5.5 is within
±tau0_max).
"""
from __future__ import annotations

import math
import sys

import pytest
from mechfmu.components import Clutch

#: components/native/friction.c RESUME_DELAY [s]
RESUME_DELAY = 1e-9
DBL_MIN = sys.float_info.min


def sliding_clutch():
    """A clutch through its initial event mode (sliding forward, w_rel = 1), then at t = 1 s with w_rel just below 0
    and a_rel = −2 rad/s2: (component, its indicators' names)."""
    c = Clutch("clutch")
    for name, value in (("mu_pos", "0, 0.5"), ("peak", 1.1), ("fn_max", 10.0)):
        c.set(name, value)
    inputs = {"flange_a.phi": 0.0, "flange_a.w": 0.0, "flange_b.phi": 0.0, "flange_b.w": 1.0, "flange_a.a": 0.0,
              "flange_b.a": 0.0, "f_normalized": 1.0, "lambda": 0.0}
    for name, value in inputs.items():
        c.set(name, value)
    c.initialize()
    c.set_time(0.0)
    for _ in range(5):  # mechfmu's way: inputs written before each iteration
        c.set("flange_b.w", 1.0)
        if not c.update_discrete_states():
            break
    assert (c.get("mode"), c.get("startForward")) == (1.0, 0.0)
    c.set_time(1.0)
    c.set("flange_b.w", -1e-12)
    c.set("flange_b.a", -2.0)
    return c, c.indicator_names()


def indicator(c, names, name: str) -> float:
    return c.event_indicators()[names.index(name)]


def test_a_master_that_passes_the_outputs_on_gets_msl_iteration_at_one_instant():
    c, names = sliding_clutch()
    assert c.update_discrete_states()  # Forward -> stuck, not locked (MSL's pre(mode) == Forward)
    assert (c.get("mode"), c.get("locked")) == (0.0, 0.0)
    c.set("flange_b.w", 0.0)  # an exact 0 of the watched speed: such a master reads the 0 itself
    assert indicator(c, names, "indicator.w_rel") == 0.0
    c.set("flange_b.w", -1e-12)
    c.set("flange_b.a", 3.0)  # the transient's torque passed on
    assert c.update_discrete_states()
    assert (c.get("mode"), c.get("locked"), c.get("startForward")) == (0.0, 1.0, 0.0)
    c.set("flange_b.a", 3.0)
    assert not c.update_discrete_states()
    assert indicator(c, names, "indicator.resume") == 1.0
    c.set("lambda", 1.0)
    assert c.get("locked") == 1.0 and c.get("lambda_loop") == 1.0 - 3.0  # lambda - a_rel while locked


def test_a_host_that_holds_the_inputs_resumes_the_iteration_a_nanosecond_later():
    c, names = sliding_clutch()
    assert c.update_discrete_states()
    assert not c.update_discrete_states()  # held: the next iteration would read sa of the sliding accelerations
    assert (c.get("mode"), c.get("locked"), c.get("startBackward")) == (0.0, 0.0, 0.0)
    c.set("flange_b.a", 3.0)  # the host passes the outputs on after the event mode
    assert math.isclose(indicator(c, names, "indicator.resume"), RESUME_DELAY, rel_tol=1e-6)
    c.set_time(1.0 + RESUME_DELAY)
    assert indicator(c, names, "indicator.resume") <= 0.0
    c.set("flange_b.w", 3.0 * RESUME_DELAY)  # w_rel has turned positive meanwhile: sign(w_rel) is still the instant's
    assert c.update_discrete_states()
    assert (c.get("mode"), c.get("locked"), c.get("startForward")) == (0.0, 1.0, 0.0)
    assert not c.update_discrete_states()
    assert indicator(c, names, "indicator.resume") == 1.0


def test_for_a_host_that_holds_the_inputs_an_exact_zero_is_below_zero():
    c, names = sliding_clutch()
    c.update_discrete_states(), c.update_discrete_states()  # the host seen holding the inputs
    assert (c.get("mode"), c.get("locked")) == (0.0, 0.0)  # its speed watched (the transient configuration)
    c.set("flange_b.w", 0.0)
    assert indicator(c, names, "indicator.w_rel") == -DBL_MIN
    c.set("f_normalized", 0.0)
    assert indicator(c, names, "indicator.free") == -DBL_MIN


@pytest.mark.parametrize("locked", [True, False])
def test_lambda_loop_is_the_locked_force_less_the_relative_acceleration(locked):
    c, _ = sliding_clutch()
    c.update_discrete_states()
    c.set("flange_b.a", 3.0 if locked else -20.0)  # -20: sa = -25.5 < -tau0_max, it starts sliding backward
    c.update_discrete_states()
    assert c.get("locked") == float(locked)
    c.set("lambda", 2.5)
    expected = 2.5 - (3.0 if locked else -20.0) if locked else 0.0
    assert c.get("lambda_loop") == expected
    d = c.directional_derivative(["lambda_loop"], ["flange_a.a", "flange_b.a", "lambda"], [0.25, 0.5, 1.0])
    assert d == [(0.25 - 0.5 + 1.0) if locked else 0.0]


def test_the_strongly_coupled_export_closes_each_loop_and_mechfmu_reads_the_archive_as_the_scenario(tmp_path):
    """The strongly coupled archive of MSL's Brake example wires each friction element's lambda_loop to its own
    lambda (what OMSimulator's loop solver needs); mechfmu drops that wire (its master solves the force) and runs the
    archive as the scenario, to rounding (the archive names the monolithic master, the scenario auto, which chooses
    it: 1e-12 of each signal's range). Without --strongly-coupled the export is refused and says to use it."""
    import xml.etree.ElementTree as ET
    import zipfile

    import numpy as np

    from mechfmu.master.simulate import simulate
    from mechfmu.ssp.export import export_ssp
    from mechfmu.ssp.scenario import NS, load_scenario

    folder = "scenarios/msl/Brake"
    with pytest.raises(ValueError, match="export it with --strongly-coupled"):
        export_ssp(folder, tmp_path / "refused.ssp")
    archive = export_ssp(folder, tmp_path / "Brake.ssp", strongly_coupled=True)
    root = ET.fromstring(zipfile.ZipFile(archive).read("SystemStructure.ssd"))
    loops = sorted((c.get("startElement"), c.get("endElement")) for c in root.iterfind(".//ssd:Connection", NS)
                   if (c.get("startConnector"), c.get("endConnector")) == ("lambda_loop", "lambda"))
    assert loops == [("brake", "brake"), ("brake1", "brake1")]
    assert not [c for c in load_scenario(archive).connections if c.target_variable == "lambda"]
    ours, theirs = simulate(folder), simulate(archive)
    assert ours.ok and theirs.ok
    for name in ours.data.dtype.names:
        np.testing.assert_allclose(theirs.data[name], ours.data[name], rtol=0,
                                   atol=1e-12 * (1.0 + np.ptp(ours.data[name])), err_msg=name)
