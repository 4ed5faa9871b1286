"""In-process proxies to the node, for tests that need a server which stops answering, goes away or
speaks TLS (for the proxy's clients only: the real node is never touched)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path


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


class TlsProxy:
    """A TLS-terminating proxy to the node (which has no TLS): clients speak TLS to it with the
    server-side ``context``, it speaks plain CQL to the node. Runs an asyncio loop of its own."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext) -> None:
        self.target = (host, port)
        self.context = context
        self.handshakes = 0  # TLS connections accepted
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="tls-proxy")
        self._thread.start()
        # TLS is started in _serve, so a connection that closes during its handshake is still closed by close()
        start = asyncio.start_server(self._serve, "127.0.0.1", 0)
        self._server = asyncio.run_coroutine_threadsafe(start, self._loop).result(10)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            await writer.start_tls(self.context)
        except (OSError, ssl.SSLError):
            writer.close()
            return
        self.handshakes += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._writers.add(up_writer)
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.ensure_future(_pipe(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _stop(self) -> None:
        self._server.close()
        for writer in self._writers:
            writer.transport.abort()  # at once: a TLS close would wait for a peer that may be gone
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        await asyncio.sleep(0)  # the aborted transports close their sockets in the loop's next turn

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


def self_signed_tls_proxy(host: str, port: int, directory: Path) -> tuple[TlsProxy, ssl.SSLContext]:
    """A :class:`TlsProxy` to the node with a self-signed certificate for 127.0.0.1 (made in
    ``directory``), and a client context that verifies it (certificate and host name)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    return TlsProxy(host, port, server), ssl.create_default_context(cafile=str(cert))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (OSError, ssl.SSLError):
        pass
    finally:
        writer.close()
