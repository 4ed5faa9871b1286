"""Checks that a harness left no process behind."""

import subprocess
import time


def group_gone(pgid: int | str, within: float = 10.0) -> bool:
    """Has process group ``pgid`` no process left (``pgrep -g``), within ``within`` seconds?

    A killed process takes a moment to die and be reaped: pgrep still lists it meanwhile.
    """
    deadline = time.monotonic() + within
    while subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True
