"""The command that installs one of mechfmu's extras where this mechfmu is installed (``install_command``).

``pip install "mechfmu[studies]"`` asks the package index for mechfmu, which a checkout installed with
``pip install -e .`` is not on: there the extra comes with ``pip install -e "<checkout>[studies]"``, which pip
reads from the checkout's pyproject.toml."""
from __future__ import annotations

from pathlib import Path

#: the folder above the package: a checkout where it holds pyproject.toml
CHECKOUT = Path(__file__).resolve().parents[2]


def install_command(extra: str) -> str:
    """The pip command that adds ``extra`` (``cross``, ``studies``, ``test``): from the checkout mechfmu is installed
    from (its folder, or ``.`` when it is the current directory), else from the index."""
    if not (CHECKOUT / "pyproject.toml").is_file():
        return f'pip install "mechfmu[{extra}]"'
    try:
        here = CHECKOUT.samefile(Path.cwd())
    except OSError:  # the current directory is gone
        here = False
    return f'pip install -e "{"." if here else CHECKOUT}[{extra}]"'
