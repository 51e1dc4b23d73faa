"""The package list, found by setuptools so that no package can be left out: every package under mechfmu/, and
components/ (the models that run inside the FMUs) installed as mechfmu.components. Everything else is in
pyproject.toml."""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["mechfmu", "mechfmu.*"]) + ["mechfmu.components"],
      package_dir={"mechfmu.components": "components"})
