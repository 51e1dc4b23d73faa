"""mechfmu components: force laws and the component classes packaged as FMI 2.0 co-simulation FMUs.

Standard library only: this package is copied into every FMU and runs in whatever Python loads it.
"""
from .base import Component, ComponentError
from .coordinate_constraint import CoordinateConstraint
from .coordinate_spring_damper import CoordinateSpringDamper
from .coordinate_spring_damper_ext import CoordinateSpringDamperExt, RotationalSpringDamperExt
from .elasto_gap import ElastoGap
from .fixed import Fixed
from .mass import Inertia, Mass
from .rigid_body import RigidBody
from .smooth_sphere_half_space import SmoothSphereHalfSpaceForce
from .sources import ConstantSpeed

#: every component that is built into an FMU, by model name
COMPONENTS: dict[str, type[Component]] = {
    cls.__name__: cls for cls in (Mass, Inertia, Fixed, ConstantSpeed, CoordinateSpringDamper,
                                  CoordinateSpringDamperExt, RotationalSpringDamperExt, ElastoGap,
                                  SmoothSphereHalfSpaceForce, RigidBody, CoordinateConstraint)
}

__all__ = ["COMPONENTS", "Component", "ComponentError", "ConstantSpeed", "CoordinateConstraint", "CoordinateSpringDamper",
           "CoordinateSpringDamperExt", "ElastoGap", "Fixed", "Inertia", "Mass", "RigidBody",
           "RotationalSpringDamperExt", "SmoothSphereHalfSpaceForce"]
