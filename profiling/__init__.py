"""Where does a Cassandra client's CPU go? The profiling harness (``python -m profiling``).

Modules: ``__main__`` (CLI), ``runner`` (one child process per run, py-spy,
reports), ``child`` (a run's process), ``client`` (session + instrumentation),
``patterns`` and ``multiproc`` (the execution patterns), ``workload`` (schema
and requests), ``instrument`` (CPU clocks around decode/encode/row factory),
``sampling`` (py-spy stacks -> categories), ``flame`` (SVG, speedscope),
``report`` (table, markdown, JSON, HTML), ``factories`` (row factories by
name) and ``node`` (a local Cassandra).
"""
