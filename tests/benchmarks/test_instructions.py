"""Instructions per query: the difference of two callgrind runs over the difference in queries."""

import pytest

from benchmarks import instructions
from benchmarks.harness import callgrind


def test_per_query_is_the_difference_of_two_runs():
    # start-up (1,000,000) cancels out; 5,000 instructions per query remain, whichever run comes first
    assert callgrind.per_query({40: 1_200_000, 120: 1_600_000}) == 5_000
    assert callgrind.per_query({120: 1_600_000, 40: 1_200_000}) == 5_000


def test_the_total_is_read_from_callgrind_output():
    text = "events: Ir\nsummary: 123456\nfn=main\n0 5\ntotals: 123456\n"
    assert callgrind._TOTALS.search(text).group(1) == "123456"


def test_two_different_lengths_are_needed():
    with pytest.raises(SystemExit, match="two different run lengths"):
        instructions.main(["--queries", "40,40"])


def test_asyncio_configurations_are_checked_before_anything_runs():
    with pytest.raises(SystemExit, match="not asyncio configurations: tuple"):
        instructions.main(["--asyncio", "--factories", "everything_on+await,tuple", "--queries", "40,120"])
