"""``python -m mechfmu.cli``: the ``mechfmu`` command."""
import sys

from mechfmu.cli.main import main

sys.exit(main())
