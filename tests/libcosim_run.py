"""Run an SSP folder unchanged in libcosim (libcosimpy 0.0.6), in its own process; print the
given outputs after every step as JSON rows. Usage: libcosim_run.py SSD N_STEPS comp.var ..."""
import json
import sys

from libcosimpy.CosimLogging import CosimLogLevel, log_output_level

log_output_level(CosimLogLevel.WARNING)
from libcosimpy.CosimExecution import CosimExecution  # noqa: E402
from libcosimpy.CosimObserver import CosimObserver  # noqa: E402

ssd, n_steps, columns = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
execution = CosimExecution.from_ssp_file(ssd)
observer = CosimObserver.create_last_value()
execution.add_observer(observer)
index = {info.name.decode(): info.index for info in execution.slave_infos()}
reads = []
for column in columns:
    component, variable = column.split(".", 1)
    refs = {v.name.decode(): v.reference for v in execution.slave_variables(index[component])}
    reads.append((index[component], refs[variable]))
rows = []
for _ in range(n_steps):
    execution.step(1)
    rows.append([observer.last_real_values(slave, [ref])[0] for slave, ref in reads])
print(json.dumps(rows))
