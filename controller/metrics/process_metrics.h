/* The process_* families of Prometheus's Go client, sampled from procfs. */
#pragma once

#include "controller/metrics/metrics.h"

/* Registers process_cpu_seconds_total, process_open_fds, process_max_fds,
 * process_virtual_memory_bytes, process_resident_memory_bytes and process_start_time_seconds,
 * sampled at each render from proc_root ("/proc" in production; tests pass a directory laid
 * out the same way: self/stat, self/fd/, self/limits, stat). The registry keeps proc_root. */
int tj_metrics_register_process(struct tj_metrics *reg, const char *proc_root);
