"""The monolithic master (ode_rtol 1e-10, ode_atol 1e-12) on the 7 MSL 4.1 Translational examples of
scenarios/msl against independent solutions (mechfmu/validation/msl_solutions.py: the Modelica models' equations
written by hand, solved by matrix exponentials, exact to about 1.6e-12) and against the Modelica Association's
reference results (Dymola's DASSL at tolerance 1e-6), at the reference points that are communication
points (event rows: the last of each time stamp; only StopTime repeats, unchanged), for every compared signal:

- monolithic within ``BOUND`` = 1e-8 of the independent solution. Measured: 6e-16 m, 1.1e-15 m/s
  (Accelerate, SignConvention), 4.7e-12 m, 2.6e-11 m/s (Sensors), 2.6e-11 m, 3.5e-11 m/s (WhyArrows),
  4.3e-12 m, 1.1e-10 m/s (Damper), 3.0e-13 m, 1.4e-11 m/s (Oscillator), 1.9e-11 m, 3.9e-10 m/s
  (InitialConditions' moving chain, |v| up to 20 m/s; its resting chain exactly at rest). The bound is what
  an integrator held to a relative 1e-10 may build up over 1,000 to 5,000 steps on signals of order 1 to 20
  (2e-9 a step at 20 m/s): 25 times the largest measured, 6e3 times the independent solution's error;
- the MA criterion: max |monolithic − MA| ≤ max |MA − independent| + 1e-7. The references carry DASSL's
  error at 1e-6 (3.6e-7 m to 5.3e-4 m/s here; 6.9e-12 m where DASSL is exact, Accelerate and
  SignConvention), so the monolithic may be that far from them, no farther; 1e-7 is 250 times the
  monolithic's largest error and below the references' own error on every signal that DASSL does not
  integrate exactly;
- the independent solution inside the MA tube (csv-compare, 2e-3) at every reference point: it is the
  model the reference solves; and the monolithic result inside it.

Runs take 0.1-2 s, Oscillator 4-17 s and InitialConditions (5 s of springs at 1e3 N/m) 8-18 s; the fast tier
keeps the two quickest (SignConvention, Accelerate)."""
from pathlib import Path

import numpy as np
import pytest
from conftest import slow_but

from mechfmu.master.simulate import simulate
from mechfmu.validation.msl import read_msl_reference, tube_violation
from mechfmu.validation.msl_solutions import SOLUTIONS

ROOT = Path(__file__).resolve().parent.parent
BOUND = 1e-8  # max |monolithic − independent| per compared signal (module docstring)
MA_SLACK = 1e-7  # max |monolithic − MA| may exceed max |MA − independent| by this much


def last_of_each_time(data: np.ndarray) -> np.ndarray:
    """Rows with distinct time stamps: of rows sharing one (an event's left and right limit) the last."""
    return data[np.append(np.diff(data["time"]) != 0, True)]


@pytest.mark.parametrize("name", slow_but(sorted(SOLUTIONS), "SignConvention", "Accelerate"))
def test_monolithic_against_independent_solution_and_ma_reference(name):
    folder = ROOT / "scenarios" / "msl" / name
    reference = read_msl_reference(folder / "reference" / f"{name}.csv")  # event rows collapsed the same way
    compared = [c for c in (folder / "reference" / "comparisonSignals.txt").read_text().split() if c != "time"]
    assert sorted(compared) == sorted(SOLUTIONS[name](np.zeros(1)))  # every compared signal is solved

    result = simulate(folder, "monolithic", local=True, ode_rtol=1e-10, ode_atol=1e-12)
    assert result.ok, result.message
    data = last_of_each_time(result.data)
    ours, theirs = np.isin(data["time"], reference["time"]), np.isin(reference["time"], data["time"])
    assert ours.sum() == theirs.sum() == len(data)  # every communication point is a reference point
    independent = SOLUTIONS[name](reference["time"])  # at every reference point, for the tube

    failures = []
    print(f"\n{name}: max |mono − independent|, |mono − MA|, |MA − independent| at {ours.sum()} points")
    for c in compared:
        mono, ma, exact = data[c][ours], reference[c][theirs], independent[c][theirs]
        mono_exact, mono_ma, ma_exact = (float(np.max(np.abs(x - y))) for x, y in
                                         ((mono, exact), (mono, ma), (ma, exact)))
        tube = tube_violation(reference["time"], reference[c], reference["time"], independent[c])
        print(f"  {c:20s} {mono_exact:9.2e} {mono_ma:9.2e} {ma_exact:9.2e}  tube {tube:.1e}")
        if not mono_exact <= BOUND:
            failures.append(f"{c}: monolithic {mono_exact:.3e} from the independent solution (bound {BOUND:.0e})")
        if not mono_ma <= ma_exact + MA_SLACK:
            failures.append(f"{c}: monolithic {mono_ma:.3e} from MA, MA {ma_exact:.3e} from the independent solution")
        if tube != 0.0:
            failures.append(f"{c}: the independent solution leaves the MA tube by {tube:.3e}")
        if tube_violation(reference["time"], reference[c], data["time"], data[c]) != 0.0:
            failures.append(f"{c}: the monolithic result leaves the MA tube")
    assert not failures, failures
