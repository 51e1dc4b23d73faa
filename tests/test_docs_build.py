"""The documentation site builds with the one command the README gives, warnings as errors, and its component
reference (generated at build time) holds every model of COMPONENTS with every declared variable and its unit."""
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from mechfmu.components import COMPONENTS

pytestmark = pytest.mark.slow  # a whole Sphinx build: about 5 s

ROOT = Path(__file__).resolve().parent.parent


class Page(HTMLParser):
    """Table rows by id ({id: [cell text, ...]}) and section headings by section id."""

    def __init__(self):
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.headings: dict[str, str] = {}
        self._row: str | None = None
        self._cell: list[str] | None = None
        self._section: str | None = None
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "section" and attributes.get("id"):
            self._section = attributes["id"]
        elif tag in ("h1", "h2") and self._section is not None:
            self._heading = []
        elif tag == "tr" and attributes.get("id"):
            self._row = attributes["id"]
            self.rows[self._row] = []
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[self._row].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag in ("h1", "h2") and self._heading is not None:
            self.headings[self._section] = "".join(self._heading).replace("¶", "").strip()
            self._heading = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._heading is not None:
            self._heading.append(data)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html")
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "docs", str(out)],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "WARNING" not in build.stderr and "ERROR" not in build.stderr, build.stderr
    return out


def test_every_page_is_built(site):
    pages = [p.relative_to(ROOT / "docs").with_suffix(".html") for p in (ROOT / "docs").rglob("*.md")
             if "_build" not in p.parts]
    assert len(pages) >= 15
    assert [p for p in pages if not (site / p).is_file()] == []
    index = (site / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{p.as_posix()}"' in index for p in pages if p.name != "index.html"), "a page not in the toctree"


def test_the_component_reference_holds_every_declaration(site):
    page = Page()
    page.feed((site / "component-reference.html").read_text(encoding="utf-8"))
    for model, cls in COMPONENTS.items():
        assert page.headings.get(f"component-{model.lower()}") == model
        for p in cls.parameters:
            cells = page.rows[f"{model}.{p.name}"]
            assert cells[:3] == [p.name, p.type, p.unit if p.type == "Real" else ""], (model, p.name, cells)
            if p.type == "Real":
                assert float(cells[3]) == float(p.default), (model, p.name, cells)
        for i in cls.inputs:
            cells = page.rows[f"{model}.{i.name}"]
            assert cells[:2] == [i.name, i.unit] and float(cells[2]) == i.start, (model, i.name, cells)
        for o in cls.outputs:
            cells = page.rows[f"{model}.{o.name}"]
            assert cells[:2] == [o.name, o.unit], (model, o.name, cells)
            assert cells[2] == "state only" if not o.depends_on else all(d in cells[2] for d in o.depends_on)
    declared = sum(len(c.parameters) + len(c.inputs) + len(c.outputs) for c in COMPONENTS.values())
    assert len(page.rows) >= declared


def test_the_api_reference_documents_the_user_functions(site):
    api = (site / "api.html").read_text(encoding="utf-8")
    for name in ("mechfmu.ssp.write_scenario", "mechfmu.ssp.export_ssp", "mechfmu.ssp.load_scenario",
                 "mechfmu.master.simulate.simulate", "mechfmu.master.result.Result", "mechfmu.model.system.System",
                 "mechfmu.model.system.System.connect"):
        assert f'id="{name}"' in api, name
