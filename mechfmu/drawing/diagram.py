"""A scenario's system as an SVG diagram: components as blocks with their ports, connections as wires.

Blocks are told apart by category (``mechfmu.drawing.ports``: bodies with rounded corners, connectors with a
spring mark beneath, sources with a ground hatch) and ports by kind (translational and rotational flanges, 3D frames,
signals); a legend explains both, and a table lists the parameter values the scenario sets, which also show on
hovering a block (its SVG ``<title>``). The file is plain SVG written with the standard library, the same bytes
for the same scenario (no dates, no ids), text as text, at most 1,200 px wide (``mechfmu.drawing.layout.MAX_WIDTH``:
long rows of blocks wrap into bands). Each component is one
``<g class="component" data-name=.. data-model=.. data-category=..>`` holding its ports
(``<g class="port" data-port=.. data-variables=..>``), each SSD connection one
``<g class="connection" data-start="component.variable" data-end="component.variable">`` inside the
``<g class="bundle">`` of the wires that join the same two ports.
"""
from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from mechfmu.drawing.layout import RIGHT_MARGIN, Bundle, bundles, layout, path_data
from mechfmu.drawing.ports import (
    BODY,
    CONNECTOR,
    FRAME,
    OTHER,
    ROTATIONAL_FLANGE,
    SIGNAL,
    SOURCE,
    TRANSLATIONAL,
    Block,
    Port,
    blocks,
    description,
    port_name,
)
from mechfmu.ssp.files import replaced

#: category -> fill, stroke, corner radius, what it means
CATEGORY_STYLE = {
    BODY: ("#dbe8f7", "#1f4e79", 12, "body: integrates the loads on it (Mass, Inertia, RigidBody)"),
    CONNECTOR: ("#fdebd3", "#b45f06", 0, "connector: a force from the motion of its ports (spring-damper, gap, "
                                         "friction, contact, constraint, rod)"),
    SOURCE: ("#e2f0d9", "#38761d", 0, "source or boundary: a prescribed motion, force or signal"),
    OTHER: ("#eeeeee", "#666666", 4, "an FMU that is not a mechfmu model"),
}
#: port kind -> colour, what it is
PORT_STYLE = {
    TRANSLATIONAL: ("#2e7d32", "translational flange (s, v one way, f back)"),
    ROTATIONAL_FLANGE: ("#4e342e", "rotational flange (angle, speed one way, torque back)"),
    FRAME: ("#6a1b9a", "3D frame (world-frame vectors: position, orientation, velocities; force, torque back)"),
    SIGNAL: ("#1565c0", "signal (the triangles point the way it flows)"),
}
FONT = "Helvetica, Arial, sans-serif"
CARD_WIDTH, LINE = 250.0, 14.0


def _number(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attributes: Any) -> ET.Element:
    element = ET.SubElement(parent, tag, {k.rstrip("_").replace("__", "-").replace("_", "-"): str(v)
                                          for k, v in attributes.items()})
    if text is not None:
        element.text = text
    return element


def value_text(value: Any) -> str:
    """A parameter value as the SSD gives it: exact (a float's shortest round-trip form, 5.0 as 5)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def parameter_lines(block: Block) -> list[str]:
    """``name = value unit`` of each parameter the scenario sets, in the SSD's order."""
    return [f"{name} = {value_text(value)} {block.units.get(name, '') if block.units.get(name) != '1' else ''}".rstrip()
            for name, value in block.parameters.items()]


def _port_shape(parent: ET.Element, port: Port) -> None:
    colour = PORT_STYLE[port.kind][0]
    fill = "#ffffff" if port.free else colour
    if port.kind == TRANSLATIONAL:
        _sub(parent, "rect", x=-5, y=-5, width=10, height=10, fill=fill, stroke=colour, stroke_width=1.5)
    elif port.kind == ROTATIONAL_FLANGE:
        _sub(parent, "circle", r=5.5, fill=fill, stroke=colour, stroke_width=1.5)
    elif port.kind == FRAME:
        _sub(parent, "polygon", points="0,-6.5 6.5,0 0,6.5 -6.5,0", fill=fill, stroke=colour, stroke_width=1.5)
    else:  # a signal: a triangle pointing the way it flows (an input's into the block, an output's out of it)
        rightwards = (port.nominal == "left") == (port.side == "left")  # a signal's nominal side: left for an input
        _sub(parent, "polygon", points="-5,-6 6,0 -5,6" if rightwards else "5,-6 -6,0 5,6", fill=fill,
             stroke=colour, stroke_width=1.5)


def _component(parent: ET.Element, block: Block, model_text: str) -> None:
    fill, stroke, radius, _ = CATEGORY_STYLE[block.category]
    group = _sub(parent, "g", class_="component", data_name=block.name, data_model=block.model,
                 data_category=block.category)
    _sub(group, "title", "\n".join([f"{block.name}: {block.model} ({block.category})", " ".join(model_text.split()),
                                    *(parameter_lines(block) or ["(every parameter at its default)"])]))
    _sub(group, "rect", class_="block", x=_number(block.x), y=_number(block.y), width=_number(block.width),
         height=_number(block.height), rx=radius, fill=fill, stroke=stroke, stroke_width=2 if block.category == BODY
         else 1.5)
    middle = block.x + block.width / 2
    _sub(group, "text", block.name, x=_number(middle), y=_number(block.y + 16), text_anchor="middle",
         font_size=13, font_weight="bold")
    _sub(group, "text", block.model, x=_number(middle), y=_number(block.y + 29), text_anchor="middle",
         font_size=10.5, font_style="italic", fill="#333333")
    bottom = block.y + block.height
    if block.category == CONNECTOR:  # a spring's zigzag under the block
        zigzag = " ".join(f"{middle - 18 + 6 * i:.1f},{bottom + 7 + (0 if i in (0, 6) else 4 if i % 2 else -4):.1f}"
                          for i in range(7))
        _sub(group, "polyline", points=zigzag, fill="none", stroke=stroke, stroke_width=1.2)
    elif block.category == SOURCE:  # a ground's hatch under the block
        for i in range(int(block.width // 12)):
            x = block.x + 6 + 12 * i
            _sub(group, "line", x1=_number(x), y1=_number(bottom), x2=_number(x - 6), y2=_number(bottom + 6),
                 stroke=stroke, stroke_width=1)
    for port in block.ports.values():
        _port(group, block, port)


def _port(parent: ET.Element, block: Block, port: Port) -> None:
    group = _sub(parent, "g", class_="port", data_port=port.name, data_kind=port.kind, data_side=port.side,
                 data_variables=" ".join(port.variables), transform=f"translate({_number(port.x)},{_number(port.y)})")
    inputs = _inputs(block)
    _sub(group, "title", f"{block.name}.{port.name}: {PORT_STYLE[port.kind][1]}"
         + (" (free: left unconnected on purpose)" if port.free else "")
         + "".join(f"\n{v} ({'in' if v in inputs else 'out'})" for v in port.variables))
    _port_shape(group, port)
    inward = 9 if port.side == "left" else -9
    _sub(group, "text", port.name + (" (free)" if port.free else ""), x=inward, y=3.5, font_size=9.5,
         text_anchor="start" if port.side == "left" else "end", fill="#222222")


def _inputs(block: Block) -> set[str]:
    from mechfmu.components import COMPONENTS
    cls = COMPONENTS.get(block.model)
    return {i.name for i in cls.inputs} if cls else set()


def _wire(parent: ET.Element, blocks_: dict[str, Block], wire: Bundle) -> None:
    (a, pa), (b, pb) = wire.ends
    kind = blocks_[a].ports[pa].kind
    colour = PORT_STYLE[kind][0]
    group = _sub(parent, "g", class_="bundle", data_ends=f"{a}.{pa} {b}.{pb}", fill="none", stroke=colour,
                 stroke_width=2 if kind != SIGNAL else 1.5)
    _sub(group, "title", "\n".join(str(c) for c in wire.connections))
    for c in wire.connections:
        forward = (c.source, port_name(c.source_variable)) == (a, pa)
        route = wire.route if forward else wire.route[::-1]
        connection = _sub(group, "g", class_="connection", data_start=f"{c.source}.{c.source_variable}",
                          data_end=f"{c.target}.{c.target_variable}")
        _sub(connection, "title", str(c) + (f" (x {c.factor:g} + {c.offset:g})" if (c.factor, c.offset) != (1, 0)
                                              else ""))
        _sub(connection, "path", d=path_data(route))


def _legend(parent: ET.Element, top: float, categories: list[str]) -> float:
    group = _sub(parent, "g", class_="legend", font_size=11)
    y = top
    for name in categories:
        fill, stroke, radius, meaning = CATEGORY_STYLE[name]
        _sub(group, "rect", x=20, y=_number(y), width=26, height=14, rx=radius / 3, fill=fill, stroke=stroke)
        _sub(group, "text", meaning, x=54, y=_number(y + 11))
        y += 20
    for kind, (colour, meaning) in PORT_STYLE.items():
        shape = _sub(group, "g", transform=f"translate(33,{_number(y + 7)})")
        _port_shape(shape, Port(kind, kind))
        _sub(group, "line", x1=40, y1=_number(y + 7), x2=48, y2=_number(y + 7), stroke=colour, stroke_width=2)
        _sub(group, "text", meaning, x=54, y=_number(y + 11))
        y += 20
    _sub(group, "text", "a hollow port is left unconnected on purpose; hover over a block, port or wire for its "
         "details", x=20, y=_number(y + 11), fill="#555555")
    return y + 26


def _table(parent: ET.Element, blocks_: dict[str, Block], top: float, width: float) -> float:
    """One card per component with the parameter values the scenario sets."""
    group = _sub(parent, "g", class_="parameters", font_size=10.5)
    _sub(group, "text", "parameters set by the scenario (others at their defaults)", x=20, y=_number(top + 12),
         font_size=12, font_weight="bold")
    per_row = max(1, int((width - 20) // CARD_WIDTH))
    y, row_height = top + 22, 0.0
    for i, block in enumerate(blocks_.values()):
        if i and i % per_row == 0:
            y, row_height = y + row_height + 8, 0.0
        x = 20 + (i % per_row) * CARD_WIDTH
        lines = parameter_lines(block) or ["(defaults)"]
        card = _sub(group, "g", class_="parameter-table", data_name=block.name)
        _sub(card, "rect", x=_number(x), y=_number(y), width=CARD_WIDTH - 10, height=_number(20 + LINE * len(lines)),
             fill="#fafafa", stroke=CATEGORY_STYLE[block.category][1], stroke_width=0.8)
        _sub(card, "text", f"{block.name} ({block.model})", x=_number(x + 6), y=_number(y + 14), font_weight="bold")
        for k, line in enumerate(lines):
            shown = line if len(line) <= 40 else line[:39] + "\u2026"
            _sub(card, "text", shown, x=_number(x + 6), y=_number(y + 14 + LINE * (k + 1)))
        row_height = max(row_height, 20 + LINE * len(lines))
    return y + row_height + 16


def system_svg(scenario) -> str:
    """The SVG text of a scenario's system diagram (module docstring)."""
    from mechfmu.components import COMPONENTS
    found = blocks(scenario)
    wires = bundles(scenario)
    about = description(scenario)
    lines = textwrap.wrap(about, 130) if about else []
    top = 56 + LINE * len(lines)
    bottom = layout(found, wires, top=top)
    width = max([b.x + b.width + RIGHT_MARGIN for b in found.values()] + [3 * CARD_WIDTH + 40, 640])
    root = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "version": "1.1", "font-family": FONT})
    _sub(root, "title", f"{scenario.name}: system diagram")
    if about:
        _sub(root, "desc", about)
    _sub(root, "rect", class_="background", width="100%", height="100%", fill="#ffffff")
    header = _sub(root, "g", class_="header")
    _sub(header, "text", scenario.name, x=20, y=26, font_size=17, font_weight="bold")
    for i, line in enumerate(lines):
        _sub(header, "text", line, x=20, y=_number(44 + LINE * i), font_size=11, fill="#333333")
    _sub(header, "text", f"from {scenario.start_time:g} s to {scenario.stop_time:g} s, step {scenario.step_size:g} s, "
         f"algorithm {scenario.algorithm}; {len(found)} components, {len(scenario.connections)} connections",
         x=20, y=_number(44 + LINE * len(lines)), font_size=11, fill="#555555")
    wires_group = _sub(root, "g", class_="wires")
    for wire in wires:
        _wire(wires_group, found, wire)
    components = _sub(root, "g", class_="components")
    for block in found.values():
        cls = COMPONENTS.get(block.model)
        _component(components, block, cls.description if cls else "")
    categories = [c for c in (BODY, CONNECTOR, SOURCE, OTHER) if c != OTHER or any(b.category == OTHER
                                                                                  for b in found.values())]
    end = _table(root, found, _legend(root, bottom + 16, categories), width)
    root.set("width", _number(width))
    root.set("height", _number(end))
    root.set("viewBox", f"0 0 {_number(width)} {_number(end)}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def draw_scenario(scenario_or_path, path: str | Path) -> Path:
    """Write the system diagram of a scenario (a ``Scenario`` or a folder, .ssd or .ssp) to ``path`` (.svg)."""
    from mechfmu.drawing.plot import checked_suffix
    from mechfmu.ssp.scenario import Scenario, load_scenario
    target = Path(checked_suffix(str(path), "diagram", (".svg",)))
    scenario = scenario_or_path if isinstance(scenario_or_path, Scenario) else load_scenario(scenario_or_path,
                                                                                            check=False)
    text = system_svg(scenario)
    with replaced(target) as temporary:
        temporary.write_text(text, encoding="utf-8")
    return target
