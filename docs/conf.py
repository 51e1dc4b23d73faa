"""Sphinx configuration of mechfmu's documentation site.

Build (warnings are errors): ``python -m sphinx -W --keep-going -b html docs docs/_build/html``.
Pages are MyST Markdown (myst-parser); the component reference is generated at build time from the component
declarations by ``_ext/component_reference.py``; the API reference is autodoc of the user-facing functions.
"""
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))  # a checkout that is not installed still documents its own code

project = "mechfmu"
author = "the mechfmu authors"
copyright = "the mechfmu authors, MIT licence"

extensions = ["myst_parser", "sphinx.ext.autodoc", "component_reference"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
root_doc = "index"

# MyST: anchors for headings down to ###, so pages link to sections ([text](algorithms.md#events)); $ math off
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# The how-to guides enter the table of contents through the glob pattern how-to/* of index.md, so a new guide
# appears as soon as it is written; every page must be in a toctree (Sphinx's "document isn't included in any
# toctree" is a warning, and so an error under -W).

# autodoc: the user-facing functions' docstrings are plain text with ``double backticks``; signatures keep their
# annotations as written (``from __future__ import annotations``), unresolved, so no type needs a target
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True

html_theme = "furo"
html_title = "mechfmu"
html_static_path: list[str] = []
