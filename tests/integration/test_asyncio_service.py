"""The asyncio service of ``examples/asyncio_service`` on the node, both switch positions (the driver and
its hand-written bridge; ``pyfactories.enable`` and ``await``), each a uvicorn process of its own on a free
port: every endpoint answers the same from both, with the rows the keyspace holds."""

from __future__ import annotations

import asyncio
import json

import pytest

from examples.asyncio_service.http_client import HttpConnection
from examples.asyncio_service.load import services
from examples.asyncio_service.store import READINGS_PER_SENSOR, WRITTEN_SENSORS, seeded_reading

pytestmark = pytest.mark.integration

SENSOR = 3
WRITTEN = WRITTEN_SENSORS + 7
NEW_READING = {"seq": 5, "value": 2.5, "note": "written by the test"}
REQUESTS = [
    ("GET", f"/readings/{SENSOR}/17", b""),
    ("GET", f"/readings/{SENSOR}", b""),
    ("GET", f"/readings/{SENSOR}/count", b""),
    ("POST", f"/readings/{WRITTEN}", json.dumps(NEW_READING).encode()),
    ("GET", f"/readings/{WRITTEN}/5", b""),
    ("GET", f"/readings/{SENSOR}/{READINGS_PER_SENSOR}", b""),  # no such reading
    ("POST", f"/readings/{WRITTEN}", b'{"seq": "five"}'),  # refused
]


def reading(sensor, seq, value, note):
    return {"sensor": sensor, "seq": seq, "value": value, "note": note}


async def answers(service):
    async with HttpConnection(service.host, service.port) as connection:
        return [(status, json.loads(body)) for status, body in
                [await connection.request(method, target, body) for method, target, body in REQUESTS]]


@pytest.fixture(scope="module")
def both(contact):
    with services(["off", "on"], ",".join(contact.hosts), contact.port) as started:
        yield {service.position: asyncio.run(answers(service)) for service in started}


def test_each_endpoint_answers_the_same_with_and_without_pyfactories(both):
    assert both["on"] == both["off"]


def test_the_answers_are_the_keyspaces_rows(both):
    one, partition, count, inserted, read_back, missing, refused = both["off"]
    assert one == (200, reading(*seeded_reading(SENSOR, 17)))
    # 200 rows in pages of 50: every page, in clustering order
    assert partition == (200, [reading(*seeded_reading(SENSOR, seq)) for seq in range(READINGS_PER_SENSOR)])
    assert count == (200, {"readings": READINGS_PER_SENSOR})
    assert inserted == (201, {"sensor": WRITTEN, "seq": 5})
    assert read_back == (200, reading(WRITTEN, **NEW_READING))
    assert missing[0] == 404 and refused[0] == 400
