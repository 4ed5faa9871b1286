"""The profiling tests use the session's ``contact`` fixture from ``tests/conftest.py``."""
