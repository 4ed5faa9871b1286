"""The profiling tests use the session's ``cassandra_hosts`` fixture from ``tests/conftest.py``."""
