"""The component reference, generated at build time from the component declarations.

``{mechfmu-components}`` (a directive in a Markdown page) becomes one section per model of
``mechfmu.components.COMPONENTS``: its description, the system its physics comes from, its law (the module
docstring), and tables of its parameters (type, unit, default, range), inputs (unit, start value), outputs
(unit, feed-through) and Model Exchange states. The rows are ``mechfmu.fmu.documentation``'s, the same as each
FMU's ``documentation/index.html``; each table row carries the id ``MODEL.VARIABLE``.
"""
from __future__ import annotations

from docutils import nodes
from mechfmu.components import COMPONENTS
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from mechfmu.fmu import documentation as doc


def _cell(cell: doc.Cell) -> nodes.entry:
    paragraph = nodes.paragraph()
    for fragment in cell:
        paragraph += nodes.literal(fragment, fragment) if isinstance(fragment, doc.Code) else nodes.Text(fragment)
    return nodes.entry("", paragraph)


def _table(model: str, header: tuple[str, ...], rows: list[doc.Row]) -> nodes.table:
    group = nodes.tgroup(cols=len(header))
    group += [nodes.colspec(colwidth=1) for _ in header]
    head = nodes.row()
    head += [nodes.entry("", nodes.paragraph(text=h)) for h in header]
    group += nodes.thead("", head)
    body = nodes.tbody()
    for name, cells in rows:
        row = nodes.row(ids=[f"{model}.{name}"])
        row += [_cell(c) for c in cells]
        body += row
    group += body
    return nodes.table("", group, classes=["mechfmu-variables"])


class ComponentReference(SphinxDirective):
    """One section per component, in the order of the model names."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return [self._section(model, cls) for model, cls in sorted(COMPONENTS.items())]

    def _section(self, model: str, cls: type) -> nodes.section:
        section = nodes.section(ids=[nodes.make_id(f"component-{model}")], names=[nodes.fully_normalize_name(model)])
        section += nodes.title(model, model)
        section += nodes.paragraph(text=cls.description)
        physics = nodes.paragraph()
        physics += [nodes.strong(text="Physics from: "), nodes.Text(f"{cls.source}.")]
        section += physics
        interfaces = (f"FMI 2.0 co-simulation only: {cls.co_simulation_only}." if cls.co_simulation_only else
                      f"FMI 2.0 co-simulation and Model Exchange ({len(cls.continuous_states)} continuous states, "
                      f"{len(cls.indicator_names())} event indicators).")
        section += nodes.paragraph(text=interfaces)
        tables = [("Law", None), ("Parameters", (doc.PARAMETER_HEADER, doc.parameter_rows(cls))),
                  ("Inputs", (doc.INPUT_HEADER, doc.input_rows(cls))),
                  ("Outputs", (doc.OUTPUT_HEADER, doc.output_rows(cls))),
                  ("Continuous states (Model Exchange)", (doc.STATE_HEADER, doc.state_rows(cls)))]
        for title, table in tables:
            section += nodes.rubric(text=title)
            if table is None:
                section += nodes.literal_block(text=doc.law(cls))
            elif table[1]:
                section += _table(model, *table)
            else:
                section += nodes.paragraph(text="none")
        return section


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("mechfmu-components", ComponentReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
