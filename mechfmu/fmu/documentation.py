"""Each FMU's ``documentation/index.html``, generated from the component it wraps.

The page is built from what the code declares, so it cannot drift from it: the law is the
component module's docstring, the tables are the ``parameters``/``inputs``/``outputs`` declarations
(name, unit, start value, range, feed-through, description), the source system is the class's
``source``, the Modelica Standard Library classes it stands for its ``modelica``, the port convention is
``components.base.SIGN_CONVENTION``, and the host requirements come from the Python runtime the FMU was
built for (``mechfmu.fmu.build.python_runtime``). Every variable has a table row whose ``id`` is its name.

The rows are made once (``parameter_rows``, ``input_rows``, ``output_rows``, ``state_rows``: plain text
cells whose ``Code`` fragments are code) and rendered here as HTML and by the documentation site's
component reference (``docs/_ext/component_reference.py``) as its tables, so both show the same.
"""
from __future__ import annotations

import html
import sys
from importlib.metadata import PackageNotFoundError, version

from mechfmu.components.base import SIGN_CONVENTION, Component, Param
from mechfmu.components.fmi_model_exchange import state_variables

_STYLE = """body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}
pre{background:#f4f4f4;padding:1em;overflow-x:auto}table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}code{white-space:nowrap}"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _range(p: Param) -> str:
    if p.type != "Real":
        return ""
    low = "" if p.min is None else f"{'>' if p.min_exclusive else '≥'} {p.min:g}"
    high = "" if p.max is None else f"≤ {p.max:g}"
    return ", ".join(x for x in (low, high) if x) or "any finite value"


def _start(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


class Code(str):
    """A fragment of a cell shown as code (HTML ``<code>``)."""


#: a table cell: its text in fragments, ``Code`` ones shown as code
Cell = tuple[str, ...]
#: a table row: the variable's name and its cells
Row = tuple[str, list[Cell]]
PARAMETER_HEADER = ("name", "type", "unit", "default", "range", "description")
INPUT_HEADER = ("name", "unit", "start", "description")
OUTPUT_HEADER = ("name", "unit", "depends on", "description")
STATE_HEADER = ("name", "unit", "description")


def parameter_rows(cls: type[Component]) -> list[Row]:
    """Each parameter: name, type, unit (Real only), default, range, description."""
    return [(p.name, [(Code(p.name),), (p.type,), (p.unit if p.type == "Real" else "",), (Code(_start(p.default)),),
                      (_range(p),), (p.description,)]) for p in cls.parameters]


def input_rows(cls: type[Component]) -> list[Row]:
    """Each input: name, unit, start value, description."""
    return [(i.name, [(Code(i.name),), (i.unit,), (Code(_start(i.start)),), (i.description,)]) for i in cls.inputs]


def output_rows(cls: type[Component]) -> list[Row]:
    """Each output: name, unit, the inputs it depends on within a step ("state only": none), description."""
    rows: list[Row] = []
    for o in cls.outputs:
        depends: list[str] = []
        for d in o.depends_on:
            depends += [", ", Code(d)] if depends else [Code(d)]
        rows.append((o.name, [(Code(o.name),), (o.unit,), tuple(depends) or ("state only",), (o.description,)]))
    return rows


def state_rows(cls: type[Component]) -> list[Row]:
    """Each continuous state of the Model Exchange form: name, unit, description."""
    return [(name, [(Code(name),), (unit,), (text,)]) for name, unit, text in state_variables(cls)]


def law(cls: type[Component]) -> str:
    """The component's law: its module's docstring, and the class's own where it adds to it."""
    text = sys.modules[cls.__module__].__doc__ or ""
    own = cls.__dict__.get("__doc__")
    if own and own.strip() and own.strip() not in text:
        text += "\n" + own
    return text.strip()


def directional(cls: type[Component]) -> str:
    """What the FMU's directional derivatives are (components/partials.py), as HTML."""
    rest = ("central differences (relative step 1e-5) where an unknown depends on a known, otherwise 0 "
            "(unknowns: the outputs and state derivatives; knowns: the inputs and states)")
    if not cls.partial_pattern:
        return _e(rest)
    unknowns = list(dict.fromkeys(u for u, _ in cls.partial_pattern))
    knowns = list(dict.fromkeys(k for _, k in cls.partial_pattern))
    return (f"analytic partials of {', '.join(f'<code>{_e(u)}</code>' for u in unknowns)} with respect to "
            f"{', '.join(f'<code>{_e(k)}</code>' for k in knowns)} (where they depend on them), {_e(rest)} for "
            "the others")


def modelica_equivalents(cls: type[Component]) -> str:
    """The Modelica Standard Library classes the component stands for (``cls.modelica``), each its
    ``Modelica equivalent: NAME (MSL parameter = ours, ...)`` line and note, as HTML."""
    if not cls.modelica:
        return "<p>none</p>"
    items = "".join(f"<li>{_e(e.line())}" + (f"<br>{_e(e.note)}" if e.note else "") + "</li>\n" for e in cls.modelica)
    return ("<p>“c = stiffness” reads: set this FMU's <code>stiffness</code> to MSL's <code>c</code>; “set” "
            f"lists values of this FMU's parameters that MSL's class has no parameter for.</p>\n<ul>\n{items}</ul>")


def _html(cell: Cell) -> str:
    return "".join(f"<code>{_e(f)}</code>" if isinstance(f, Code) else _e(f) for f in cell)


def _table(header: tuple[str, ...], rows: list[Row]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(f'<tr id="{_e(name)}">' + "".join(f"<td>{_html(cell)}</td>" for cell in cells) + "</tr>\n"
                   for name, cells in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}</table>\n"


#: how each platform's binary is tested (mechfmu's own test suite)
TESTED = {"linux64": "run: fmpy, libcosim, a C host that loads it as OMSimulator does, valgrind",
          "win64": "run under Wine with python.org's Windows Python (a C host: steps, states, errors)",
          "darwin64": "built and its exports checked; not run (no macOS machine in the tests)",
          "aarch64-linux": "built and its exports checked; not run (no AArch64 machine in the tests)"}


#: how each platform's native binary (a component in C) is tested
TESTED_NATIVE = {"linux64": "run: fmpy, a C host that loads it as OMSimulator does, bit for bit against the "
                            "Python-embedding FMU",
                 "win64": "built and its imports checked (the C runtime only)",
                 "darwin64": "built; not run (no macOS machine in the tests)",
                 "aarch64-linux": "built; not run (no AArch64 machine in the tests)"}


def native_requirements(platforms: list[str] | None = None) -> str:
    """What a machine needs to run a native FMU (HTML): nothing beyond the C runtime."""
    from mechfmu.fmu.native import PLATFORMS
    rows = [f"<li><b>{_e(PLATFORMS[folder].description)}</b> (<code>binaries/{_e(folder)}</code>). Tested: "
            f"{_e(TESTED_NATIVE[folder])}.</li>" for folder in platforms or list(PLATFORMS)]
    return f"""<p>The model is compiled C: it needs no Python and nothing else installed, only the system's C
runtime (libc and libm; on Windows the Universal C Runtime, part of Windows 10 and later).</p>
<ul>
{chr(10).join(rows)}
</ul>"""


def host_requirements(runtime: dict[str, str] | None, platforms: list[str] | None = None) -> str:
    """What a machine needs to run the FMU (HTML), for the FMU's page and the README's wording; ``runtime``
    None: a native FMU."""
    from mechfmu.fmu.native import PLATFORMS
    if runtime is None:
        return native_requirements(platforms)
    version_ = runtime["version"]
    rows = []
    for folder in platforms or list(PLATFORMS):
        platform = PLATFORMS[folder]
        rows.append(f"<li><b>{_e(platform.description)}</b> (<code>binaries/{_e(folder)}</code>): Python "
                    f"{_e(version_)}'s <code>{_e(platform.library_name(version_))}</code>. Tested: "
                    f"{_e(TESTED[folder])}.</li>")
    return f"""<p>The model runs in <b>Python {_e(version_)}</b> (CPython) and uses its standard library only: no
packages need to be installed; pythonfmu's runtime is inside the FMU (<code>resources/</code>).</p>
<ul>
{chr(10).join(rows)}
</ul>
<ul>
<li>In a <b>Python host</b> (fmpy, libcosimpy, a Python script) the host's own interpreter runs the model,
also if it is linked statically (Debian's <code>python3</code>); no second interpreter is loaded. A host of
another Python version runs it with a warning.</li>
<li>In <b>any other host</b> (OpenModelica's OMSimulator and OMEdit, Dymola, Simulink, the FMI compliance
checker, a C/C++ program) the FMU loads Python {_e(version_)}'s library itself; no preload is needed. It looks in
the file or folder named by the environment variable <code>MECHFMU_PYTHON</code>, then where Python's installers
put it: Linux: the library search path (Debian/Ubuntu: the package <code>libpython{_e(version_)}</code>; a
Python built from source needs <code>--enable-shared</code>); Windows: beside the host's program, on
<code>PATH</code>, and the installs registered by python.org's installer (per user and for all users); macOS:
python.org's framework, Homebrew's <code>python@{_e(version_)}</code>, MacPorts, pyenv (with
<code>--enable-shared</code>). Without it, <code>fmi2Instantiate</code> fails with a message that lists where it
looked and what to install.</li>
</ul>"""


def fmu_documentation(model: str, cls: type[Component], runtime: dict[str, str] | None, build_hash: str,
                      platforms: list[str] | None = None) -> str:
    """The HTML page for the FMU of component class ``cls`` (model identifier ``model``); ``runtime`` None: the
    component's native law (C, no Python)."""
    try:
        mechfmu_version = version("mechfmu")
    except PackageNotFoundError:  # running from a source tree that is not installed
        mechfmu_version = "unknown"
    inputs, states = input_rows(cls), state_rows(cls)
    interfaces = (f"Co-simulation only: {_e(cls.co_simulation_only)}." if cls.co_simulation_only else
                  "Co-simulation and Model Exchange, one <code>modelIdentifier</code>: <code>fmi2Instantiate</code>'s "
                  f"<code>fmuType</code> selects. Model Exchange: {len(cls.continuous_states)} continuous states, "
                  f"{len(cls.indicator_names())} event indicators (the <code>indicator.*</code> outputs), time events "
                  "through <code>nextEventTime</code>; no evaluation has a side effect; a call outside FMI 2.0's "
                  "Model Exchange state machine, a wrong number of states or indicators, a non-finite state or a time "
                  "before the last event or completed integrator step is refused with <code>fmi2Error</code>, the "
                  "instance unchanged.")
    sections = [
        f"<h1>{_e(model)}</h1>\n<p>{_e(cls.description)}</p>",
        f"<p><b>Physics from:</b> {_e(cls.source)}.<br><b>Built by</b> mechfmu {_e(mechfmu_version)} "
        f"(build {_e(build_hash)}) "
        + ("as native code (the component's law in C); FMI 2.0 " if runtime is None else
           f"with pythonfmu 0.7.0 for Python {_e(runtime['version'])}; FMI 2.0 ")
        + ("co-simulation.</p>" if cls.co_simulation_only else "co-simulation and model exchange.</p>"),
        f"<h2>Law</h2>\n<pre>{_e(law(cls))}</pre>",
        f"<h2>Modelica equivalent</h2>\n{modelica_equivalents(cls)}",
        "<h2>Parameters</h2>\n<p>Fixed parameters: set them before <code>fmi2ExitInitializationMode</code>. "
        "A value outside its range is refused at once (<code>fmi2SetReal</code> returns <code>fmi2Error</code>); "
        "rules between parameters and user-function expressions are checked when initialization ends.</p>\n"
        + _table(PARAMETER_HEADER, parameter_rows(cls)),
        "<h2>Inputs</h2>\n" + (_table(INPUT_HEADER, inputs) if inputs else "<p>none</p>"),
        "<h2>Outputs</h2>\n<p>“Depends on” lists the inputs an output feeds through within a step "
        "(the modelDescription's dependencies); “state only” outputs change only in <code>fmi2DoStep</code>.</p>\n"
        + _table(OUTPUT_HEADER, output_rows(cls)),
        "<h2>Continuous states (Model Exchange)</h2>\n" + (_table(STATE_HEADER, states) if states
                                                             else "<p>none</p>"),
        f"<h2>Ports and sign convention</h2>\n<p>{_e(SIGN_CONVENTION)}</p>",
        "<h2>Errors</h2>\n<p>Every error names the component, the variable and the value, and reaches the "
        "host through the FMI logger whatever <code>loggingOn</code> says; the call that finds it returns "
        "<code>fmi2Error</code> and leaves the instance unchanged: a value out of range or not finite, a parameter "
        "after initialization, an unknown value reference or one of another type, a call the FMI 2.0 state machine "
        "does not allow in the current state, a NULL pointer, an FMU state this instance did not hand out (or "
        "already freed), a serialized state that is not a complete valid state of this component, a step whose "
        "time is not the instance's current time or whose size is not finite and positive. Reading a non-finite "
        "output (e.g. after inputs of 1e308) returns <code>fmi2Error</code>. A step the component cannot take "
        "(e.g. a user function that fails at the current inputs) returns <code>fmi2Discard</code> with the reason "
        "logged. After <code>fmi2Fatal</code> every call but <code>fmi2FreeInstance</code> is refused.</p>",
        f"<h2>FMI interfaces</h2>\n<p>{interfaces}</p>",
        "<h2>FMI capabilities</h2>\n<p>Co-simulation with any communication step; "
        "<code>canGetAndSetFMUstate</code> and <code>canSerializeFMUstate</code> (every hidden state included, "
        f"so a master can repeat steps); <code>providesDirectionalDerivative</code>: {directional(cls)}; no input "
        "derivatives.</p>",
        "<h2>What the host machine needs</h2>\n" + host_requirements(runtime, platforms),
    ]
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{_e(model)}</title>\n'
            f"<style>{_STYLE}</style>\n</head>\n<body>\n" + "\n".join(sections) + "\n</body>\n</html>\n")
