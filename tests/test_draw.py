"""Pictures of systems and results: ``mechfmu draw`` holds every component, connection and used port of the
scenario it draws, with the parameter values on hover; every model has a category; ``--plot`` shows the reference
and its tube; the gallery shows every shipped scenario."""
import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from mechfmu.components import COMPONENTS

from mechfmu.cli.main import main
from mechfmu.drawing.layout import MAX_WIDTH
from mechfmu.drawing.plot import coarsened, tube
from mechfmu.drawing.ports import BODY, CONNECTOR, OTHER, SOURCE, blocks, category
from mechfmu.ssp.scenario import ComponentSpec, Scenario, load_scenario
from mechfmu.validation.msl import read_msl_reference, tube_violation

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p.parent.relative_to(ROOT / "scenarios").as_posix()
                 for p in (ROOT / "scenarios").glob("**/SystemStructure.ssd"))
SVG = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"^(?P<name>\S+) = (?P<value>.+?)(?: (?P<unit>[^ ]+))?$")


def drawn(name: str, tmp_path: Path) -> ET.Element:
    target = tmp_path / f"{name.replace('/', '-')}.svg"
    assert main(["draw", str(ROOT / "scenarios" / name), "-o", str(target)]) == 0
    return ET.parse(target).getroot()


def groups(root: ET.Element, kind: str) -> list[ET.Element]:
    return [g for g in root.iter(SVG + "g") if g.get("class") == kind]


def translate(element: ET.Element) -> tuple[float, float]:
    x, y = re.fullmatch(r"translate\(([-\d.]+),([-\d.]+)\)", element.get("transform", "")).groups()
    return float(x), float(y)


def test_shipped_scenarios_are_twenty_five():
    assert len(SHIPPED) == 25 and sum(name.startswith("msl/") for name in SHIPPED) == 12, SHIPPED


def block_boxes(root: ET.Element) -> dict[str, tuple[float, float, float, float]]:
    """name -> (left, top, right, bottom) of each drawn block."""
    boxes = {}
    for group in groups(root, "component"):
        rect = group.find(SVG + "rect")
        left, top = float(rect.get("x")), float(rect.get("y"))
        boxes[group.get("data-name")] = (left, top, left + float(rect.get("width")), top + float(rect.get("height")))
    return boxes


def wire_points(path: str, samples: int = 40) -> list[tuple[float, float]]:
    """Points along a drawn wire: a cubic curve (``M p0 C p1 p2 p3``) sampled, a line's corners joined finely."""
    corners = [tuple(map(float, p.split(","))) for p in re.findall(r"[-\d.]+,[-\d.]+", path)]
    t = np.linspace(0.0, 1.0, samples)[:, None]
    if " C" in path:
        p0, p1, p2, p3 = (np.array(c) for c in corners)
        curve = (1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * p1 + 3 * (1 - t) * t ** 2 * p2 + t ** 3 * p3
        return [tuple(point) for point in curve]
    return [tuple(np.array(a) + s * (np.array(b) - np.array(a))) for a, b in zip(corners, corners[1:])
            for s in t[:, 0]]


def assert_drawn_completely(root: ET.Element, scenario) -> None:
    """Every component, connection and used port is drawn, each wire ends at its two ports and crosses no block."""
    components = {g.get("data-name"): g for g in groups(root, "component")}
    assert len(groups(root, "component")) == len(scenario.components)
    assert {n: g.get("data-model") for n, g in components.items()} == {
        n: spec.fmu.stem for n, spec in scenario.components.items()}
    drawn_connections = groups(root, "connection")
    assert Counter((g.get("data-start"), g.get("data-end")) for g in drawn_connections) == Counter(
        (f"{c.source}.{c.source_variable}", f"{c.target}.{c.target_variable}") for c in scenario.connections)
    boxes = block_boxes(root)
    for wire in drawn_connections:
        path = wire.find(SVG + "path").get("d")
        points = [tuple(map(float, p.split(","))) for p in re.findall(r"[-\d.]+,[-\d.]+", path)]
        crossed = {n for x, y in wire_points(path) for n, (left, top, right, bottom) in boxes.items()
                   if left + 1 < x < right - 1 and top + 1 < y < bottom - 1}
        assert not crossed, f"the wire {wire.get('data-start')} -> {wire.get('data-end')} crosses {crossed}"
        for (component, variable), end in zip((wire.get("data-start").split(".", 1),
                                               wire.get("data-end").split(".", 1)), (points[0], points[-1])):
            block = components[component]
            ports = [p for p in block.iter(SVG + "g") if p.get("class") == "port"
                     and variable in p.get("data-variables").split()]
            assert len(ports) == 1, f"{component}.{variable}: drawn on {len(ports)} ports"
            x, y = translate(ports[0])
            rect = block.find(SVG + "rect")
            left, top = float(rect.get("x")), float(rect.get("y"))
            assert x in (left, left + float(rect.get("width"))), f"{component}.{variable} is not on a side"
            assert top < y < top + float(rect.get("height")), f"{component}.{variable} is not on the block"
            assert end == pytest.approx((x, y), abs=0.06), f"the wire of {component}.{variable} misses its port"
    assert not [e.tag for e in root.iter() if "id" in e.attrib]  # nothing that could differ from run to run


@pytest.mark.parametrize("name", SHIPPED)
def test_a_drawing_holds_every_component_connection_and_port(name, tmp_path):
    scenario = load_scenario(ROOT / "scenarios" / name, check=False)
    root = drawn(name, tmp_path)
    assert_drawn_completely(root, scenario)
    assert float(root.get("width")) <= MAX_WIDTH


@pytest.mark.parametrize("masses", [3, 4, 10])
def test_a_long_chain_wraps_into_rows_no_wider_than_the_limit(masses, tmp_path):
    """A chain ground-spring-mass-spring-...-mass (2·masses + 1 blocks, one column each) wraps into bands of at most
    4 columns (1,200 px), each starting at the left margin; the wires between bands still join their ports."""
    from mechfmu.ssp import write_scenario
    components: list[tuple[str, str, dict]] = [("ground", "Fixed", {})]
    wires = []
    for i in range(1, masses + 1):
        components += [(f"spring{i}", "CoordinateSpringDamper", {"stiffness": 100.0}), (f"mass{i}", "Mass", {})]
        wires += [f"{'ground.flange' if i == 1 else f'mass{i - 1}.flange_b'} <-> spring{i}.flange_a",
                  f"mass{i}.flange_a <-> spring{i}.flange_b"]
    folder = write_scenario(tmp_path / "chain", "chain", components, wires, stop_time=1.0, step_size=1e-3,
                            algorithm="jacobi", fmu_folder=str(ROOT / "fmus"))
    target = tmp_path / "chain.svg"
    assert main(["draw", str(folder), "-o", str(target)]) == 0
    root = ET.parse(target).getroot()
    assert MAX_WIDTH == 1200 and float(root.get("width")) <= MAX_WIDTH
    boxes = block_boxes(root)
    rows = sorted({top for _, top, _, _ in boxes.values()})
    bands = -(-(2 * masses + 1) // 4)
    assert len(rows) == bands  # a chain is one row per band
    per_row = [sorted(left for left, top, _, _ in boxes.values() if top == row) for row in rows]
    assert all(len(lefts) <= 4 and lefts[0] == per_row[0][0] for lefts in per_row)
    assert max(len(lefts) for lefts in per_row) - min(len(lefts) for lefts in per_row) <= 1
    assert [name for name, _ in sorted(boxes.items(), key=lambda item: (item[1][1], item[1][0]))] == [
        n for n, _, _ in components]  # read left to right, top to bottom: the chain's order
    assert_drawn_completely(root, load_scenario(folder, check=False))


@pytest.mark.parametrize("name", ["oscillator", "msl/Damper", "ball_drop", "belt_friction"])
def test_hover_titles_and_table_hold_the_parameter_values(name, tmp_path):
    scenario = load_scenario(ROOT / "scenarios" / name, check=False)
    root = drawn(name, tmp_path)
    for group in groups(root, "component"):
        spec = scenario.components[group.get("data-name")]
        declared = {d.name: d for d in (*COMPONENTS[spec.fmu.stem].parameters, *COMPONENTS[spec.fmu.stem].inputs)}
        assert any(t.text == group.get("data-name") for t in group.iter(SVG + "text"))  # text as text
        shown = {}
        for line in group.find(SVG + "title").text.splitlines()[2:]:
            match = NUMBER.match(line)
            if match and match["name"] in spec.parameters:
                shown[match["name"]] = (match["value"], match["unit"])
        assert set(shown) == set(spec.parameters), group.get("data-name")
        for parameter, value in spec.parameters.items():
            text, unit = shown[parameter]
            if isinstance(value, bool):
                assert text == str(value).lower()
            elif isinstance(value, float):
                assert float(text) == value and unit == (declared[parameter].unit if declared[parameter].unit != "1"
                                                         else None)
            else:
                assert f"{text} {unit or ''}".strip() == str(value)
        card = next(g for g in groups(root, "parameter-table") if g.get("data-name") == group.get("data-name"))
        assert len(card.findall(SVG + "text")) - 1 == max(1, len(spec.parameters))


def test_the_same_scenario_draws_the_same_bytes(tmp_path):
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    assert main(["draw", str(ROOT / "scenarios" / "elastogap"), "-o", str(first)]) == 0
    assert main(["draw", str(ROOT / "scenarios" / "elastogap"), "-o", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()


def test_every_model_has_a_category():
    expected = {"Mass": BODY, "Inertia": BODY, "RigidBody": BODY, "ElastoGap": CONNECTOR, "Rod": CONNECTOR,
                "CoordinateConstraint": CONNECTOR, "SmoothSphereHalfSpaceForce": CONNECTOR,
                "RotationalSpringDamperExt": CONNECTOR, "Fixed": SOURCE, "Force": SOURCE, "Sine": SOURCE,
                "Position": SOURCE, "ConstantSpeed": SOURCE}
    for model, cls in COMPONENTS.items():
        found = category(cls)
        assert found in (BODY, CONNECTOR, SOURCE), model
        # a body, and only a body, has a mass or inertia of its own; a source takes no input from another's port
        assert (found == BODY) == any(p.unit in ("kg", "kg.m2") for p in cls.parameters), model
        assert (found == SOURCE) == all("." not in i.name for i in cls.inputs), model
        assert found == expected.get(model, found), model
    foreign = Scenario("s", ROOT, {"other": ComponentSpec("other", Path("Foreign.fmu"))}, [])
    assert blocks(foreign)["other"].category == OTHER


def test_bad_draw_commands_are_refused(tmp_path, capsys):
    assert main(["draw", str(tmp_path / "missing"), "-o", str(tmp_path / "x.svg")]) == 2
    assert "no SystemStructure.ssd found" in capsys.readouterr().err
    assert main(["draw", str(ROOT / "scenarios" / "oscillator"), "-o", str(tmp_path / "x.png")]) == 2
    assert ".svg" in capsys.readouterr().err
    assert main(["draw", str(ROOT / "scenarios" / "oscillator"), "-o", str(tmp_path / "x.svg"), "--plot",
                 str(tmp_path / "x.pdf")]) == 2
    assert ".svg or .png" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_the_drawn_tube_is_the_one_runs_are_checked_against():
    reference = read_msl_reference(ROOT / "scenarios" / "msl" / "Oscillator" / "reference" / "Oscillator.csv")
    time, values = reference["time"], reference["mass1.v"]
    low, high = tube(time, values)
    dy = 2e-3 * (values.max() - values.min())
    assert tube_violation(time, values, time, low) < 1e-12 and tube_violation(time, values, time, high) < 1e-12
    assert tube_violation(time, values, time, low - 0.01 * dy) == pytest.approx(0.01 * dy)
    assert tube_violation(time, values, time, high + 0.01 * dy) == pytest.approx(0.01 * dy)
    band_time, band_low, band_high = coarsened(time, low, high, points=100)
    assert len(band_time) == 102 and band_time[0] == time[0] and band_time[-1] == time[-1]
    assert np.all(np.interp(time, band_time, band_low) <= low) and np.all(np.interp(time, band_time, band_high) >= high)


@pytest.mark.slow
def test_plot_shows_the_quantities_the_run_and_the_reference(tmp_path):
    diagram, plot = tmp_path / "sensors.svg", tmp_path / "sensors_result.svg"
    assert main(["draw", str(ROOT / "scenarios" / "msl" / "Sensors"), "-o", str(diagram), "--plot", str(plot)]) == 0
    root = ET.parse(plot).getroot()
    texts = {"".join(t.itertext()).strip() for t in root.iter(SVG + "text")}
    assert {"position [m]", "velocity [m/s]", "time [s]", "mass.s", "mass.v", "reference (Sensors.csv)"} <= texts
    assert not {t for t in texts if "Length" in t or "Velocity" in t}
    reference = read_msl_reference(ROOT / "scenarios" / "msl" / "Sensors" / "reference" / "Sensors.csv")
    for name in ("mass.s", "mass.v"):
        curve = next(g for g in root.iter(SVG + "g") if g.get("id") == f"reference:{name}")
        vertices = re.findall(r"[-\d.]+ [-\d.]+", curve.find(SVG + "path").get("d"))
        assert 50 < len(vertices) <= len(reference)  # the reference's points (simplified where they are straight)


def test_run_plots_name_the_quantity_in_words(tmp_path):
    from mechfmu.master.observers import axis_label
    assert axis_label("m", ["mass.s"]) == "position [m]" and axis_label("rad", ["rotor.phi"]) == "angle [rad]"
    assert axis_label("m/s", ["a.v_rel", "b.v_rel"]) == "relative velocity [m/s]"
    assert axis_label("N", ["spring.f"]) == "force [N]" and axis_label("", ["sine.y"]) == "signal"


@pytest.mark.slow
def test_gallery_shows_each_scenario_by_relative_paths(tmp_path):
    shipped = tmp_path / "scenarios"
    for name in ("msl/Sensors", "msl/Accelerate"):
        shutil.copytree(ROOT / "scenarios" / name, shipped / name)
    assert main(["gallery", str(tmp_path / "docs" / "gallery"), "--scenarios", str(shipped)]) == 0
    page = (tmp_path / "docs" / "gallery.md").read_text()
    assert re.findall(r"^## (.+)$", page, re.MULTILINE) == ["msl/Accelerate", "msl/Sensors"]
    for name in ("msl-Accelerate", "msl-Sensors"):
        for picture in (f"gallery/{name}.svg", f"gallery/{name}_result.svg"):
            assert f"]({picture})" in page
            ET.parse(tmp_path / "docs" / picture)
    assert "a sine force (10 N, 4 Hz) on a 1 kg mass" in page  # the SSD's comment


def test_the_committed_gallery_lists_every_shipped_scenario():
    page = (ROOT / "docs" / "gallery.md").read_text()
    assert sorted(re.findall(r"^## (.+)$", page, re.MULTILINE)) == SHIPPED
    for picture in re.findall(r"\]\((gallery/[^)]+\.svg)\)", page):
        assert (ROOT / "docs" / picture).is_file(), picture
    assert len(re.findall(r"\]\((gallery/[^)]+\.svg)\)", page)) == 2 * len(SHIPPED)


def test_the_gallery_page_shows_what_scenarios_say_as_plain_text(tmp_path):
    """A description, a folder name and a run's message are read from scenarios: on the page they are plain text,
    never HTML, a link, an image or a heading (checked on the HTML that MyST's parser makes of the page)."""
    from markdown_it import MarkdownIt

    from mechfmu.drawing.gallery import Entry, page_text
    root = tmp_path / "scenarios"
    hostile = root / "[x](javascript:alert(1))"
    entry = Entry(hostile, "x", description="<script>alert(1)</script>\n# injected <img src=x onerror=alert(1)>",
                  run="jacobi; the run failed: `code` **bold** ![i](javascript:alert(2))", plotted=("m.s",))
    page = page_text([entry], tmp_path / "docs" / "gallery", tmp_path / "docs" / "gallery.md", root)
    html = MarkdownIt("commonmark").render(page)
    assert "<script" not in html and re.search(r"<[^>]*\bonerror", html) is None
    assert re.findall(r"<img src=\"([^\"]*)\"", html) == ["gallery/x.svg", "gallery/x_result.svg"]
    assert "<a " not in html and "javascript:" not in "".join(re.findall(r'(?:href|src)="([^"]*)"', html))
    scenario_part = html.split("<h2>")[1]  # after the page's own introduction
    assert html.count("<h2>") == 1 and "<strong>" not in scenario_part and "<code>" not in scenario_part
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
