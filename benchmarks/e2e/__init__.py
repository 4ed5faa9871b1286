"""The benchmarks that talk to a real Cassandra: the end-to-end benchmark's workloads, its
configurations and clients, the reference configuration its targets are judged in, and what the
connection benchmarks (request timeouts, framing, coalesced writes) share."""
