"""The HIP runtime in Python: devices, per-thread current device, memory, streams, events, modules,
launches — dispatching through pyhip's AQL queues to the emulated GPU."""
