"""What the benchmarks measure on: the keyspace on a real Cassandra, the write workloads' table,
synthetic result sets, and RESULT bodies captured from Cassandra (``fixtures/``)."""
