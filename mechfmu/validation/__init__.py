"""Validation: our scenarios translated to the systems their physics comes from, solved there.

- ``mechfmu.validation.exudyn_model``: a 1D scenario as one exudyn 1.13.6 system (GeneralizedAlpha, full Newton);
- ``mechfmu.validation.opensim_model``: a RigidBody / sphere-contact scenario in OpenSim 4.6 (Simbody);
- ``mechfmu.validation.msl``: the Modelica Association's reference results and their tube check.

Installed with mechfmu (``crosscheck`` and ``draw --plot`` read the reference results); the solvers of the
source systems import exudyn and opensim (the test extras) only when called.
"""
