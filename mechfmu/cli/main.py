"""Command line: ``mechfmu build | run | algorithms | sweep | plot-study | export-ssp | crosscheck | export-crosscheck |
draw | gallery | validate | info``.

Every failure ends with one clear message on stderr and a non-zero exit code, never a traceback:
2 for a refused command (bad arguments, scenario, paths), 1 for a run that failed, 130 after Ctrl-C
(``run`` stops at its next step and keeps what it computed; so it does on SIGTERM and SIGHUP: 143, 129).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from mechfmu.cli.lazy import lazy_module
from mechfmu.cli.parser import joined_negative_values, make_parser, print_algorithms
from mechfmu.fmu.extras import install_command
from mechfmu.master.interrupt import INTERRUPT
from mechfmu.ssp.archive import carries_its_fmus, check_file, shown

fmu_build, fmi3 = lazy_module("mechfmu.fmu.build"), lazy_module("mechfmu.fmu.fmi3")


def _build(args: argparse.Namespace) -> int:
    from mechfmu.fmu.native import parse_platforms
    directory = Path(args.dir) if args.dir else fmu_build.FMU_DIR
    platforms = parse_platforms(args.platforms)  # a ValueError naming --platforms: refused (main)
    builder = fmi3.build if args.fmi_version == "3" else fmu_build.build
    directory = fmi3.fmu_dir(Path(args.dir) if args.dir else None) if args.fmi_version == "3" else directory
    built = builder(directory=directory, force=args.force, platforms=platforms, backend=args.backend)
    print("\n".join(f"built {p}" for p in built) if built else f"all FMUs in {directory} are current")
    return 0


def _writable(path: str | None, option: str) -> Path | None:
    """The output path of ``option``, its folder created now: a bad path fails before the run. A character
    device or FIFO (``/dev/null``, a pipe) is written through; a folder, a block device or a socket is refused."""
    from mechfmu.master.observers import is_stream

    if path is None:
        return None
    target = Path(path)
    try:
        stream = is_stream(path)
    except ValueError as exc:
        raise ValueError(f"{option} {exc}") from None
    if stream:
        if not os.access(target, os.W_OK):
            raise ValueError(f"{option} {path}: not writable (a device or FIFO without write permission for you)")
        return target
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
    from mechfmu.master.result_files import result_writer

    out, plot = _writable(args.out, "--out"), _writable(args.plot, "--plot")
    args.events_out = _writable(args.events_out, "--events-out")
    writer = result_writer(out) if out else None  # .csv or .mat; refuses a file another run writes, before the run
    try:
        return _run_with(args, writer, plot)
    finally:
        if writer:
            writer.close()


def _run_with(args: argparse.Namespace, writer, plot: Path | None) -> int:
    from mechfmu.master.observers import PlotWriter
    from mechfmu.master.simulate import simulate
    from mechfmu.ssp.overrides import check_overrides, parse_assignments
    from mechfmu.ssp.scenario import load_scenario

    if not args.local and (args.built_fmus or not carries_its_fmus(args.scenario)):  # an archive's own: none of ours
        built = fmu_build.build()
        if built:
            print(f"built {len(built)} FMU(s) in {fmu_build.FMU_DIR}: {', '.join(p.stem for p in built)}")
    scenario = load_scenario(args.scenario, local=args.local, built_fmus=args.built_fmus or None,
                             outside_sources=args.outside_sources)
    _check_variables(args, scenario, plot)
    for warning in scenario.warnings:  # likely modelling mistakes, before the run
        print(f"warning: {shown(warning)}", file=sys.stderr)
    observers: list = [writer] if writer else []
    plotter = PlotWriter(plot, args.plot_variables) if plot else None
    observers += [plotter] if plotter else []
    from mechfmu.master.progress import ProgressBar  # shown on a terminal only, once the run takes 2 s
    observers.append(ProgressBar(args.stop if args.stop is not None else scenario.stop_time))
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
    for key in ("rtol", "atol"):
        if getattr(args, key) is not None:
            if key in options:
                raise ValueError(f"--{key} and --option {key}= both given: the run's tolerance is one, use --{key}")
            options[key] = getattr(args, key)
    result = simulate(scenario, algorithm=args.algorithm, step=args.step, stop=args.stop, observers=observers,
                      local=args.local, fmi_version=int(args.fmi_version),
                      parameters=check_overrides(scenario, parse_assignments(args.param or []), args.local, texts=True),
                      output_variables=args.output_variables, output_interval=args.output_interval,
                      record=plotter is not None, estimate_error=not args.no_error_estimate, **guards, **options)
    written = writer.written if writer else None
    earlier = (f" ({writer.path} is an earlier run's, left as it was)"
               if written and written != writer.path and writer.path.exists() else "")
    if args.events_out:
        write_events(args.events_out, result.events)
        print(f"{len(result.events)} located event(s) written to {args.events_out}")
    if result.status == "interrupted":
        print(f"{scenario.name}: {shown(result.message)}"
              + (f"; results up to there written to {written}{earlier}" if written else ""))
        return 128 + INTERRUPT.signum
    result.warnings = [w for w in result.warnings if w not in scenario.warnings]  # said before the run
    print(f"{scenario.name} ({'in-process' if args.local else 'FMUs'}, {args.algorithm or scenario.algorithm}): "
          f"{shown(result.summary())}")
    finals = [n for n in list(result.final)[1:] if n.split(".", 1)[1] in FINAL_NAMES][:12]
    if finals:
        print(f"final values at t = {result.final['time']:.6g} s: "
              + ", ".join(f"{n} = {result.final[n]:.6g} {result.units.get(n, '')}".rstrip() for n in finals))
    if written:
        print(f"results written to {written}" if result.ok else f"results up to the failure written to {written}"
              + earlier)
    if plotter and plotter.plotted:
        print(f"plot written to {plot}")
    return 0 if result.ok else 1


def _check_variables(args: argparse.Namespace, scenario, plot: Path | None) -> None:
    """Refuse, before the run, output and plot variables that match no output of the scenario."""
    from mechfmu.master.result import declared_outputs, selector
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
    found: dict[str, str] = {}
    for item in items or []:
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key or not value:
            raise ValueError(f"{option} {item!r}: use NAME=VALUE")
        if key in found:
            raise ValueError(f"{option} {key} is given twice ({found[key]!r} and {value!r}): give it once")
        found[key] = value
    return found


def _sweep(args: argparse.Namespace) -> int:
    from mechfmu.studies.runner import Throughput, run_study
    from mechfmu.studies.study import load_study

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
    speed = Throughput(study, note_failure, dask=bool(args.workers or args.scheduler))  # its clock starts here
    counts = run_study(study, out, workers=args.workers, scheduler=args.scheduler,
                       progress=sys.stderr.isatty() and not args.no_progress, on_row=speed.add,
                       **({"max_runs": args.max_runs} if args.max_runs is not None else {}))
    print(f"{Path(study.scenario).name}: {counts['runs']} runs, {counts['done_before']} already in {out}, "
          f"{counts['computed']} computed, {counts['failed']} failed; table {out}\n{speed.summary()}")
    if reasons:
        print("first failures:\n" + "\n".join(f"  {reason}" for reason in reasons), file=sys.stderr)
    return 1 if counts["computed"] and counts["failed"] == counts["computed"] else 0


def _plot_study(args: argparse.Namespace) -> int:
    from mechfmu.studies.plot import plot_study
    out = _writable(args.out, "--out")
    target = plot_study(args.table, args.metric, args.x, args.y, out, tuple(args.log or ()))
    print(f"plot written to {target}")
    return 0


def _export_ssp(args: argparse.Namespace) -> int:
    from mechfmu.master.observers import is_stream
    from mechfmu.ssp import export_ssp
    from mechfmu.ssp.export import export_summary, safe_name
    from mechfmu.ssp.scenario import load_scenario
    if args.output is not None and not args.output.strip():
        raise ValueError("-o/--output is empty: give the archive's path, e.g. -o scenario.ssp")
    if args.output is not None and is_stream(args.output):  # a zip archive is written with seeks
        raise ValueError(f"-o {args.output}: not a regular file; an archive needs one")
    fmu_build.build()
    target = Path(args.output or f"{safe_name(load_scenario(args.scenario, check=False).name, 'scenario')}.ssp")
    export_ssp(args.scenario, target, shared_fmus=args.shared_fmus, strongly_coupled=args.strongly_coupled,
               unsolved_constraints_allowed=args.unsolved_constraints, fmi_version=int(args.fmi_version))
    from mechfmu.crosscheck.coupling import first_order_deviations
    estimate = None if args.strongly_coupled else first_order_deviations(target)
    print(export_summary(target, args.shared_fmus, args.strongly_coupled, args.scenario, estimate,
                         int(args.fmi_version)))
    return 0


def _crosscheck(args: argparse.Namespace) -> int:
    from mechfmu.crosscheck.tools import crosscheck, table
    from mechfmu.ssp.scenario import load_scenario
    fmu_build.build()
    if args.steps is not None and args.steps < 1:
        raise ValueError(f"--steps {args.steps}: give a number of steps >= 1")
    with_libcosim = importlib.util.find_spec("libcosimpy") is not None
    if not with_libcosim:
        print("libcosim is not installed: its comparison is left out (pip install libcosimpy==0.0.6, or "
              f"{install_command('test')})", file=sys.stderr)
    comparisons = crosscheck(args.scenario, args.steps, libcosim=with_libcosim)
    print(table(load_scenario(args.scenario, check=False).name, comparisons))
    return 0 if all(c.passed for c in comparisons) else 1


def _export_crosscheck(args: argparse.Namespace) -> int:
    from mechfmu.crosscheck.export import export_crosscheck
    fmu_build.build()
    for folder in export_crosscheck(args.scenario, args.directory):
        print(f"wrote {folder}")
    return 0


def _draw(args: argparse.Namespace) -> int:
    from mechfmu.drawing.diagram import draw_scenario
    from mechfmu.drawing.plot import FORMATS, checked_suffix, plot_quantities, run_and_plot
    from mechfmu.ssp.export import safe_name
    from mechfmu.ssp.scenario import load_scenario
    output = checked_suffix(args.output, "-o", (".svg",)) if args.output is not None else None
    quantities = plot_quantities(args.plot_quantities, args.plot)
    plot = _writable(checked_suffix(args.plot, "--plot", FORMATS), "--plot") if args.plot is not None else None
    scenario = load_scenario(args.scenario, check=False)
    target = _writable(output or f"{safe_name(scenario.name, 'scenario')}.svg", "-o")
    assert target is not None  # a path was given
    print(f"system diagram written to {draw_scenario(scenario, target)}")
    if plot is None:
        return 0
    fmu_build.build()
    result, plotted = run_and_plot(args.scenario, plot, quantities=quantities)
    print(f"{scenario.name} (FMUs, {result.algorithm}): {result.summary()}")
    print(f"plot of {', '.join(plotted)} written to {plot}" if plotted else "nothing recorded: no plot written")
    return 0 if result.ok else 1


def _gallery(args: argparse.Namespace) -> int:
    from mechfmu.drawing.gallery import write_gallery
    fmu_build.build()

    def report(entry) -> None:
        print(f"{entry.name}: {entry.run} ({entry.seconds:.1f} s)")
    entries = write_gallery(args.folder, args.page, args.scenarios, progress=report, removed=print)
    page = args.page or Path(args.folder).with_suffix(".md")
    print(f"{len(entries)} scenarios drawn into {args.folder}, page {page}")
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


def _info(args: argparse.Namespace) -> int:
    """An FMU's variables and MSL equivalents, by path, model or MSL name (mechfmu.fmu.modelica_names)."""
    from mechfmu.fmu.fmi3_arrays import read_description
    from mechfmu.fmu.modelica_names import equivalent_lines, locate
    path, lines = locate(args.fmu, fmu_build.FMU_DIR)
    check_file(path)
    try:
        md = read_description(str(path))
    except Exception as exc:  # not a zip, no or a broken modelDescription.xml
        raise ValueError(f"{path}: not an FMU that can be read ({exc})") from None
    print("\n".join([*lines, f"{md.modelName}: {md.description or ''}", *equivalent_lines(md.modelName)]))
    for v in md.modelVariables:
        unit = v.unit or (v.declaredType.unit if v.declaredType else "") or ""
        start = f" = {v.start}" if v.start is not None else ""
        print(f"  {v.causality:<10} {v.type:<8} {v.name}{start} {unit}  {v.description or ''}")
    return 0


def _algorithms(args: argparse.Namespace) -> int:
    print_algorithms()
    return 0


#: the function of each command (``mechfmu.cli.parser`` has their arguments)
HANDLERS = {"build": _build, "run": _run, "algorithms": _algorithms, "sweep": _sweep, "plot-study": _plot_study,
            "export-ssp": _export_ssp, "crosscheck": _crosscheck, "export-crosscheck": _export_crosscheck,
            "draw": _draw, "gallery": _gallery, "validate": _validate, "info": _info}


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C during `run` stops the run at its next step and keeps the results (exit 130): SIGINT is a
    # request from here on (before the heavier imports); the other commands get KeyboardInterrupt back
    INTERRUPT.install()
    parser = make_parser()
    args = parser.parse_args(joined_negative_values(sys.argv[1:] if argv is None else argv))
    if args.command != "run":
        INTERRUPT.uninstall()
    try:
        if INTERRUPT.requested:
            raise KeyboardInterrupt
        return HANDLERS[args.command](args)
    except KeyboardInterrupt:
        print(f"mechfmu {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one clear line, no traceback
        print(f"mechfmu {args.command}: error: {shown(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
