"""The structure the documentation's architecture page describes, kept true: mechfmu's rooms (subpackages) in
layers, each importing only from itself and the layers below it; no import cycle among our modules, counting
every import (module level, ``TYPE_CHECKING`` blocks and function bodies); modules of a readable size; every
component complete for the generic tests."""
import ast
import re
from pathlib import Path

from mechfmu.components import COMPONENTS

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"mechfmu": ROOT / "mechfmu", "mechfmu.components": ROOT / "components"}
MAX_LINES = 360
#: modules allowed to be longer, and why (none: the longest law, CoordinateSpringDamperExt's, is two modules)
LONGER: dict[str, str] = {}
#: the rooms, lowest first: a room imports from itself and the rooms before it only ("mechfmu": the package's
#: own __init__, its version and lazy names)
LAYERS = ["mechfmu", "components", "fmu", "ssp", "validation", "master", "model", "studies", "crosscheck", "drawing",
          "cli"]


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Our modules that ``name`` imports anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            targets.update({module} | {f"{module}.{a.name}" for a in node.names})
        elif isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
    return {t for t in targets if t in known and t != name}


def room(module: str) -> str:
    """The room a module belongs to: mechfmu's subpackage (``components``, ``ssp``, ``validation``, ...)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "mechfmu"


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def test_no_import_cycle():
    edges = graph()
    state: dict[str, str] = {}

    def visit(node, path):
        state[node] = "open"
        for target in edges[node]:
            assert state.get(target) != "open", "import cycle: " + " -> ".join(path + [target])
            if target not in state:
                visit(target, path + [target])
        state[node] = "done"

    for node in edges:
        if node not in state:
            visit(node, [node])
    # the check sees imports at module level, in TYPE_CHECKING blocks and in function bodies
    assert edges["mechfmu.master.simulate"] >= {"mechfmu.master.algorithms", "mechfmu.master.result"}
    assert "mechfmu.master.result" in edges["mechfmu.master.observers"]  # TYPE_CHECKING and a function body
    assert "mechfmu.master.simulate" in edges["mechfmu.model.system"]  # a function body


def test_rooms_import_only_from_their_layer_and_below():
    wrong = [f"{module} ({room(module)}) imports {target} ({room(target)})"
             for module, targets in graph().items() for target in targets
             if LAYERS.index(room(target)) > LAYERS.index(room(module))]
    assert {room(m) for m in modules()} == set(LAYERS), "every room has a layer"
    assert wrong == [], "\n".join(wrong)


NATIVE = ROOT / "components" / "native"


def native_includes() -> dict[str, set[str]]:
    """Each file of the native folder and the files of that folder it includes (``#include "x.h"``)."""
    found = {}
    for path in sorted(NATIVE.glob("*.[ch]")):
        named = set(re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.MULTILINE))
        found[path.name] = {name for name in named if (NATIVE / name).is_file()}
    return found


def test_the_native_code_is_in_layers():
    """The runtime knows no FMI version and the model knows neither the runtime's calls nor FMI: an FMI header is
    included by a glue layer only, and no include circle."""
    includes = native_includes()
    for path in NATIVE.glob("*.[ch]"):
        fmi_headers = re.findall(r'#\s*include\s+"(fmi[23]\w*\.h)"', path.read_text())
        glue = re.fullmatch(r"fmi[23]_functions\.c", path.name)
        assert glue or not fmi_headers, f"{path.name} includes {fmi_headers}: only a glue layer speaks FMI"
    assert includes["text.h"] == includes["runtime.h"] == set(), includes
    for name, included in includes.items():
        if name.startswith("fmi"):
            assert "model.h" not in included, f"{name} (a glue layer) reaches into the model"
        elif name not in ("runtime.c", "python_runtime.c"):
            assert "runtime.h" not in included, f"{name} (model code) calls the runtime's FMI-facing calls"

    def reach(name: str, seen: tuple[str, ...]) -> None:
        for child in includes.get(name, ()):
            assert child not in seen, f"include circle: {' -> '.join((*seen, child))}"
            reach(child, (*seen, child))

    for name in includes:
        reach(name, (name,))


def native_links(tmp_path: Path) -> dict[str, set[str]]:
    """Each C file of the native folder (and the generated class table) and the files whose functions or data it
    uses, from the symbols of its object file (``nm``): the Python runtime, which gives the same calls as runtime.c,
    is left out."""
    import shutil
    import subprocess

    from conftest import HEADERS, unavailable
    from mechfmu.fmu import native_tables
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    nm = shutil.which("nm")
    if not (compiler and nm):
        unavailable("a C compiler and nm (binutils) are needed to read the native code's links")
    sources = [*native_tables.write(tmp_path), *(p for p in sorted(NATIVE.glob("*.c")) if p.name != "python_runtime.c")]
    def symbols_of(source: Path) -> list[list[str]]:
        target = tmp_path / f"{source.stem}.o"
        subprocess.run([str(compiler), "-c", "-DMECHFMU_NATIVE", f"-I{NATIVE}", f"-I{tmp_path}", f"-I{HEADERS}",
                        "-o", str(target), str(source)], check=True)
        return [line.split() for line in subprocess.run([str(nm), str(target)], capture_output=True, text=True,
                                                        check=True).stdout.splitlines()]

    from concurrent.futures import ThreadPoolExecutor
    defined, used = {}, {}
    with ThreadPoolExecutor() as pool:
        compiled = list(pool.map(symbols_of, sources))
    for source, symbols in zip(sources, compiled):
        defined[source.name] = {s[2] for s in symbols if len(s) == 3 and s[1] in "TDRBC"}
        used[source.name] = {s[1] for s in symbols if len(s) == 2 and s[0] == "U"}
    owner = {symbol: name for name, symbols in defined.items() for symbol in symbols}
    return {name: {owner[s] for s in symbols if s in owner} - {name} for name, symbols in used.items()}


def test_the_native_code_links_in_layers(tmp_path):
    """No two files use each other, even through others: the laws and what they share use the model's services
    (model.c) and text.c, never the runtime or a glue layer; the runtime no glue layer."""
    links = native_links(tmp_path)
    assert links["text.c"] == links["platform.c"] == set(), links
    assert links["model.c"] <= {"text.c"}, links["model.c"]
    runtime_side = {"runtime.c", "fmi2_functions.c", "fmi3_functions.c", "glue.c", "platform.c"}
    for name, targets in links.items():
        if name not in runtime_side:
            assert not targets & runtime_side, f"{name} (model code) uses {sorted(targets & runtime_side)}"
    assert not links["runtime.c"] & {"fmi2_functions.c", "fmi3_functions.c"}, links["runtime.c"]

    def reach(name: str, path: tuple[str, ...]) -> None:
        for target in links.get(name, ()):
            assert target not in path, f"a circle of uses: {' -> '.join((*path, target))}"
            reach(target, (*path, target))

    for name in links:
        reach(name, (name,))


def test_modules_stay_readable():
    for path in modules().values():
        relative = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text().splitlines())
        assert lines <= MAX_LINES or relative in LONGER, f"{relative}: {lines} lines"


def test_every_component_is_complete_for_the_generic_tests():
    for name, cls in COMPONENTS.items():
        assert cls.description and cls.source, name
        assert cls.example_parameters or not cls.parameters, f"{name}: example_parameters drive the generic FMU tests"
        assert set(cls.example_parameters) <= {p.name for p in cls.parameters}, name


#: what the project's own text (code, tests, docs, configuration, scenarios) never names: its tracker's issue
#: numbers, and documents outside the repository (their sections, the numbered seed documents the elements were
#: first specified in): a reader of the project has none of them; the patterns are split so this file passes
FOREIGN = re.compile("issue" r"s?\s*#?\d+|\.\./" "shared|DESIGN" r"\.md|REFERENCES" r"(\.md|\s*§|\s+pitfall)|\bseed"
                     r"(\s+\d{3}\b|'s\b|\s+text)", re.IGNORECASE)
SKIPPED = {".git", ".venv", "build", "fmus", "results", "__pycache__", ".pytest_cache", "mechfmu.egg-info"}


def project_texts() -> list[Path]:
    texts = [ROOT / ".ci" / "run"]
    for path in ROOT.rglob("*"):
        if not SKIPPED & set(path.relative_to(ROOT).parts) and path.suffix in (".py", ".md", ".c", ".h", ".toml", ".ssd"):
            texts.append(path)
    return texts


def test_the_project_speaks_of_itself_alone():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in project_texts()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if FOREIGN.search(line)]
    assert len(project_texts()) > 100 and found == [], "\n".join(found)
