import pytest

from mechfmu import build


@pytest.fixture(scope="session")
def fmus():
    """Build (if stale) and return {model: path}."""
    build.build()
    return {m: build.fmu_path(m) for m in build.model_names()}
