"""The command line's grammar: every command, its arguments and help texts (``make_parser``), negative
numbers read as values, and the listing of the coupling algorithms and their options."""
from __future__ import annotations

import argparse
import os
import re
import textwrap

from mechfmu import __version__
from mechfmu.fmu import locations
from mechfmu.fmu.extras import install_command

LOCAL_HELP = "in-process, not as FMUs (the slower path)"

DESCRIPTION = ("Mechanical contact and connector elements as FMI 2.0 FMUs, and a co-simulation master that "
               "couples them.")
EPILOG = """examples:
  mechfmu run scenarios/oscillator --out results/oscillator.csv
  mechfmu run scenarios/limit_stops --algorithm linear-implicit --option events=on --plot stops.png
  mechfmu export-ssp scenarios/ball_drop -o ball_drop.ssp
  mechfmu draw scenarios/msl/Oscillator -o oscillator.svg --plot oscillator_result.svg
  mechfmu algorithms           the coupling algorithms and their options
  mechfmu COMMAND --help       the arguments of one command

exit status: 0 done, 1 a run failed (results kept), 2 refused before anything ran, 130 interrupted"""
#: a negative number as a value (``--step -1e-4``): argparse would read it as an option
NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf(inity)?$", re.IGNORECASE)


def joined_negative_values(argv: list[str]) -> list[str]:
    """``--opt -1e-4`` as ``--opt=-1e-4``: a negative number right after a long option is its value."""
    joined: list[str] = []
    for arg in argv:
        previous = joined[-1] if joined else ""
        if NEGATIVE_NUMBER.match(arg) and previous.startswith("--") and "=" not in previous:
            joined[-1] = f"{previous}={arg}"
        else:
            joined.append(arg)
    return joined


def _summary(cls: type) -> str:
    """The first sentence of a class docstring (up to its colon if it is long)."""
    sentence = " ".join((cls.__doc__ or "").split("\n\n")[0].split()).split(". ")[0].rstrip(".")
    return (sentence.split(": ")[0] if len(sentence) > 100 else sentence) + "."


def print_algorithms() -> None:
    """Every algorithm with its own options, then the options every algorithm takes."""
    from mechfmu.master.algorithms import ALGORITHMS
    classes = list(ALGORITHMS.values())
    shared = [key for key, option in classes[0].options.items()
              if all(key in cls.options and cls.options[key].help() == option.help() for cls in classes)]
    width = max(len(key) for cls in classes for key in cls.options) + 2

    def show(key: str, option) -> None:
        print(textwrap.fill(option.help(), 110, initial_indent=f"  {key:{width}s}",
                            subsequent_indent=" " * (width + 2)))
    for cls in classes:
        print(f"{cls.name}: {_summary(cls)}")
        for key, option in cls.options.items():
            if key not in shared:
                show(key, option)
    print("auto: the default where neither --algorithm nor the scenario names one; chooses monolithic (one stiff "
          "integrator over the Model Exchange forms) where every component has one, or is a constraint and every "
          "component gives directional derivatives; else newton (implicit coupling) for a constraint, else "
          "linear-implicit, with events=on where a component switches; the run says what it chose and why; --option "
          "values go to the chosen algorithm")
    print("every algorithm:")
    for key in shared:
        show(key, classes[0].options[key])
    print("give options as --option KEY=VALUE (run, sweep) or on the scenario's <mechfmu:Master KEY=\"VALUE\"/>")


def command(sub, name: str, summary: str) -> argparse.ArgumentParser:
    """A subcommand listed with ``summary``, whose ``--help`` opens with it as a sentence."""
    return sub.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")


def output(p: argparse.ArgumentParser, text: str) -> None:
    """The output file, ``-o``/``--out`` as in every command (``--output``, its earlier name, still taken)."""
    p.add_argument("-o", "--out", dest="output", help=text)
    p.add_argument("--output", dest="output", help=argparse.SUPPRESS)


def make_parser() -> argparse.ArgumentParser:
    """The parser of ``mechfmu``: the command is ``args.command``."""
    from mechfmu.master.algorithms.auto import algorithm_names
    parser = argparse.ArgumentParser(prog="mechfmu", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mechfmu {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = command(sub, "build", "build the FMUs for this machine (--platforms: for others too) into the FMU folder")
    p.add_argument("--force", action="store_true", help="rebuild even if current")
    p.add_argument("--dir", help=f"where to build (default: {locations.FMU_DIR}; $MECHFMU_FMU_DIR overrides)")
    p.add_argument("--platforms", default="host", metavar="LIST",
                   help="binaries to build: host (default: this machine's), all (linux64, aarch64-linux, win64, "
                        f"darwin64: needs zig, {install_command('cross')}), or folder names separated by commas")
    p.add_argument("--fmi-version", choices=("2", "3"), default="2",
                   help="2 (default): the FMI 2.0 FMUs, into the FMU folder; 3: the FMI 3.0 FMUs (Model Exchange and "
                        "co-simulation with event mode and early return, of the components with a law in C), into its "
                        "fmi3/ folder")
    p.add_argument("--backend", choices=locations.BACKENDS, default="native",
                   help="native (default): a component whose law is in C (every shipped one) runs as native code and "
                        "needs no Python where the FMU runs; python: every component runs in the Python the FMU "
                        "embeds (pythonfmu's way, for a component written in Python)")
    p = command(sub, "run", "run a scenario (builds missing or stale FMUs first)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp archive")
    p.add_argument("--algorithm", choices=algorithm_names(),
                   help="coupling algorithm (the scenario's, else auto)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="algorithm option, repeatable, "
                   "e.g. --option events=on (`mechfmu algorithms` lists every algorithm's options)")
    p.add_argument("--param", action="append", metavar="COMPONENT.PARAMETER=VALUE",
                   help="override a parameter, repeatable, typed and range-checked, e.g. --param mass.m=2.5")
    p.add_argument("--exchange", choices=("ordered", "strict"), help="Jacobi exchange order")
    p.add_argument("--fmi-version", choices=("2", "3"), default="2", help="3: mechfmu's FMUs as FMI 3.0 FMUs")
    p.add_argument("--step", type=float, help="macro step size [s]")
    p.add_argument("--stop", type=float, help="stop time [s]")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: the scenario's, 1e-6)")
    p.add_argument("--atol", type=float, help="absolute tolerance, SI (the scenario's, 1e-9)")
    p.add_argument("--no-error-estimate", action="store_true", help="skip the error estimate (a run at 4x the "
                   "step); the run itself is the same")
    p.add_argument("-o", "--out", help="result file: .csv (FMI cross-check) or .mat (Dymola)")
    p.add_argument("--output-variables", nargs="+", metavar="NAME", help="record only these outputs "
                   "(component.variable, glob patterns allowed, e.g. 'mass.*' '*.f'); default: all")
    p.add_argument("--output-interval", type=float, metavar="SECONDS",
                   help="record every SECONDS (a multiple of the step); default: every step")
    p.add_argument("--output-accepted", action="store_true", help="with --option adaptive=on: record every "
                   "accepted step's end too, not only the communication grid")
    p.add_argument("--events-out", metavar="FILE", help="CSV of the located events (time [s], indicators; with "
                   "--option events=on), written also after a failed run")
    p.add_argument("--plot", help="PNG plot (default: every body's position or angle, one subplot per unit)")
    p.add_argument("--plot-variables", nargs="+", metavar="NAME", help="what --plot draws (names or patterns)")
    p.add_argument("--local", action="store_true", help=LOCAL_HELP)
    p.add_argument("--built-fmus", action="store_true", help="an FMU source that does not exist is mechfmu's built FMU "
                   "of its model")
    p.add_argument("--outside-sources", action="store_true", help="read FMU, .ssv and .ssm sources outside the "
                   "scenario's folder or archive (trusted scenarios only)")
    p.add_argument("--max-steps", type=int, metavar="N",
                   help="allow more than 10^8 macro steps (refused otherwise)")
    p.add_argument("--divergence-factor", type=float, metavar="F", help="end the run where an output exceeds F times "
                   "max(1, its largest start value) (default 1e8)")
    p = command(sub, "algorithms", "the coupling algorithms and their options")
    p = command(sub, "sweep", "a parameter study on Dask: one run per point, a table of metrics "
                                     "(resumes an interrupted study)")
    p.add_argument("study", help="scenario folder, .ssd or .ssp, or a study file (.toml)")
    p.add_argument("--grid", action="append", metavar="NAME=SPEC", help="an axis: NAME is COMPONENT.PARAMETER, "
                   "algorithm, step, stop or option.KEY; SPEC is START:STOP:N or a,b,c (runs: the product)")
    p.add_argument("--range", action="append", metavar="NAME=LOW:HIGH", help="a sampled axis (with --samples)")
    p.add_argument("--tie", action="append", metavar="NAME=AXIS", help="NAME takes the value of the varied AXIS in "
                   "every run (e.g. elastoGap2.c=elastoGap1.c)")
    p.add_argument("--samples", type=int, help="space-filling points over the ranges (default 0)")
    p.add_argument("--method", choices=("sobol", "lhs"), help="sampling of the ranges (default sobol)")
    p.add_argument("--seed", type=int, help="seed of the sampling (default 0)")
    p.add_argument("--metric", action="append", metavar="NAME=EXPR", help="e.g. peak=maxabs(elastoGap1.f); "
                   "aggregates final, initial, max, min, maxabs, integral of outputs, each optionally over a time "
                   "window (max(X, T0) or max(X, T0, T1) [s]), in a safe expression")
    p.add_argument("--param", action="append", metavar="COMPONENT.PARAMETER=VALUE", help="fixed for every run")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="algorithm option for every run")
    p.add_argument("--algorithm", choices=algorithm_names(), help="coupling algorithm of every run")
    p.add_argument("--step", type=float, help="macro step size [s] of every run")
    p.add_argument("--stop", type=float, help="stop time [s] of every run")
    p.add_argument("-o", "--out", required=True, help="the table: .csv (streamed) or .parquet")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="worker processes of the local Dask cluster (default: the CPUs; 0: run here)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask cluster, e.g. tcp://host:8786")
    p.add_argument("--local", action="store_true", help=LOCAL_HELP)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--max-runs", type=int, metavar="N", help="allow studies of more than 100,000 runs "
                   "(refused up front otherwise)")
    p = command(sub, "plot-study", "PNG of a study's metric against one or two varied settings")
    p.add_argument("table", help="the study's table (.csv or .parquet, from mechfmu sweep --out)")
    p.add_argument("metric", help="the metric's name (a column of the table)")
    p.add_argument("x", help="the varied setting on the x axis")
    p.add_argument("y", nargs="?", help="a second varied setting: the metric as colour over x and y")
    p.add_argument("-o", "--out", help="PNG (or .svg) to write (default: TABLE's name with .METRIC.png)")
    p.add_argument("--log", nargs="+", metavar="NAME", help="settings (or 'metric') drawn on a log scale")
    p = command(sub, "export-ssp", "write a scenario as a self-contained SSP archive (FMUs inside)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp")
    output(p, "archive to write (default: <scenario name>.ssp)")
    p.add_argument("--shared-fmus", action="store_true",
                   help="one FMU per model shared by its instances, the values only in the SSD's bindings (a smaller "
                        "archive; fmpy's simulate_ssp and ecos then miss the values)")
    p.add_argument("--strongly-coupled", action="store_true",
                   help="OMSimulator's strongly coupled system: its FMUs as Model Exchange FMUs integrated by CVODE "
                        "(ours: the monolithic master); every FMU needs a Model Exchange interface")
    p.add_argument("--unsolved-constraints", action="store_true",
                   help="write a scenario with a constraint or friction element all the same: only mechfmu's "
                        "masters solve its force (monolithic; newton for a constraint, newton-friction for friction); "
                        "OMSimulator stops at a constraint's first step, libcosim, fmpy and ecos run unconstrained")
    p.add_argument("--fmi-version", choices=("2", "3"), default="2",
                   help="2 (default): mechfmu's FMUs as FMI 2.0 FMUs, which every tool named runs; 3: as FMI 3.0 FMUs, "
                        "which mechfmu and ecos run (not OMSimulator 2.1.3, libcosim or fmpy's simulate_ssp)")
    p = command(sub, "crosscheck", "the scenario through our master, in-process, libcosim and against its "
                                          "reference, compared pair by pair (exit 1 on a disagreement)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp")
    p.add_argument("--steps", type=int, help="compare the first STEPS steps (default: the whole run)")
    p = command(sub, "export-crosscheck", "every FMU of a scenario in the FMI cross-check layout "
                                                 "(FMU with the instance's parameters, _in.csv, _ref.csv, _ref.opt)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp")
    p.add_argument("directory", help="where to write fmus/2.0/cs/linux64/mechfmu/<version>/<Model>/")
    p = command(sub, "draw", "a scenario's system as an SVG diagram (--plot: its result against its "
                                    "reference)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp")
    output(p, "the diagram, .svg (default: <scenario name>.svg)")
    p.add_argument("--plot", metavar="FILE", help="run the scenario (as mechfmu run does) and plot its result to FILE "
                   "(.svg or .png), with the scenario's reference and tube where it has one")
    p.add_argument("--plot-quantities", metavar="LIST", help="what --plot shows, comma-separated: positions, forces, "
                   "states (default: all, each where the system has it)")
    p = command(sub, "gallery", "every scenario's diagram and result plot, and a Markdown page of them")
    p.add_argument("folder", help="where the pictures go, e.g. docs/gallery")
    p.add_argument("--page", help="the Markdown page (default: FOLDER.md, beside the folder)")
    p.add_argument("--scenarios", default="scenarios", metavar="FOLDER",
                   help="where the scenarios are (default: scenarios)")
    p = command(sub, "validate", "fmpy validation of every FMU")
    p = command(sub, "info", "variables of an FMU")
    p.add_argument("fmu", help="path or model name")
    return parser
