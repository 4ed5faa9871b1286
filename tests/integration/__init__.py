"""Integration suite: the row factories and the fast path against a real Cassandra (``-m integration``)."""
