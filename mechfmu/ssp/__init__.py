"""Scenarios as SSP 1.0: reading them (``scenario.load_scenario``) with their parameters, units, unit
conversions and SSP constructs, writing them (``writer.write_scenario``; ``library``: the typed component classes
``mechfmu.model.System`` takes) and exporting archives with their FMUs (``export.export_ssp``).

``from mechfmu.ssp import write_scenario`` (and the others in ``EXPORTS``) imports the module that defines it
when first asked, so importing one module of this package does not import the others."""
import importlib

#: name -> the module of this package that defines it
EXPORTS = {"export_ssp": "export", "flange_connections": "writer", "write_scenario": "writer",
           "load_scenario": "scenario"}


def __getattr__(name: str):
    if name in EXPORTS:
        return getattr(importlib.import_module(f"mechfmu.ssp.{EXPORTS[name]}"), name)
    raise AttributeError(f"module 'mechfmu.ssp' has no attribute {name!r}")
