import pytest

from mechfmu import build


@pytest.fixture(scope="session", autouse=True)
def fmus():
    """Build the FMUs (if stale) before any test: scenarios reference them. Returns {model: path}."""
    build.build()
    return {m: build.fmu_path(m) for m in build.model_names()}
