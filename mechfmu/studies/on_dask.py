"""A study's runs on Dask (``run_study`` with workers > 0 or a scheduler, mechfmu/studies/runner.py): the local
cluster's start, each worker's warm-up, the runs sent in chunks.

- Start: the workers of a local cluster are forked from a server process that imported Dask and mechfmu's run
  modules once (mechfmu/studies/forkserver.py, started before the study is checked, so that its imports go on
  beside the check), instead of each starting an interpreter that imports them again. Their Dask ticks and
  monitors are slow and their profiler off (``QUIET_WORKERS``).
- Warm-up: every worker, a restarted one too, runs ``worker.warm_up`` as it joins (a Dask worker plugin): the
  scenario loaded, its FMUs unpacked and instantiated into the worker's instance pool, so its first run is as
  fast as the next.
- Chunks: a Dask task runs a chunk of runs and returns their rows (``worker.run_chunk``); the rows are stored as
  each chunk comes back, and with a progress bar each run is counted as it finishes (a Dask event). Chunks are
  sent as workers free up, two in flight per worker thread (one running, one waiting: no worker waits for the
  next), sized by ``chunk_size``: about ``CHUNK_S`` of work at the mean run time so far (one run per chunk
  before any has finished), and at most the runs left over twice the worker threads, so the chunks shrink
  towards the end and the workers finish together.
- Failures: a run's failure is its row (``run_point`` never raises). A chunk whose worker died is run again by
  Dask (a killed or crashed worker restarts, forked too); if it fails every time Dask tries it, its runs are
  sent again one at a time, each alone on the cluster, and a run that still fails alone gets the error row
  "worker failed: ..." (the other runs their own rows).
"""
from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Callable
from typing import Any

import dask
from distributed import WorkerPlugin

from mechfmu.studies import forkserver
from mechfmu.studies.study import Study
from mechfmu.studies.worker import failed_row, run_chunk, warm_up

#: a local cluster's workers, nannies and scheduler wake up rarely: no statistical profiler (a thread
#: sampling every 10 ms), loop ticks, system and memory monitors every second or 5 s instead of every
#: 20-500 ms; on two cores a run then takes as long on a worker as here (benchmarks/study_throughput.py)
QUIET_WORKERS = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                 "distributed.admin.system-monitor.interval": "5s", "distributed.worker.memory.monitor-interval": "5s"}
#: seconds of work a chunk is sized for: a task costs a few ms of Dask's time, under 1 % of this, and an
#: interrupted study loses at most the chunks in flight (benchmarks/study_throughput.py --chunk-s measures others)
CHUNK_S = 1.0
#: chunks in flight per worker thread
IN_FLIGHT = 2
_METHOD = "distributed.worker.multiprocessing-method"


def chunk_size(remaining: int, slots: int, run_s: float | None, target_s: float | None = None) -> int:
    """Runs in the next chunk, of ``remaining`` runs not yet sent to ``slots`` worker threads: about ``target_s``
    (default ``CHUNK_S``) of work at ``run_s`` per run (one run while ``run_s`` is unknown), at most
    remaining / (2 slots), at least 1."""
    by_time = 1 if run_s is None else int((CHUNK_S if target_s is None else target_s) / max(run_s, 1e-6))
    return max(1, min(by_time, -(-remaining // (2 * slots))))


def local_cluster(workers: int):
    """A LocalCluster of ``workers`` processes, one thread each (under ``cluster_config``: forked where
    ``forkserver.available()``)."""
    from dask.distributed import LocalCluster
    if workers < 1:
        raise ValueError(f"workers = {workers}: a local cluster needs at least 1 (0 runs in this process)")
    forkserver.start()
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        silence_logs=logging.ERROR)


def cluster_config() -> dict[str, Any]:
    """Dask's configuration while a local cluster lives (a worker Dask restarts is forked and quiet too)."""
    return {**QUIET_WORKERS, **({_METHOD: "forkserver"} if forkserver.available() else {})}


class WarmUp(WorkerPlugin):
    """``worker.warm_up`` on every worker as it joins, in its task thread (so never beside a run)."""

    def __init__(self, study: Study, point: dict[str, Any]):
        self.study, self.point = study, point

    async def setup(self, worker) -> None:
        await asyncio.get_running_loop().run_in_executor(worker.executors["default"], warm_up, self.study,
                                                         self.point)


def run_on_dask(study: Study, pending: list[tuple[int, dict[str, Any]]], workers: int, scheduler: str | None,
                finished: Callable[[list[dict[str, Any]]], None], ran: Callable[[int], None] | None = None) -> None:
    """Run ``pending`` (index, point) on a local cluster of ``workers`` or the cluster of ``scheduler`` (see the
    module); ``finished`` gets each chunk's rows, ``ran`` (if given) each run's index as it finishes."""
    from dask.distributed import Client
    with dask.config.set(cluster_config() if scheduler is None else {}):
        cluster = local_cluster(workers) if scheduler is None else None
        client = Client(scheduler or cluster)
        fingerprint = study.fingerprint()
        plugin, topic = f"mechfmu-warm-up-{fingerprint}", f"mechfmu-progress-{fingerprint}" if ran else None
        try:
            try:
                if pending:
                    client.register_plugin(WarmUp(study, pending[0][1]), name=plugin)
            except Exception as exc:  # a worker that cannot import it would never run a chunk either
                raise RuntimeError(f"the Dask workers cannot take mechfmu's study code ({type(exc).__name__}: "
                                   f"{exc}); each needs this mechfmu installed") from exc
            if topic is not None and ran is not None:
                client.subscribe_topic(topic, lambda event: ran(event[1]))
            _send_in_chunks(client, study, pending, finished, topic)
        finally:
            if topic is not None:
                client.unsubscribe_topic(topic)
            if scheduler is not None:  # a remote cluster keeps its plugins for workers yet to come
                try:
                    client.unregister_worker_plugin(plugin)
                except Exception:
                    pass
            client.close()
            if cluster is not None:
                cluster.close()


def _send_in_chunks(client, study: Study, pending: list[tuple[int, dict[str, Any]]],
                    finished: Callable[[list[dict[str, Any]]], None], topic: str | None) -> None:
    """The runs in chunks (see the module). A run of a task that failed is a suspect: once no chunk is in flight,
    the suspects go one at a time, each alone on the cluster, so that a worker's death is blamed on its own run
    only (Dask counts a death against every task the worker held, the one waiting beside the one running too);
    a suspect that fails alone gets the error row."""
    from dask.distributed import as_completed
    fingerprint = study.fingerprint()
    slots = max(1, sum(client.nthreads().values()))
    queue, suspects = deque(pending), deque[tuple[int, dict[str, Any]]]()
    chunks: dict[Any, tuple[list[tuple[int, dict[str, Any]]], bool]] = {}
    done = as_completed()
    walls = [0.0, 0]  # the computed runs' wall time and count

    def send(chunk: list[tuple[int, dict[str, Any]]], alone: bool = False) -> None:
        key = f"mechfmu-{fingerprint}-{'run' if alone else 'chunk'}-{chunk[0][0]}-{len(chunk)}"
        future = client.submit(run_chunk, study, chunk, topic, key=key)
        chunks[future] = (chunk, alone)
        done.add(future)

    def refill() -> None:
        if suspects:
            if not chunks:
                send([suspects.popleft()], alone=True)
            return
        while queue and len(chunks) < IN_FLIGHT * slots:
            n = chunk_size(len(queue), slots, walls[0] / walls[1] if walls[1] else None)
            send([queue.popleft() for _ in range(n)])

    refill()
    for future in done:
        chunk, alone = chunks.pop(future)
        try:
            rows = future.result()
        except Exception as exc:  # the worker died on this task every time Dask tried it
            if not alone:
                suspects.extend(chunk)
                refill()
                continue
            rows = [failed_row(study, *chunk[0], f"worker failed: {type(exc).__name__}: {exc}")]
        for row in rows:
            if math.isfinite(row["wall_s"]):
                walls[0] += row["wall_s"]
                walls[1] += 1
        finished(rows)
        refill()
