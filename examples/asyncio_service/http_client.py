"""One keep-alive HTTP/1.1 connection on asyncio streams, the protocol spoken by h11 (which uvicorn
serves with too): requests one after another on the same socket."""

from __future__ import annotations

import asyncio

import h11


class HttpConnection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.protocol = h11.Connection(h11.CLIENT)

    async def __aenter__(self) -> "HttpConnection":
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()

    async def request(self, method: str, target: str, body: bytes = b"") -> tuple[int, bytes]:
        """The response's status and body."""
        assert self.reader is not None and self.writer is not None, "use the connection in `async with`"
        headers = [("Host", f"{self.host}:{self.port}"), ("Content-Length", str(len(body)))]
        if body:
            headers.append(("Content-Type", "application/json"))
        send = self.protocol.send
        self.writer.write(b"".join([send(h11.Request(method=method, target=target, headers=headers)),
                                    send(h11.Data(data=body)) if body else b"", send(h11.EndOfMessage())]))
        status, parts = 0, []
        while True:
            event = self.protocol.next_event()
            if event is h11.NEED_DATA:
                self.protocol.receive_data(await self.reader.read(65536))
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                parts.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                self.protocol.start_next_cycle()
                return status, b"".join(parts)
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionError(f"the server closed the connection during {method} {target}")
