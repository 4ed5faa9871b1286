"""Where does a Cassandra client's CPU go? The profiler (``python -m profiling``).

Sub-packages, by what they are:

* ``harness``: the profiler's own runs (``run``): ``runner`` (one child process per run,
  py-spy, reports), ``session`` (the cluster, data and exit code around the runs), ``child``
  and ``processes`` (a run's process), ``spec`` (what a run is told and measured), ``client``
  (a profiled Session), ``patterns``, ``multiproc`` and ``workload`` (the execution patterns
  and the requests they send), ``warmup``, ``watchdog`` and ``repeats``;
* ``timing``: the instrumented method, clocks inside the client: ``instrument`` (the timed
  regions), ``hooks`` (where they go into the driver), ``overhead`` (their own cost),
  ``procfs`` (a thread's CPU from the kernel), ``factorycost`` (row factories timed side by side);
* ``sampling``: the sampling method, py-spy's stacks: ``pyspy`` (recording), ``stacks``
  (reading them), ``categories`` (classifying them) and its rules (``regionwindow``,
  ``syscalls``, ``truncated``, ``bymodule``, ``foreign``);
* ``service``: a program of your own: ``attach`` (a running process), ``record`` and
  ``recordhook`` (a program run from start to exit), ``results`` (what both share);
* ``report``: ``summary`` (table, markdown, JSON, HTML), ``bars``, ``flame``, ``advice``
  and ``publish`` (all of them at once);
* ``node``: a local Cassandra (``python -m profiling.node``).

Shared with the benchmarks and the tests, at the top: ``factories`` (the registry of row
factories), ``typed`` (dataclass rows) and ``cluster`` (reaching a cluster).
"""
