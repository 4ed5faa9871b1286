"""Profiling a program of your own, without changing its code: ``python -m profiling attach``
(a running process, sampled) and ``python -m profiling record`` (a program run from start to
exit, instrumented and sampled)."""
