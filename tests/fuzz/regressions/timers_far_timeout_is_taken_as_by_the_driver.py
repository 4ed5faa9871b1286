"""Timers: a finite timeout too far in the future (``1e300`` s) raised an ``OverflowError`` about
infinity where the twin took it (with a bucket of 300 digits) and the driver takes any timeout (its
timer simply never comes). Both services now take a timeout past their last bucket (2**62 units of
the resolution; an infinite one, and one whose bucket is NaN, too) into that last bucket, alike: the
same deadline, the same buckets, and the timer fires no sooner than its deadline."""

from cassandra.connection import Timer

from pyfactories.connection import _timers
from pyfactories.connection import _timers_py


def outcome(module, timeouts, resolution=0.01):
    service = module.TimerService(lambda deadline: None, clock=lambda: 5.0, resolution=resolution)
    fired = []
    try:
        handles = [service.add(t, lambda t=t: fired.append(t)) for t in timeouts]
    except Exception as exc:
        return ("error", type(exc), str(exc))
    early = (service.fire(1e250), list(fired))
    return ("ok", [h.deadline for h in handles], service.buckets(), service._heads, service.wake_at, early,
            service.fire(float("inf")), list(fired))


for timeouts in ([1e300], [1e200, 1e300], [1e300, 1e200], [4.6e16], [4.7e16], [float("inf")], [float("inf"), 1.0],
                 [10**30], [-float("inf")], [0.5, 1e300, 2.0]):
    for resolution in (0.01, 1e-300, float("inf")):
        want = outcome(_timers_py, timeouts, resolution)
        got = outcome(_timers, timeouts, resolution)
        assert got == want, (timeouts, resolution, got, want)
        assert got[0] == "ok"
got = outcome(_timers, [1e300])
assert got[1] == [1e300 + 5.0] and got[2] == [2**62] and got[5] == (1e300, [])  # not before its deadline
assert outcome(_timers, [float("inf")])[5] == (float("inf"), [])  # not before the end of time
assert Timer(float("inf"), print).end == float("inf")
print("ok")
