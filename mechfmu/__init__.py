"""mechfmu master: slaves, coupling algorithms, SSP scenarios, results, FMU build and CLI."""
__version__ = "0.1.0"
