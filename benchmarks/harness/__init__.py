"""How the benchmarks measure: the depths they run, timing loops, worker processes, CPU pinning,
statistics of samples, the environment of a run, instruction counts, and the command line the
benches share."""
