"""One scenario through several FMI tools, compared pair by pair (``tools``), and the other tools' runs written
as our result files (``export``)."""
