"""The harness: the profiler's own runs (``python -m profiling run``), each combination of
workload, execution pattern and row factory in a child process of its own, measured by both
methods (:mod:`profiling.timing`, :mod:`profiling.sampling`) and reported
(:mod:`profiling.report`)."""
