"""What a run's figures become: the results file, markdown tables and report, the chart, the
targets and their verdicts, and the comparison of two runs."""
