"""The structure the README's architecture section describes, kept true: no import cycle among our
modules, modules of a readable size, every component complete for the generic tests."""
import ast
import re
from pathlib import Path

from mechfmu.components import COMPONENTS

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"mechfmu": ROOT / "mechfmu", "mechfmu.components": ROOT / "components", "validation": ROOT / "validation"}
MAX_LINES = 360
#: modules allowed to be longer, and why
LONGER = {"components/coordinate_spring_damper_ext.py": "one law: Stribeck, bristle friction, limit stops, Exudyn's "
          "PostNewton state machine and the eight documented seed-vs-code differences, with its class"}


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
    """Our modules that ``name`` imports at module level (TYPE_CHECKING blocks and function bodies not)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    targets = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            targets.update({module} | {f"{module}.{a.name}" for a in node.names})
        elif isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
    return {t for t in targets if t in known and t != name}


def test_no_import_cycle():
    found = modules()
    graph = {name: imports(name, path, set(found)) for name, path in found.items()}
    state: dict[str, str] = {}

    def visit(node, path):
        state[node] = "open"
        for target in graph[node]:
            assert state.get(target) != "open", "import cycle: " + " -> ".join(path + [target])
            if target not in state:
                visit(target, path + [target])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])
    assert graph["mechfmu.master.simulate"] >= {"mechfmu.master.algorithms", "mechfmu.master.result", "mechfmu.master.coupled_system"}  # the check sees imports


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


#: what the project's own text (code, tests, docs, configuration) never names: its tracker's issue numbers, and
#: files outside the repository (a reader of the project has neither); the patterns are split so this file passes
FOREIGN = re.compile("issue" r"s?\s*#?\d+|\.\./" "shared|DESIGN" r"\.md|REFERENCES" r"\.md", re.IGNORECASE)
SKIPPED = {".git", ".venv", "build", "fmus", "results", "__pycache__", ".pytest_cache", "mechfmu.egg-info"}


def project_texts() -> list[Path]:
    texts = [ROOT / ".ci" / "run"]
    for path in ROOT.rglob("*"):
        if not SKIPPED & set(path.relative_to(ROOT).parts) and path.suffix in (".py", ".md", ".c", ".h", ".toml"):
            texts.append(path)
    return texts


def test_the_project_speaks_of_itself_alone():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in project_texts()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if FOREIGN.search(line)]
    assert len(project_texts()) > 100 and found == [], "\n".join(found)
