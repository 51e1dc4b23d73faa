"""``python -m mechfmu.cli``: the ``mechfmu`` command."""
from mechfmu.cli import command

command()
