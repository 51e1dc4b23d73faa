"""A run's slaves: ``instantiate`` (one per scenario component, from an ``InstancePool`` where one is given) and
``auto``'s choice of the monolithic master (``model_exchange_choice``), made on the Model Exchange instances the run
then takes."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mechfmu.master.algorithms.auto import Choice, chosen_algorithm, offers_model_exchange
from mechfmu.master.algorithms.base import is_constraint
from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.slaves import LocalSlave, Slave, SlaveError
from mechfmu.ssp.archive import shown
from mechfmu.ssp.scenario import Scenario, component_class

if TYPE_CHECKING:
    from mechfmu.master.algorithms import CouplingAlgorithm
    from mechfmu.master.instance_pool import InstancePool


def no_instances() -> dict[str, Slave]:
    """The instances an in-process run's companion beside it needs made beforehand: none, it makes its own in its
    thread; the host library is loaded here first (two threads loading it at once would both import its build)."""
    from mechfmu.components.native_library import library
    library()
    return {}


def instantiate(scenario: Scenario, local: bool = False, pool: InstancePool | None = None,
                model_exchange: bool = False) -> dict[str, Slave]:
    """One slave per scenario component (FMU via fmpy, or the component in-process, which reads relative files
    such as a Table's from the scenario's folder); FMUs come from ``pool`` when it holds a reset instance, and
    with ``model_exchange`` are instantiated as fmi2ModelExchange."""
    slaves: dict[str, Slave] = {}
    try:
        for spec in scenario.components.values():
            if local:
                slaves[spec.name] = local_slave = LocalSlave(spec.name, component_class(spec.fmu), str(scenario.folder))
                if model_exchange and not local_slave.component.co_simulation_only:  # as fmi2ModelExchange makes it
                    local_slave.component.in_model_exchange = True
            elif pool is not None:
                slaves[spec.name] = pool.take(spec.name, spec.fmu, model_exchange)
            else:
                slaves[spec.name] = FmuSlave(spec.name, spec.fmu, model_exchange)
    except Exception as exc:
        for slave in slaves.values():
            slave.terminate()
        if shown(exc) != str(exc):  # an archive's FMU: named in the archive, not in the folder it is unpacked to
            raise ValueError(f"{spec.name}: {shown(exc)}") from exc
        raise
    return slaves


def model_exchange_form(fmu: str | Path) -> bool:
    """The FMU file has a form the monolithic master integrates, by its description alone: Model Exchange, or a
    constraint (an input ``lambda``, solved by the master); False where it cannot be read (the run says why)."""
    try:
        description, _ = FmuSlave.unpacked(str(Path(fmu).resolve()))
    except Exception:  # the run says why
        return False
    return description.modelExchange is not None or any(
        v.name == "lambda" and v.causality == "input" for v in description.modelVariables)


def model_exchange_choice(scenario: Scenario, local: bool, parameters: dict[str, dict[str, Any]] | None,
                          options: dict[str, Any], tolerance: tuple[float, float], pool: InstancePool | None = None
                          ) -> tuple[CouplingAlgorithm, Choice] | None:
    """``auto``'s choice where it is the monolithic master, made on the components instantiated for Model Exchange
    (taken from ``pool`` where it holds them): where it chooses that master, the FMUs' instances are handed to
    ``pool`` for the run (``InstancePool.hand_over``), else freed. None where auto chooses a co-simulation master, a
    component has no Model Exchange form (an FMU: read from its description, nothing instantiated) or the instances
    cannot be made (the run then chooses, or says why it cannot start, as before)."""
    if not local and not all(model_exchange_form(spec.fmu) for spec in scenario.components.values()):
        return None
    try:
        slaves = instantiate(scenario, local=local, pool=pool, model_exchange=not local)
    except Exception:  # the run itself reports it
        return None
    chosen: tuple[CouplingAlgorithm, Choice] | None = None
    try:
        if all(offers_model_exchange(slave) or is_constraint(slave) for slave in slaves.values()):
            values = {name: {**scenario.components[name].parameters, **(parameters or {}).get(name, {})}
                      for name in slaves}
            algo, choice = chosen_algorithm(slaves, values, options, tolerance)
            chosen = None if algo.steps_slaves else (algo, choice)
    except (ValueError, SlaveError):
        chosen = None
    finally:
        for slave in slaves.values():
            if chosen is not None and pool is not None and isinstance(slave, FmuSlave):
                pool.hand_over(slave)
            else:
                slave.release()
    return chosen
