"""What a profile reports: the summary (terminal table, ``summary.md``, ``summary.json``,
``index.html``), its bars and flamegraphs, and the advice."""
