"""Each FMU carries documentation/index.html generated from its component: every model variable has
a row with its unit, start value and a description; the law, the source system, the sign convention
and what the host machine needs are on the page."""
import sys
import sysconfig
import zipfile
from html.parser import HTMLParser

import pytest
from fmpy import read_model_description
from mechfmu.components import COMPONENTS
from mechfmu.components.base import SIGN_CONVENTION

from mechfmu.fmu.build import fmu_backend
from mechfmu.fmu.native import PLATFORMS


class Rows(HTMLParser):
    """Table rows by id: {id: [cell text, ...]}, and the page's text."""

    def __init__(self):
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.text: list[str] = []
        self._row: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr" and dict(attrs).get("id"):
            self._row = dict(attrs)["id"]
            self.rows[self._row] = []
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[self._row].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_every_variable_is_documented(fmus, model):
    check_documentation(fmus[model], COMPONENTS[model])


def check_documentation(fmu, cls) -> None:
    model = cls.__name__
    with zipfile.ZipFile(fmu) as zf:
        page = zf.read("documentation/index.html").decode("utf-8")
    md = read_model_description(str(fmu))
    parser = Rows()
    parser.feed(page)
    documented = parser.rows
    for v in md.modelVariables:
        assert v.name in documented, f"{model}: {v.name} has no row"
        cells = documented[v.name]
        assert cells[0] == v.name
        assert v.description and cells[-1] == v.description, (model, v.name)  # same text as the modelDescription
        unit = v.unit or (v.declaredType.unit if v.declaredType else None)
        if v.causality == "parameter":
            assert cells[1] == v.type
            assert cells[2] == (unit or ""), (model, v.name)
            start = {"true": "true", "false": "false"}.get(str(v.start).lower(), None) if v.type == "Boolean" else None
            if v.type == "Real":
                assert float(cells[3]) == float(v.start), (model, v.name)
            elif start is not None:
                assert cells[3] == start
        else:
            assert cells[1] == (unit or ""), (model, v.name)
    assert set(documented) == {v.name for v in md.modelVariables}
    text = " ".join(" ".join(parser.text).split())
    law = sys.modules[cls.__module__].__doc__.strip().splitlines()[0]
    assert law in text
    assert cls.source and cls.source in text
    assert SIGN_CONVENTION in text
    version = sysconfig.get_config_var("VERSION")
    with zipfile.ZipFile(fmu) as zf:  # each platform the FMU holds, what it needs there, and only those
        folders = {name.split("/")[1] for name in zf.namelist() if name.startswith("binaries/")}
    if fmu_backend(fmu) == "native":  # the component's law in C: no Python anywhere
        assert "it needs no Python" in text and "libpython" not in text, model
        for folder in PLATFORMS:
            assert (f"binaries/{folder} ). Tested:" in text) == (folder in folders), (model, folder)
    else:
        assert f"Python {version}" in text and f"libpython{version}.so.1.0" in text
        for folder in PLATFORMS:
            listed = f"binaries/{folder} ): Python {version}'s {PLATFORMS[folder].library_name(version)} . Tested:"
            assert (listed in text) == (folder in folders), (model, folder)
    for output in md.outputs:  # feed-through as declared in ModelStructure (its inputs; the states are not)
        deps = {d.name for d in output.dependencies or () if d.causality == "input"}
        cell = documented[output.variable.name][2]
        assert (cell == "state only") if not deps else all(d in cell for d in deps)
