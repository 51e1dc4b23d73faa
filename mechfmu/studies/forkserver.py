"""The server process a local Dask cluster's workers are forked from (multiprocessing's forkserver, where the
platform has one: Linux and most POSIX systems; elsewhere each worker is spawned, a new interpreter).

It imports Dask and mechfmu's run modules once (``MODULES``); a worker is then a fork of it, not an interpreter
that imports them again. ``start`` is called first thing in a study on a local cluster, before Dask is imported
here, so that the server's imports go on beside this process's (Dask's, the study's check).
"""
from __future__ import annotations

import multiprocessing
import os
import threading

#: what the server imports once for every worker
MODULES = ["distributed", "mechfmu.studies.worker", "mechfmu.studies.on_dask", "mechfmu.master.simulate"]
#: the variables Dask sets in this process before it starts a worker (``distributed.nanny.pre-spawn-environ``,
#: Dask's defaults: one BLAS thread, ...): a forked worker inherits the server's environment, so they are set
#: before the server starts
PRE_SPAWN = {"MALLOC_TRIM_THRESHOLD_": "65536", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
             "OPENBLAS_NUM_THREADS": "1"}
#: the process that started the server (a fork of it, e.g. a worker, has none of its own)
_started_by: int | None = None
_lock = threading.Lock()


def available() -> bool:
    """Whether local workers are forked from a server process here."""
    return "forkserver" in multiprocessing.get_all_start_methods()


def start() -> None:
    """Start the server (once per process; it goes on importing while this process works). Only the first call
    sets the environment and changes the working folder for a moment (both process-wide): a later one, made while
    the caller's threads run (a progress bar's, a cluster's), does nothing."""
    global _started_by
    if not available():
        return
    with _lock:
        if _started_by != os.getpid():
            _start()
            _started_by = os.getpid()


def _start() -> None:
    from multiprocessing import forkserver as server

    import dask.config

    import mechfmu
    configured = dask.config.get("distributed.nanny.pre-spawn-environ", default=None) or {}
    for name, value in {**PRE_SPAWN, **configured}.items():
        os.environ.setdefault(name, str(value))
    if os.environ.get("PYTHONHASHSEED") in (None, "0"):
        os.environ["PYTHONHASHSEED"] = "6640"  # Dask's choice for its workers
    multiprocessing.get_context("forkserver").set_forkserver_preload(MODULES)
    # the server's imports start at its working folder, whatever this process's sys.path (Python 3.11's
    # forkserver does not take it): it starts in the folder this mechfmu comes from, so that it imports this
    # mechfmu, not one in the working folder (the workers forked from it then go to this process's folder)
    here = os.getcwd()
    os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(mechfmu.__file__))))
    try:
        server.ensure_running()
    finally:
        os.chdir(here)
