"""The jargon a Modelica user stumbles on is explained: a page of words, each with a section, which the guides
link to; the warnings about open inputs say what "free" means."""
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
WORDS = ["master", "slave", "companion run", "tangents", "free input", "communication step", "substeps",
         "event indicator", "rollback", "flange"]


def test_every_word_has_a_section_that_says_what_modelica_calls_it():
    text = (DOCS / "glossary.md").read_text(encoding="utf-8")
    sections = re.split(r"\n## ", text)[1:]
    for word in WORDS:
        section = next((s for s in sections if word in s.split("\n", 1)[0]), None)
        assert section is not None, word
        assert len(section.split()) > 40, word  # a paragraph, not a heading
    assert sum("Modelica" in s for s in sections) == len(sections)


def test_the_first_pages_a_new_user_reads_link_the_words():
    for page in ("index.md", "getting-started.md"):
        assert "(glossary.md)" in (DOCS / page).read_text(encoding="utf-8"), page


def test_a_warning_about_an_open_input_says_what_free_means():
    from mechfmu.ssp.unconnected import free_hint
    assert "held at its start value" in free_hint("force", ["f"])
