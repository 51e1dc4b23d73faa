"""The ``mechfmu`` command: its arguments (``parser``) and what each subcommand does (``main``)."""
from mechfmu.cli.main import main

__all__ = ["main"]
