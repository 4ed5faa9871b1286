"""The instrumented method: CPU clocks read around the client's regions, inside the profiled
process (the harness's runs, and ``record``'s program through :mod:`profiling.service.recordhook`,
which loads these modules by path: they import nothing of the profiler outside this folder)."""
