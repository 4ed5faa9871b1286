"""The sampling method: py-spy's stacks of the profiled process, recorded, read and classified
into the categories the instrumented method times (:mod:`profiling.timing.instrument`)."""
