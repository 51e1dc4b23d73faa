"""Validation: our scenarios translated to the systems their physics comes from, solved there.

- ``validation.exudyn_model``: a 1D scenario as one exudyn 1.13.6 system (GeneralizedAlpha, full Newton);
- ``validation.opensim_model``: a RigidBody / sphere-contact scenario in OpenSim 4.6 (Simbody);
- ``validation.msl``: the Modelica Association's reference results and their tube check.

Not part of the runtime package ``mechfmu``: it needs the test extras (exudyn, opensim) and is
imported by the tests and benchmarks only.
"""
