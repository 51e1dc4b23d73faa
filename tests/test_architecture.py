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
