"""The HTTP API (Starlette, served by uvicorn), on a :class:`~examples.asyncio_service.store.Store`:

    GET  /readings/{sensor}/{seq}    one reading (a prepared select by its whole key); 404 if none
    GET  /readings/{sensor}          the sensor's readings, a partition read page by page
    GET  /readings/{sensor}/count    how many readings the sensor has
    POST /readings/{sensor}          {"seq": int, "value": float, "note": str}: one prepared insert; 201
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .store import Store


def reading_json(row: Any) -> dict[str, Any]:
    return row._asdict()


def make_app(store: Store) -> Starlette:
    async def one_reading(request: Request) -> Response:
        row = await store.reading(request.path_params["sensor"], request.path_params["seq"])
        if row is None:
            return JSONResponse({"error": "no such reading"}, status_code=404)
        return JSONResponse(reading_json(row))

    async def partition(request: Request) -> Response:
        rows = await store.partition(request.path_params["sensor"])
        return JSONResponse([reading_json(row) for row in rows])

    async def count(request: Request) -> Response:
        return JSONResponse({"readings": await store.count(request.path_params["sensor"])})

    async def insert(request: Request) -> Response:
        body = await request.json()
        try:
            seq, value, note = int(body["seq"]), float(body["value"]), str(body["note"])
        except (KeyError, TypeError, ValueError):
            return JSONResponse({"error": 'expected {"seq": int, "value": float, "note": str}'}, status_code=400)
        await store.insert(request.path_params["sensor"], seq, value, note)
        return JSONResponse({"sensor": request.path_params["sensor"], "seq": seq}, status_code=201)

    return Starlette(routes=[
        Route("/readings/{sensor:int}/count", count, methods=["GET"]),
        Route("/readings/{sensor:int}/{seq:int}", one_reading, methods=["GET"]),
        Route("/readings/{sensor:int}", partition, methods=["GET"]),
        Route("/readings/{sensor:int}", insert, methods=["POST"]),
    ])
