"""A ``TimerHandle.cancel()`` on one thread while the loop's thread fires the same timer: the cancel waits
for the service's lock without the GIL, the firing lets go of the handle's service (a finished timer keeps
nothing), and that was the service's last other owner. The cancel held the service only through the
handle, so it went on in freed memory (a segfault); it now holds the service itself, and finds the timer
fired. A heap deadline whose comparison (inside ``fire``'s locked region) starts the cancelling thread
makes the order certain."""

import gc
import sys
import threading
import time

from pyfactories.connection._timers import TimerService

sys.setswitchinterval(30)  # the firing thread keeps the GIL until it has let go of the service

service = TimerService(lambda deadline: None, clock=lambda: 0.0)
fired = []
handle = service.add(1.0, lambda: fired.append("fired"))
heap = next(x for x in gc.get_referents(service) if type(x) is list)


class Deadline(float):
    def __le__(self, other):
        threading.Thread(target=handle.cancel, daemon=True).start()
        time.sleep(0.3)  # the cancel now waits for the service's lock, without the GIL
        return True


heap[0] = (Deadline(heap[0][0]), heap[0][1])
owners = [service]
del service


def loop():
    last = owners.pop()
    last.fire(now=100.0)
    del last  # the last owner but the cancelling thread's
    time.sleep(0.5)  # the cancel goes on


firing = threading.Thread(target=loop)
firing.start()
firing.join()
time.sleep(0.5)
assert fired == ["fired"] and not handle.pending and handle.callback is None
print("ok")
