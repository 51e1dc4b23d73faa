"""Command line: ``mechfmu build | run | algorithms | sweep | plot-study | export-ssp | crosscheck |
export-crosscheck | validate | info``.

Every failure ends with one clear message on stderr and a non-zero exit code, never a traceback:
2 for a refused command (bad arguments, scenario, paths), 1 for a run that failed, 130 after Ctrl-C
(``run`` stops at its next step and keeps what it computed).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import signal
import sys
import textwrap
from pathlib import Path

from . import __version__
from . import build as fmu_build
from .interrupt import INTERRUPT

DESCRIPTION = ("Mechanical contact and connector elements as FMI 2.0 FMUs, and a co-simulation master that "
               "couples them.")
EPILOG = """examples:
  mechfmu run scenarios/oscillator --out results/oscillator.csv
  mechfmu run scenarios/limit_stops --algorithm linear-implicit --option events=on --plot stops.png
  mechfmu export-ssp scenarios/ball_drop -o ball_drop.ssp
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


def _build(args: argparse.Namespace) -> int:
    directory = Path(args.dir) if args.dir else fmu_build.FMU_DIR
    built = fmu_build.build(directory=directory, force=args.force)
    print("\n".join(f"built {p}" for p in built) if built else f"all FMUs in {directory} are current")
    return 0


def _writable(path: str | None, option: str) -> Path | None:
    """The output path of ``option``, its folder created now: a bad path fails before the run."""
    if path is None:
        return None
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot create its folder ({exc.strerror})") from None
    if target.is_dir() or not os.access(target.parent, os.W_OK):
        raise ValueError(f"{option} {path}: not a writable file path")
    return target


def write_events(path: Path, events: list[tuple[float, str]]) -> None:
    """The located events as CSV: ``"time","event"``, the time [s] exact (repr) and the indicators that
    crossed there (``component.indicator.x``, or ``component.switchingError``)."""
    with path.open("w", encoding="utf-8", newline="") as file:
        file.write('"time","event"\n')
        file.writelines(f'{t!r},"{what}"\n' for t, what in events)


#: final values worth printing: body positions and velocities (1D and 3D)
FINAL_NAMES = ("s", "v", "phi", "w", "position.x", "position.y", "position.z", "velocity.x", "velocity.y", "velocity.z")


def _run(args: argparse.Namespace) -> int:
    from .observers import CsvWriter

    out, plot = _writable(args.out, "--out"), _writable(args.plot, "--plot")
    args.events_out = _writable(args.events_out, "--events-out")
    writer = CsvWriter(out) if out else None  # refuses a file another run is writing, before the run
    try:
        return _run_with(args, writer, plot)
    finally:
        if writer:
            writer.close()


def _run_with(args: argparse.Namespace, writer, plot: Path | None) -> int:
    from .observers import PlotWriter, ProgressBar
    from .overrides import check_overrides, parse_assignments
    from .scenario import load_scenario
    from .simulate import simulate

    if not args.local:
        built = fmu_build.build()
        if built:
            print(f"built {len(built)} FMU(s) in {fmu_build.FMU_DIR}: {', '.join(p.stem for p in built)}")
    scenario = load_scenario(args.scenario, local=args.local)
    _check_variables(args, scenario, plot)
    observers: list = [writer] if writer else []
    plotter = PlotWriter(plot, args.plot_variables) if plot else None
    observers += [plotter] if plotter else []
    if sys.stderr.isatty():
        observers.append(ProgressBar())
    options = {"exchange": args.exchange} if args.exchange else {}
    for item in args.option or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--option {item!r}: use KEY=VALUE, e.g. --option tolerance=1e-9")
        options[key.strip()] = value.strip()
    if INTERRUPT.requested:
        raise KeyboardInterrupt
    guards = {"max_steps": args.max_steps} if args.max_steps is not None else {}
    if args.divergence_factor is not None:
        guards["divergence_factor"] = args.divergence_factor
    if args.output_accepted:
        guards["output_accepted"] = True
    result = simulate(scenario, algorithm=args.algorithm, step=args.step, stop=args.stop, observers=observers,
                      local=args.local,
                      parameters=check_overrides(scenario, parse_assignments(args.param or []), args.local, texts=True),
                      output_variables=args.output_variables, output_interval=args.output_interval,
                      record=plotter is not None, **guards, **options)
    written = writer.written if writer else None
    if args.events_out:
        write_events(args.events_out, result.events)
        print(f"{len(result.events)} located event(s) written to {args.events_out}")
    if result.status == "interrupted":
        print(f"{scenario.name}: {result.message}"
              + (f"; results up to there written to {written}" if written else ""))
        return 130
    print(f"{scenario.name} ({'in-process' if args.local else 'FMUs'}, {args.algorithm or scenario.algorithm}): "
          f"{result.summary()}")
    shown = [n for n in list(result.final)[1:] if n.split(".", 1)[1] in FINAL_NAMES][:12]
    if shown:
        print(f"final values at t = {result.final['time']:.6g} s: "
              + ", ".join(f"{n} = {result.final[n]:.6g} {result.units.get(n, '')}".rstrip() for n in shown))
    if written:
        print(f"results written to {written}" if result.ok else f"results up to the failure written to {written}")
    if plotter and plotter.plotted:
        print(f"plot written to {plot}")
    return 0 if result.ok else 1


def _check_variables(args: argparse.Namespace, scenario, plot: Path | None) -> None:
    """Refuse, before the run, output and plot variables that match no output of the scenario."""
    from .result import declared_outputs, selector
    if args.plot_variables and plot is None:
        raise ValueError("--plot-variables chooses what --plot draws: give --plot FILE.png as well")
    if args.output_variables is None and args.plot_variables is None:
        return
    outputs = declared_outputs(scenario, args.local)
    select = selector(args.output_variables, outputs, "--output-variables")
    recorded = [name for name in outputs if select(name)]
    selector(args.plot_variables, recorded, "--plot-variables" + (" (of the recorded --output-variables)"
                                                                  if args.output_variables else ""))


def _pairs(items: list[str] | None, option: str) -> dict[str, str]:
    found = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option} {item!r}: use NAME=VALUE")
        found[key.strip()] = value.strip()
    return found


def _sweep(args: argparse.Namespace) -> int:
    from .study import load_study
    from .study_runner import run_study

    study = load_study(args.study, metrics=_pairs(args.metric, "--metric"), grid=_pairs(args.grid, "--grid"),
                       ranges=_pairs(args.range, "--range"), samples=args.samples, method=args.method,
                       seed=args.seed, fixed={**_pairs(args.param, "--param"),
                                              **{f"option.{k}": v for k, v in _pairs(args.option, "--option").items()},
                                              **{k: getattr(args, k) for k in ("algorithm", "step", "stop")
                                                 if getattr(args, k) is not None}},
                       local=args.local, tied=_pairs(args.tie, "--tie"))
    if not study.local and args.scheduler is None:
        fmu_build.build()
    out = _writable(args.out, "--out")
    assert out is not None  # --out is required
    reasons: list[str] = []

    def note_failure(row: dict) -> None:
        if row["status"] != "ok" and len(reasons) < 3:
            reasons.append(f"run {row['index']}: {row['message']}")
    counts = run_study(study, out, workers=args.workers, scheduler=args.scheduler,
                       progress=sys.stderr.isatty() and not args.no_progress, on_row=note_failure)
    print(f"{Path(study.scenario).name}: {counts['runs']} runs, {counts['done_before']} already in {out}, "
          f"{counts['computed']} computed, {counts['failed']} failed; table {out}")
    if reasons:
        print("first failures:\n" + "\n".join(f"  {reason}" for reason in reasons), file=sys.stderr)
    return 1 if counts["computed"] and counts["failed"] == counts["computed"] else 0


def _plot_study(args: argparse.Namespace) -> int:
    from .study_plot import plot_study
    out = _writable(args.out, "--out")
    target = plot_study(args.table, args.metric, args.x, args.y, out, tuple(args.log or ()))
    print(f"plot written to {target}")
    return 0


def _export_ssp(args: argparse.Namespace) -> int:
    from .scenario import load_scenario
    from .ssp import export_ssp
    fmu_build.build()
    target = Path(args.output or f"{load_scenario(args.scenario, check=False).name}.ssp")
    export_ssp(args.scenario, target, shared_fmus=args.shared_fmus)
    if args.shared_fmus:
        print(f"wrote {target} (SystemStructure.ssd + resources/<Model>.fmu; values in the bindings only: runs in "
              "mechfmu, libcosim and OMSimulator)")
    else:
        print(f"wrote {target} (SystemStructure.ssd + resources/<instance>/<Model>.fmu carrying its values; runs in "
              "mechfmu, libcosim, OMSimulator, fmpy's simulate_ssp and ecos)")
    return 0


def _crosscheck(args: argparse.Namespace) -> int:
    from .crosscheck import crosscheck, table
    from .scenario import load_scenario
    fmu_build.build()
    if args.steps is not None and args.steps < 1:
        raise ValueError(f"--steps {args.steps}: give a number of steps >= 1")
    with_libcosim = importlib.util.find_spec("libcosimpy") is not None
    if not with_libcosim:
        print("libcosim is not installed: its comparison is left out (pip install libcosimpy==0.0.6, or "
              "pip install 'mechfmu[test]')", file=sys.stderr)
    comparisons = crosscheck(args.scenario, args.steps, libcosim=with_libcosim)
    print(table(load_scenario(args.scenario, check=False).name, comparisons))
    return 0 if all(c.passed for c in comparisons) else 1


def _export_crosscheck(args: argparse.Namespace) -> int:
    from .crosscheck_export import export_crosscheck
    fmu_build.build()
    for folder in export_crosscheck(args.scenario, args.directory):
        print(f"wrote {folder}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from fmpy.validation import validate_fmu
    fmu_build.build()
    failed = 0
    for model in fmu_build.model_names():
        path = fmu_build.fmu_path(model)
        problems = validate_fmu(str(path))
        print(f"{path.name}: " + ("no problems" if not problems else f"{len(problems)} problem(s)"))
        for p in problems:
            print(f"  - {p}")
        failed += bool(problems)
    return 1 if failed else 0


def _summary(cls: type) -> str:
    """The first sentence of a class docstring (up to its colon if it is long)."""
    sentence = " ".join((cls.__doc__ or "").split("\n\n")[0].split()).split(". ")[0].rstrip(".")
    return (sentence.split(": ")[0] if len(sentence) > 100 else sentence) + "."


def _algorithms(args: argparse.Namespace) -> int:
    from .algorithms import ALGORITHMS
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
    print("every algorithm:")
    for key in shared:
        show(key, classes[0].options[key])
    print("give options as --option KEY=VALUE (run, sweep) or on the scenario's <mechfmu:Master KEY=\"VALUE\"/>")
    return 0


def _info(args: argparse.Namespace) -> int:
    from fmpy import read_model_description
    path = Path(args.fmu)
    if not path.exists() and (fmu_build.FMU_DIR / f"{args.fmu}.fmu").exists():
        path = fmu_build.FMU_DIR / f"{args.fmu}.fmu"
    if not path.is_file():
        raise FileNotFoundError(f"no FMU at {args.fmu}")
    md = read_model_description(str(path))
    print(f"{md.modelName}: {md.description or ''}")
    for v in md.modelVariables:
        unit = v.unit or (v.declaredType.unit if v.declaredType else "") or ""
        start = f" = {v.start}" if v.start is not None else ""
        print(f"  {v.causality:<10} {v.type:<8} {v.name}{start} {unit}  {v.description or ''}")
    return 0


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C during `run` stops the run at its next step and keeps the results (exit 130): SIGINT is a
    # request from here on (before the heavier imports); the other commands get KeyboardInterrupt back
    INTERRUPT.install()
    from .algorithms import ALGORITHMS
    parser = argparse.ArgumentParser(prog="mechfmu", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mechfmu {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("build", help="build all FMUs into fmus/")
    p.add_argument("--force", action="store_true", help="rebuild even if current")
    p.add_argument("--dir", help=f"where to build (default: {fmu_build.FMU_DIR}; $MECHFMU_FMU_DIR overrides)")
    p.set_defaults(func=_build)
    p = sub.add_parser("run", help="run a scenario (builds missing or stale FMUs first)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp archive")
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), help="coupling algorithm (default: the scenario's)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="algorithm option, repeatable, "
                   "e.g. --option events=on (`mechfmu algorithms` lists every algorithm's options)")
    p.add_argument("--param", action="append", metavar="COMPONENT.PARAMETER=VALUE",
                   help="override a parameter of the scenario, repeatable (typed and range-checked as the SSD's "
                        "values), e.g. --param mass.m=2.5 --param stops.useLimitStops=true")
    p.add_argument("--exchange", choices=("ordered", "strict"), help="Jacobi exchange order")
    p.add_argument("--step", type=float, help="macro step size [s]")
    p.add_argument("--stop", type=float, help="stop time [s]")
    p.add_argument("--out", help="CSV result file (FMI cross-check format)")
    p.add_argument("--output-variables", nargs="+", metavar="NAME", help="record only these outputs "
                   "(component.variable, glob patterns allowed, e.g. 'mass.*' '*.f'); default: all")
    p.add_argument("--output-interval", type=float, metavar="SECONDS",
                   help="record every SECONDS (a multiple of the step); default: every step")
    p.add_argument("--output-accepted", action="store_true", help="with --option adaptive=on: record every "
                   "accepted step's end too, not only the communication grid")
    p.add_argument("--events-out", metavar="FILE", help="with --option events=on or switching_tolerance: CSV of "
                   "the located events (time [s], the indicators that crossed), written also after a failed run")
    p.add_argument("--plot", help="PNG plot (default: every body's position or angle, one subplot per unit)")
    p.add_argument("--plot-variables", nargs="+", metavar="NAME", help="what --plot draws (names or patterns)")
    p.add_argument("--local", action="store_true", help="run the components in-process instead of as FMUs")
    p.add_argument("--max-steps", type=int, metavar="N",
                   help="allow runs of more than 100,000,000 macro steps (refused up front otherwise)")
    p.add_argument("--divergence-factor", type=float, metavar="F", help="a recorded output beyond F times the "
                   "run's scale, max(1, largest |output| at the start), ends the run (default 1e8 or the scenario's)")
    p.set_defaults(func=_run)
    p = sub.add_parser("algorithms", help="the coupling algorithms and their options")
    p.set_defaults(func=_algorithms)
    p = sub.add_parser("sweep", help="a parameter study on Dask: one run per point, a table of metrics "
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
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), help="coupling algorithm of every run")
    p.add_argument("--step", type=float, help="macro step size [s] of every run")
    p.add_argument("--stop", type=float, help="stop time [s] of every run")
    p.add_argument("--out", required=True, help="the table: .csv (streamed) or .parquet")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="worker processes of the local Dask cluster (default: the CPUs; 0: run here)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask cluster, e.g. tcp://host:8786")
    p.add_argument("--local", action="store_true", help="run the components in-process instead of as FMUs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_sweep)
    p = sub.add_parser("plot-study", help="PNG of a study's metric against one or two varied settings")
    p.add_argument("table", help="the study's table (.csv or .parquet, from mechfmu sweep --out)")
    p.add_argument("metric", help="the metric's name (a column of the table)")
    p.add_argument("x", help="the varied setting on the x axis")
    p.add_argument("y", nargs="?", help="a second varied setting: the metric as colour over x and y")
    p.add_argument("--out", help="PNG (or .svg) to write (default: TABLE's name with .METRIC.png)")
    p.add_argument("--log", nargs="+", metavar="NAME", help="settings (or 'metric') drawn on a log scale")
    p.set_defaults(func=_plot_study)
    p = sub.add_parser("export-ssp", help="write a scenario as a self-contained SSP archive (FMUs inside)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp")
    p.add_argument("-o", "--output", help="archive to write (default: <scenario name>.ssp)")
    p.add_argument("--shared-fmus", action="store_true",
                   help="one FMU per model shared by its instances, the values only in the SSD's bindings (a smaller "
                        "archive; fmpy's simulate_ssp and ecos then miss the values)")
    p.set_defaults(func=_export_ssp)
    p = sub.add_parser("crosscheck", help="the scenario through our master, in-process, libcosim and against its "
                                          "reference, compared pair by pair (exit 1 on a disagreement)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp")
    p.add_argument("--steps", type=int, help="compare the first STEPS steps (default: the whole run)")
    p.set_defaults(func=_crosscheck)
    p = sub.add_parser("export-crosscheck", help="every FMU of a scenario in the FMI cross-check layout "
                                                 "(FMU with the instance's parameters, _in.csv, _ref.csv, _ref.opt)")
    p.add_argument("scenario", help="scenario folder, SystemStructure.ssd or .ssp")
    p.add_argument("directory", help="where to write fmus/2.0/cs/linux64/mechfmu/<version>/<Model>/")
    p.set_defaults(func=_export_crosscheck)
    p = sub.add_parser("validate", help="fmpy validation of every FMU")
    p.set_defaults(func=_validate)
    p = sub.add_parser("info", help="variables of an FMU")
    p.add_argument("fmu", help="path or model name")
    p.set_defaults(func=_info)
    args = parser.parse_args(joined_negative_values(sys.argv[1:] if argv is None else argv))
    if args.command != "run":
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if INTERRUPT.requested:
            raise KeyboardInterrupt
        return args.func(args)
    except KeyboardInterrupt:
        print(f"mechfmu {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one clear line, no traceback
        print(f"mechfmu {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
