"""Parameter studies: a scenario run at many points (``study``), on Dask workers or in this process (``runner``),
their table plotted (``plot``). Dask and pyarrow come with the ``studies`` extra; ``needs`` names it when one is
missing, before any run starts."""
import importlib.util

from mechfmu.fmu.extras import install_command

#: how to install what studies need beyond the core (from the checkout where mechfmu is installed from one)
STUDIES_EXTRA = install_command("studies")


class MissingExtra(ImportError):
    """A feature's package is not installed; the message names the feature, the package and the extra."""


def needs(module: str, feature: str) -> None:
    """Raise ``MissingExtra`` if ``module`` (e.g. "dask.distributed") cannot be imported for ``feature``."""
    top = module.split(".")[0]
    if importlib.util.find_spec(top) is None or importlib.util.find_spec(module) is None:
        raise MissingExtra(f"{feature} needs the package {top}, which is not installed: it comes with mechfmu's "
                           f"studies extra, {STUDIES_EXTRA}")
