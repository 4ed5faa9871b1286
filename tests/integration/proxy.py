"""An in-process TCP proxy to the node, for tests that need a server which stops answering or goes
away (for this proxy's clients only: the real node is never touched)."""

from __future__ import annotations

import socket
import threading
import time


class HoldingProxy:
    """A TCP proxy to the node. While ``hold`` is set, the server's answers wait in the proxy (a
    server that stops answering). :meth:`drop` closes every connection through it and refuses new
    ones for a while (a node that goes away and comes back)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.hold = threading.Event()
        self.refusing = threading.Event()  # set while the port is closed (connections refused)
        self._closed = False
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._threads: list[threading.Thread] = []
        self.port = self._listen(0)

    def _listen(self, port: int) -> int:
        self._listener = socket.create_server(("127.0.0.1", port))
        t = threading.Thread(target=self._accept, args=(self._listener,), daemon=True, name="holding-proxy")
        self._threads.append(t)
        t.start()
        return self._listener.getsockname()[1]

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._pairs.append((client, server))
            for src, dst, held in ((client, server, False), (server, client, True)):
                t = threading.Thread(target=self._pump, args=(src, dst, held), daemon=True, name="holding-proxy")
                self._threads.append(t)
                t.start()

    def _pump(self, src: socket.socket, dst: socket.socket, held: bool) -> None:
        try:
            while data := src.recv(65536):
                while held and self.hold.is_set():
                    time.sleep(0.005)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def drop(self, refuse_for: float = 0.0) -> None:
        """Close every connection through the proxy now; refuse new ones (the port closed) for
        ``refuse_for`` seconds (in the background), then let them through again on the same port.
        Held answers are dropped too."""
        if refuse_for > 0:
            self.refusing.set()
            _close(self._listener)
            timer = threading.Timer(refuse_for, self._reopen)
            timer.daemon = True
            timer.start()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for s in pair:
                _close(s)
        self.hold.clear()

    def _reopen(self) -> None:
        with self._lock:
            if not self._closed:
                self._listen(self.port)
        self.refusing.clear()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.hold.clear()
        _close(self._listener)
        self.drop()
        for t in self._threads:
            t.join(5)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()
