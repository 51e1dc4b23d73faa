"""fmpy's FMU classes with their functions' C types worked out once per process, not per instance.

fmpy's ``_FMU._loadFunctions`` reads the signature of each of its ~50 ``fmi2*`` (``fmi3*``) methods to type the
library's function of that name, for every instance it makes: 2 to 3 ms an instance, more than a short run's steps.
The types depend on the class alone, so ``typed_class``'s subclasses take them from the first instance of their
class and type each later instance's functions (looked up in its own loaded library, as fmpy does) from them: the
same functions with the same types, at a tenth of the cost. Where fmpy's internals are not the ones this was
written against (no ``_functions``), the subclass is fmpy's class unchanged.
"""
from __future__ import annotations

import functools
from typing import Any

#: per class, its functions' (name, argnames, argtypes, restype) as fmpy worked them out for its first instance
_TYPES: dict[type, list[tuple[str, Any, Any, Any]]] = {}


@functools.cache
def typed_class(version: int, model_exchange: bool) -> type:
    """fmpy's ``FMU2Model`` or ``FMU3Model`` (``model_exchange``), else its ``FMU2Slave`` or ``FMU3Slave``, for FMI
    ``version`` 2 or 3, its functions typed once per process."""
    import importlib
    module = importlib.import_module(f"fmpy.fmi{version}")
    base: Any = getattr(module, f"FMU{version}{'Model' if model_exchange else 'Slave'}")

    class Typed(base):  # type: ignore[misc, valid-type]
        def _loadFunctions(self) -> None:
            known = _TYPES.get(type(self))
            functions = getattr(self, "_functions", None)
            if known is None or not isinstance(functions, dict):
                super()._loadFunctions()
                if isinstance(getattr(self, "_functions", None), dict) and self._functions:
                    _TYPES[type(self)] = [(name, getattr(f, "argnames", None), f.argtypes, f.restype)
                                          for name, f in self._functions.items()]
                return
            for name, argnames, argtypes, restype in known:
                function = getattr(self.dll, name)  # AttributeError where the library lacks it, as in fmpy
                function.argnames, function.argtypes, function.restype = argnames, argtypes, restype
                functions[name] = function

    Typed.__name__ = Typed.__qualname__ = base.__name__  # fmpy picks the functions' prefix by the class's name
    return Typed
