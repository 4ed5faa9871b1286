"""Timers: a finite timeout too far in the future (``1e300`` s) raised an ``OverflowError`` about
infinity where the twin took it (with a bucket of 300 digits). Both services now refuse a timeout
past their largest bucket (2**62 units of the resolution; an infinite one, and one whose bucket is
NaN, too) with the same clear ``OverflowError``; a nearer one is taken by both alike."""

from pyfactories import _timerqueue, _timers


def outcome(module, timeout, resolution=0.01):
    service = module.TimerService(lambda deadline: None, clock=lambda: 5.0, resolution=resolution)
    try:
        handle = service.add(timeout, lambda: None)
        return ("ok", handle.deadline, service.buckets(), service._heads)
    except Exception as exc:
        return ("error", type(exc), str(exc))


for timeout in (1e300, 1e200, 4.6e16, 4.7e16, float("inf"), -float("inf"), 10**30, 0.5, "1", None, 1.0):
    for resolution in (0.01, 1e-300, float("inf")):
        want = outcome(_timers, timeout, resolution)
        got = outcome(_timerqueue, timeout, resolution)
        assert got == want, (timeout, resolution, got, want)
assert outcome(_timerqueue, 1e300)[:2] == ("error", OverflowError)
assert "too long" in outcome(_timerqueue, 1e300)[2]
print("ok")
