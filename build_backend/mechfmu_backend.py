"""The build backend: setuptools', with what a wheel's build needs beyond it. A wheel carries every FMU already
built for every platform (``mechfmu.fmu.prebuilt``), so its build needs zig (the cross compiler), fmpy (the FMI
headers) and pythonfmu (the FMU packaging); an editable install builds nothing ahead and needs none of them."""
from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403 (every hook, editable and sdist ones unchanged)

#: the packages the wheel's FMU build imports (pins as in pyproject.toml)
WHEEL_BUILD = ["ziglang==0.17.1", "fmpy>=0.3.20", "pythonfmu==0.7.0"]


def get_requires_for_build_wheel(config_settings=None):
    return [*build_meta.get_requires_for_build_wheel(config_settings), *WHEEL_BUILD]
