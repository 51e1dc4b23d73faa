"""Parameter studies: a study file (``study``), its points run in this process or on Dask (``runner``), and
their plots (``plot``)."""
