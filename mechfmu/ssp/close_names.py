"""The messages for a name that is not declared, with the closest valid one (``difflib``): for the component
classes (``mechfmu.ssp.library``) and the masters' options alike, without importing the components."""
from __future__ import annotations

import difflib


def suggestion(name: str, valid: list[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest valid name, or nothing."""
    close = difflib.get_close_matches(name, valid, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown(what: str, name: str, owner: str, valid: list[str]) -> str:
    """The message for a name that is not declared: what it is, the closest match and every valid name."""
    listed = ", ".join(valid) if valid else "none"
    return f"{owner} has no {what} {name!r}{suggestion(name, valid)}; its {what}s: {listed}"
