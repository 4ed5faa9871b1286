"""create_future: a session whose protocol version is not a plain int of a protocol (a float, a huge int, an
int subclass, set from Python) gets the driver's own future (the driver compares it as it is), not a
TypeError or OverflowError of a conversion to a C int."""

from pyfactories.futures import _futures
from pyfactories.futures import _futures_py


class Version(int):
    def __ge__(self, other):
        return False


class Cluster:
    _config_mode = None


class Session:
    cluster = Cluster()


def driver(*args):
    return "the driver's", args[0]


for version in (4.0, 2**70, -(2**70), Version(4), 256):
    session = Session()
    session._protocol_version = version
    for module in (_futures, _futures_py):
        assert module.create_future(object, driver, session, "SELECT 1", None, False, None, 1.0) == (
            "the driver's", "SELECT 1"), (module, version)
print("ok")
