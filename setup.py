"""The package list, found by setuptools so that no package can be left out: every package under mechfmu/, and
components/ (the models that run inside the FMUs) installed as mechfmu.components. A wheel's build also builds
every FMU and the master's libraries for every platform into mechfmu/prebuilt/ (``mechfmu.fmu.prebuilt``); an
editable install does not. Everything else is in pyproject.toml."""
import os
import subprocess
import sys

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py


class BuildWithFmus(build_py):
    """``build_py``, then (for a wheel, not an editable install) ``mechfmu.fmu.release.build_release`` run from the
    packages just copied to the build folder, in a child Python."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.abspath(self.build_lib),
                                                            *filter(None, [os.environ.get("PYTHONPATH")])])}
        env.pop("MECHFMU_FMU_DIR", None)
        target = os.path.join(os.path.abspath(self.build_lib), "mechfmu", "prebuilt")
        subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from mechfmu.fmu.release import "
                        "build_release; build_release(Path(sys.argv[1]))", target], check=True, env=env,
                       cwd=self.build_lib)


setup(packages=find_packages(include=["mechfmu", "mechfmu.*"]) + ["mechfmu.components"],
      package_dir={"mechfmu.components": "components"}, cmdclass={"build_py": BuildWithFmus})
