"""Writing systems the Modelica way (``system.System``): components of typed classes (``Mass(m=5.0)``, from
``mechfmu.ssp.library``) placed under names and connected port to port; a system is written as a scenario,
run by the master and exported as an SSP archive. It sits above the master it runs."""
