"""The table of ``benchmarks/side_by_side.py``: printed, and as the section "Beside other tools" of
docs/performance.md, which ``--write-docs`` writes between its markers (the rest of the page as it was)."""
from __future__ import annotations

import datetime
import math
import textwrap

from side_by_side_cases import NOT_YET, ROOT

DOCS = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- side_by_side.py: begin -->", "<!-- side_by_side.py: end -->"


def table(results: list, markdown: bool) -> str:
    """One row per case and tool: case (and how it was exported), tool, wall s, run s, error, tolerance, note."""
    head = ["case", "tool", "wall s", "run s", "error", "tolerance", "note"]
    lines = []
    for case, cells in results:
        label = case.name + (f" ({'; '.join(case.marks)})" if case.marks else "")
        for i, c in enumerate(cells):
            refused = f"refused: {c.refused}" if c.refused else ""
            wall, run = ("" if math.isnan(x) else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}" for x in (c.wall, c.run))
            note = "; ".join(([refused] if refused else []) + c.notes)
            lines.append([label if i == 0 else "", c.tool, wall, run, c.error, c.tolerance, note])
    if markdown:
        return "\n".join("| " + " | ".join(s.replace("|", "/") for s in row) + " |"
                         for row in [head, ["---"] * len(head), *lines])
    widths = [max(len(r[i]) for r in [head, *lines]) for i in range(len(head) - 1)]
    return "\n".join(" | ".join(s.ljust(w) for s, w in zip(row, widths)) + " | " + row[-1] for row in [head, *lines])


def section(results: list, repeat: int, oms_options: list[str], load: float, minutes: float) -> str:
    """The page's section: what was run and how, how to read it, when and where it was measured, the table."""
    options = f"with `{' '.join(oms_options)}`" if oms_options else "at its default options (CVODE up to order 2)"
    what = (f"`python3 benchmarks/side_by_side.py --write-docs` regenerates this section ({minutes:.0f} minutes; "
            "`--cases` picks some, `--repeat` sets the runs): every shipped scenario (those with a constraint "
            "exported with `--unsolved-constraints`, those with a friction element as a strongly coupled archive "
            "only) and a quarter car the benchmark builds with `System` (a 250 kg body on a 35 kg wheel whose tyre, "
            "a unilateral contact, lifts off the road and lands again), each exported once and run in mechfmu, "
            "OpenModelica's OMSimulator, fmpy's `simulate_ssp` and libcosim (libcosimpy), each as a whole process, "
            f"best of {repeat}: `wall s` from the process's start to its end (fmpy and libcosim in a Python process "
            "that imports only the tool; Python with its bytecode cached, PYTHONDONTWRITEBYTECODE unset, as an "
            "installed package runs), `run s` the run alone as the tool tells it (OMSimulator: `--wallTime=true`, "
            "in one more run). mechfmu runs the co-simulation archive with the scenario's master and its error "
            "estimate, as `mechfmu run NAME.ssp -o NAME.mat` does (the strongly coupled archive where export-ssp "
            "writes no other), its result a MATLAB v4 file as OMSimulator's; OMSimulator the strongly coupled archive "
            "(CVODE on the Model Exchange FMUs) "
            f"{options}; fmpy and libcosim the co-simulation archive at the scenario's step (fixed-step Jacobi).")
    error = ("`error`: the largest difference of a body's position or angle from the case's independent reference "
             "at the tool's rows (fmpy's rows at the end of their step), against the scenario's tolerance "
             "(atol + rtol·largest |position|); an MSL example: the Modelica Association's reference at its rows, "
             "as a fraction of the tube's half-height (1: on the tube's edge; OMSimulator, whose rows are CVODE's "
             "steps: at its rows, the reference interpolated linearly between its own, which alone is off by "
             "(Δt)²/8·|ÿ|: 2.9e-5 of the tube in msl/Accelerate). `benchmarks/side_by_side_cases.py` says what "
             f"each reference is; {NOT_YET}.")
    reading = [
        "mechfmu runs the master the scenario names: where that is Jacobi and the scenario's step is too coarse "
        "for its tolerance (limit_stops, stick_slip, two_mass_oscillator) it misses the tolerance and warns so; "
        "without the named master, auto meets it ([Default runs](#default-runs)).",
        "fmpy holds every connected input at 0 over its first step ([Other FMI tools]"
        "(tools.md#scenarios-as-ssp-archives)): a jolt where a system starts under load, and a contact's "
        "orientation quaternion of zeros, which the FMU refuses (ball_drop, ball_on_moving_plate). It records "
        "the SSD's connectors only: a body whose position no connection carries is not in its result.",
        "A constraint's force is solved by mechfmu's masters only: OMSimulator stops at its first step, fmpy and "
        "libcosim run the bodies unconstrained ([Constraints in other tools](tools.md#constraints-in-other-tools)).",
        "Fixed-step Jacobi at the scenario's step goes unstable on stiff elements (msl/Oscillator, "
        "msl/InitialConditions, msl/Backlash): the scenarios name linear-implicit or auto for that.",
    ]
    today = datetime.date.today().isoformat()
    measured = (f"Measured on {today} on the project's 2-core machine, quiet (load average {load:.1f} at the start)."
                if load < 1.5 else
                f"Measured on {today} on the project's 2-core machine while other work ran on it (load average "
                f"{load:.1f} at the start): the wall times are noisy; regenerate the table on a quiet machine before "
                "reading a ratio off it.")
    text = [BEGIN, "## Beside other tools", textwrap.fill(what, 116), textwrap.fill(error, 116),
            "\n".join(textwrap.fill(r, 116, initial_indent="- ", subsequent_indent="  ") for r in reading),
            textwrap.fill(measured, 116), table(results, markdown=True)]
    return "\n\n".join(text[:-1]) + "\n\n" + text[-1] + "\n" + END


def write_docs(text: str) -> None:
    """``text`` in place of the section between the markers, or after the page's end the first time."""
    page = DOCS.read_text()
    if BEGIN in page:
        before, rest = page.split(BEGIN, 1)
        page = before + text + rest.split(END, 1)[1]
    else:
        page = page.rstrip("\n") + "\n\n" + text + "\n"
    DOCS.write_text(page)
