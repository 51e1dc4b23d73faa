"""The FMUs: building them with pythonfmu (``build``), their native FMI 2.0 binary for every platform
(``native`` and its C sources ``fmi2_*.c``), their ``documentation/index.html`` (``documentation``), and the
component declarations read back from a built FMU (``declarations``)."""
