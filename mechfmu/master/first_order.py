"""How far the first-order coupling other tools run is from mechfmu's run of a scenario, estimated with mechfmu's
own masters of the same coupling (``mechfmu export-ssp`` and ``System.export_ssp`` say it;
``mechfmu.ssp.tool_notes.COUPLING``).

OMSimulator's weakly coupled system equals our ordered Jacobi, libcosim, ecos and fmpy (after its first step)
our strict Jacobi (docs/tools.md: to 1e-12 and better). Each is run here over the scenario's experiment
(within ``MAX_STEPS`` and ``MAX_COMPONENT_STEPS``) beside the default master (auto, the accurate run), and the
largest difference of a body's position (an output in m, or in rad for a scenario without one, that depends on
no input) is the estimate.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import component_class, load_scenario

#: the longest run an estimate takes, in steps and in component steps (steps times components); a longer
#: scenario is estimated over its first steps
MAX_STEPS, MAX_COMPONENT_STEPS = 20_000, 2_000_000
#: the first-order couplings of other tools, as mechfmu's masters (algorithm, exchange)
FIRST_ORDER = {"jacobi, exchange=ordered": ("jacobi", "ordered"), "jacobi, exchange=strict": ("jacobi", "strict")}


def _positions(path: str | Path) -> tuple[list[str], str]:
    """The body positions of the scenario (``component.output``) and their unit: in m, else in rad."""
    scenario = load_scenario(path)
    found: dict[str, list[str]] = {"m": [], "rad": []}
    for name, spec in scenario.components.items():
        try:
            cls = component_class(spec.fmu)
        except ValueError:
            continue
        for output in cls.outputs:
            if not output.depends_on and output.unit in found:
                found[output.unit].append(f"{name}.{output.name}")
    unit = "m" if found["m"] else "rad"
    return found[unit], unit


def first_order_deviations(path: str | Path) -> tuple[dict[str, float], str, float]:
    """For each of ``FIRST_ORDER``'s masters, the largest difference of a body position from the scenario's own
    master's run over the experiment (at most ``MAX_STEPS`` steps, ``MAX_COMPONENT_STEPS`` component steps), in the
    positions' unit; that unit; the time
    it covers [s]. Empty if the scenario has no body position or a run fails (its message is the run's)."""
    scenario = load_scenario(path)
    columns, unit = _positions(path)
    steps = round((scenario.stop_time - scenario.start_time) / scenario.step_size)
    steps = max(1, min(steps, MAX_STEPS, MAX_COMPONENT_STEPS // max(1, len(scenario.components))))
    stop = scenario.start_time + steps * scenario.step_size
    if not columns:
        return {}, unit, stop - scenario.start_time
    try:
        reference = simulate(path, "auto", stop=stop, estimate_error=False, output_variables=columns)
    except ValueError:  # the default master cannot run it (said by the run itself): no estimate
        return {}, unit, stop - scenario.start_time
    if not reference.ok or reference.data is None:
        return {}, unit, stop - scenario.start_time
    deviations = {}
    for label, (algorithm, exchange) in FIRST_ORDER.items():
        try:
            run = simulate(path, algorithm, stop=stop, exchange=exchange, estimate_error=False,
                           output_variables=columns)
        except ValueError:  # a constraint Jacobi cannot solve: no estimate for that coupling
            continue
        if not run.ok or run.data is None:
            continue
        times = run.data["time"]
        deviations[label] = max(float(np.max(np.abs(run.data[c] - np.interp(times, reference.data["time"],
                                                                               reference.data[c]))))
                                for c in columns)
    return deviations, unit, stop - scenario.start_time
