"""The accuracy study of mechfmu/validation/event_references.py (the numbers its docstrings quote): each
reference against itself at tighter tolerances, another integrator, an independent transcription and
the Modelica Association's event times.

    python3 benchmarks/event_references_accuracy.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mechfmu.validation.event_references import (  # noqa: E402
    ELASTOGAP,
    ball_drop_contact_changes,
    ball_drop_contact_onset,
    ball_drop_onset_1dof,
    ball_drop_positions,
    elastogap_contact_changes,
    free_fall_onset,
    monolithic_example,
)
from mechfmu.validation.msl import event_times  # noqa: E402


def main() -> None:

    print("elastogap contact changes (s):")
    base = [t for t, _ in elastogap_contact_changes()]
    for label, kw in (("rtol 1e-13", dict(rtol=1e-13, atol=1e-16)), ("rtol 1e-10", dict(rtol=1e-10, atol=1e-13)),
                      ("Radau rtol 1e-12", dict(method="Radau"))):
        other = [t for t, _ in elastogap_contact_changes(**kw)]
        print(f"  vs {label:18s} max |diff| {np.max(np.abs(np.subtract(base, other))):.2e}")
    mono = monolithic_example(np.linspace(0, 5, 1001))["events"]
    print(f"  vs monolithic_example   max |diff| {np.max(np.abs(base - mono)):.2e}")
    ma = event_times(ELASTOGAP / "reference" / "ElastoGap.csv")
    print(f"  vs MA reference (DASSL) max |diff| {np.max(np.abs(base - ma)):.2e}")
    print("  instants", [f"{t:.12f}" for t in base])
    modes = elastogap_contact_changes(with_modes=True)
    print(f"  events incl. clamp switches: {len(modes)}")

    print("ball_drop contact changes (s):")
    onsets = {acc: ball_drop_contact_changes(accuracy=acc) for acc in (1e-9, 1e-10, 1e-11, 1e-12)}
    for acc, ts in onsets.items():
        print(f"  accuracy {acc:g}: {[f'{t:.12f}' for t in ts]}")
    ref = onsets[1e-10]
    for acc in (1e-9, 1e-11, 1e-12):
        n = min(len(ref), len(onsets[acc]))
        worst = np.max(np.abs(np.subtract(ref[:n], onsets[acc][:n])))
        print(f"  1e-10 vs {acc:g}: onset {abs(ref[0] - onsets[acc][0]):.1e}, all {worst:.1e}"
              f" ({len(ref)} vs {len(onsets[acc])} crossings)")
    coarse = ball_drop_contact_changes(accuracy=1e-10, fine=1e-6)
    print(f"  fine grid 1e-6 vs 1e-7: {np.max(np.abs(np.subtract(coarse, ref))):.1e}")
    one = ball_drop_onset_1dof()
    print(f"  1-dof scipy onset {one:.12f}: vs OpenSim {abs(one - ref[0]):.1e}; "
          f"rtol 1e-11 vs 1e-13 {abs(ball_drop_onset_1dof(rtol=1e-11) - one):.1e}")
    print(f"  ball_drop_contact_onset() {ball_drop_contact_onset():.12f}")
    free = free_fall_onset(0.4, 9.80665)
    print(f"  free fall would touch at {free:.12f}: {ref[0] - free:.2e} s earlier (the pre-contact force)")
    times = np.linspace(0.0, 1.0, 10001)
    a, b = ball_drop_positions(times, accuracy=1e-10), ball_drop_positions(times, accuracy=1e-12)
    print("ball_drop positions over 1 s: accuracy 1e-10 vs 1e-12 max |diff| "
          f"{np.max(np.linalg.norm(a - b, axis=1)):.1e} m")
    c = ball_drop_positions(np.linspace(0.0, 1.0, 1001), accuracy=1e-10)
    print("  the same times reached on a 1e-3 vs 1e-4 output grid: "
          f"{np.max(np.linalg.norm(a[::10] - c, axis=1)):.1e} m")


if __name__ == "__main__":
    main()
