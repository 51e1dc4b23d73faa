"""mechfmu: mechanical contact and connector elements as FMI 2.0 FMUs, and a co-simulation master.

The names most work starts from are here: ``System`` and the component classes (``Mass``,
``CoordinateSpringDamper``, ...: ``mechfmu.ssp.library``), ``simulate``, ``load_scenario``, ``write_scenario``
and ``export_ssp`` (``System.export_ssp``'s ``Exported`` notes and ``ExportWarning``). Each is imported
from its module when first asked for, so ``import mechfmu`` (and
``mechfmu.components`` inside the FMUs' tooling) stays light."""
import importlib

__version__ = "0.1.0"

#: name -> the module that defines it
EXPORTS = {"System": "mechfmu.model.system", "simulate": "mechfmu.master.simulate",
           "load_scenario": "mechfmu.ssp.scenario", "write_scenario": "mechfmu.ssp.writer",
           "export_ssp": "mechfmu.ssp.export", "Exported": "mechfmu.ssp.tool_notes",
           "ExportWarning": "mechfmu.ssp.tool_notes",
           # the host library of the components' C laws for this machine, built beside the FMUs when the sources
           # changed: where mechfmu.components finds it (components/native_library.py)
           "host_library": "mechfmu.fmu.build"}


def __getattr__(name: str):
    if name in EXPORTS:
        return getattr(importlib.import_module(EXPORTS[name]), name)
    if name[:1].isupper():
        return getattr(importlib.import_module("mechfmu.ssp.library"), name)
    raise AttributeError(f"module 'mechfmu' has no attribute {name!r}")
