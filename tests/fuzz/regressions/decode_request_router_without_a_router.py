"""RequestRouter(None, kind) was accepted, and each request then read the router's fields from None's
memory (and would call a method of None); a router is now required, and a listener whose __init__
never ran raises TypeError."""
from pyfactories.decoding import _routes

try:
    _routes.RequestRouter(None, _routes.NAMED)
except TypeError:
    pass
else:
    raise AssertionError("a RequestRouter without a router was made")


class Future:
    _protocol_handler = None
    row_factory = None


listener = _routes.RequestRouter.__new__(_routes.RequestRouter)
try:
    listener(Future())
except TypeError:
    pass
else:
    raise AssertionError("a listener without a router routed a request")
router = _routes.Router.__new__(_routes.Router)
for factory in (None, len):
    try:
        router.route(factory, _routes.NAMED)
    except TypeError:
        pass
    else:
        raise AssertionError("a router without handlers routed a request")
print("ok")
