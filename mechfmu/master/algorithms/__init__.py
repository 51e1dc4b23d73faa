"""Coupling algorithms: the base class, option schema and registry (``base``), the fixed-step
algorithms Jacobi, Gauss-Seidel and linear-implicit (``fixed_step``), the iterative ones with
rollback, fixed-point (``iterative``) and Newton (``newton``), event location (``events``), and the monolithic
master of the components' Model Exchange form (``monolithic``).
Importing this package registers all of them; the extension checklist is the docstring of ``base``."""
from mechfmu.master.algorithms.base import (
                   ALGORITHMS,
                   CouplingAlgorithm,
                   Option,
                   constraint_slaves,
                   make_algorithm,
                   refuse_unenforced_constraints,
                   register,
)
from mechfmu.master.algorithms.fixed_step import GaussSeidel, Jacobi, LinearImplicit, tangent_connections
from mechfmu.master.algorithms.friction_newton import NewtonFriction
from mechfmu.master.algorithms.iterative import FixedPoint, IterativeAlgorithm, held_inputs
from mechfmu.master.algorithms.monolithic import Monolithic
from mechfmu.master.algorithms.newton import Newton

__all__ = ["ALGORITHMS", "CouplingAlgorithm", "FixedPoint", "GaussSeidel", "IterativeAlgorithm", "Jacobi",
           "LinearImplicit", "Monolithic", "Newton", "NewtonFriction", "Option", "constraint_slaves", "held_inputs",
           "make_algorithm", "refuse_unenforced_constraints", "register", "tangent_connections"]
