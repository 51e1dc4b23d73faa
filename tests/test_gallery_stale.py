"""``mechfmu gallery`` removes the pictures it wrote for scenarios that are gone, and nothing else in its folder."""
import re
import shutil
from pathlib import Path

from mechfmu.cli.main import main
from mechfmu.drawing.gallery import Entry, page_text, stale_pictures

ROOT = Path(__file__).resolve().parent.parent


def test_the_gallery_removes_the_pictures_of_a_scenario_that_is_gone(tmp_path, capsys):
    scenarios, gallery = tmp_path / "scenarios", tmp_path / "docs" / "gallery"
    shutil.copytree(ROOT / "scenarios" / "msl" / "Accelerate", scenarios / "msl" / "Accelerate")
    page = tmp_path / "docs" / "gallery.md"
    gallery.mkdir(parents=True)
    # an earlier gallery that also showed msl/Gone, which has since been removed from the scenarios
    earlier = [Entry(scenarios / "msl" / "Accelerate", "msl-Accelerate", run="jacobi", plotted=("accelerate.s",)),
               Entry(scenarios / "msl" / "Gone", "msl-Gone", run="jacobi", plotted=("mass.s",))]
    page.write_text(page_text(earlier, gallery, page, scenarios))
    stale = [gallery / "msl-Gone.svg", gallery / "msl-Gone_result.svg"]
    others = {"notes.svg": "mine", "msl-Other.svg": "named like a picture but never on the page",
              "msl-Gone.png": "not a name the gallery writes", "README.md": "about the folder"}
    for path in stale:
        path.write_text("<svg/>")
    for name, text in others.items():
        (gallery / name).write_text(text)
    assert stale_pictures(gallery, page, ["msl-Accelerate"]) == stale

    assert main(["gallery", str(gallery), "--scenarios", str(scenarios)]) == 0
    out = capsys.readouterr().out
    assert not any(path.exists() for path in stale)
    assert all(f"removed {path}" in out for path in stale)
    assert {p.name: p.read_text() for p in gallery.iterdir() if p.name in others} == others  # untouched
    assert {p.name for p in gallery.iterdir()} == {*others, "msl-Accelerate.svg", "msl-Accelerate_result.svg"}
    assert re.findall(r"^## (.+)$", page.read_text(), re.MULTILINE) == ["msl/Accelerate"]
    # a second run finds nothing stale; without an earlier page nothing is ever removed
    assert stale_pictures(gallery, page, ["msl-Accelerate"]) == []
    assert stale_pictures(gallery, tmp_path / "missing.md", []) == []


def test_only_the_gallerys_own_links_mark_a_picture_as_its_own(tmp_path):
    gallery, page = tmp_path / "gallery", tmp_path / "gallery.md"
    gallery.mkdir()
    for name in ("a.svg", "a_result.svg", "b.svg", "c_result.svg", "x.svg"):
        (gallery / name).write_text("<svg/>")
    page.write_text("\n".join([
        "![system of a](gallery/a.svg)", "![result of a](gallery/a_result.svg)",  # the gallery's: stale
        "![system of b](other/b.svg)",  # another folder
        "![result of c](gallery/c.svg)",  # not the name the gallery writes for c's result
        "![logo](gallery/x.svg)", "see ![system of x](gallery/x.svg)",  # hand-written links
        "![system of ..](gallery/%2E%2E.svg)", "![system of q](gallery/..%2Fq.svg)",  # not in the folder
    ]))
    assert stale_pictures(gallery, page, []) == [gallery / "a.svg", gallery / "a_result.svg"]
    assert stale_pictures(gallery, page, ["a"]) == []
