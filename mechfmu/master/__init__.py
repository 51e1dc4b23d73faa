"""The co-simulation master: slaves (FMUs through fmpy, or components in-process), the coupled system and its
data flow, the coupling algorithms, observers and results, the energy audit and the error estimate;
``simulate.simulate`` runs a scenario."""
