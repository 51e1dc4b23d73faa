"""Pictures: a scenario's system as an SVG diagram (``diagram``) and a run's result plotted against the
scenario's reference (``plot``)."""
