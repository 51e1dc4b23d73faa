"""How far the first-order coupling other tools run is from mechfmu's run of a scenario: ``mechfmu.master.first_order``
(in the master's layer, so ``System.export_ssp`` says it too)."""
from mechfmu.master.first_order import FIRST_ORDER, MAX_COMPONENT_STEPS, MAX_STEPS, first_order_deviations

__all__ = ["FIRST_ORDER", "MAX_COMPONENT_STEPS", "MAX_STEPS", "first_order_deviations"]
