"""A streamed CDX answer is complete even when the producer thread runs ahead.

Regression: the API answered with the first chunk alone (a clean 200) when the producer
had already made the *last* chunk by the time the first was looked at; seen by the
replay benchmark on the python docs (256 of 530 lines). Here the consumer is made to
look only after the producer has finished, which is the losing interleaving.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from cdx_api_support import MemorySource, cap
from starlette.testclient import TestClient

from webark.apps.cdx import stream as cdx_stream
from webark.apps.cdx.api import create_app
from webark.apps.cdx.engine import FIRST_CHUNK, Chunks
from webark.apps.cdx.sources import StaticCollections

N = 400  # about 60 KB of JSON lines: the first chunk (16 KiB) and one more


@pytest.fixture
def late_consumer(monkeypatch: pytest.MonkeyPatch) -> None:
    """ThreadedBody.get waits for the producer to finish before its first answer."""
    original = cdx_stream.ThreadedBody.get
    first_call = {"done": False}

    async def get(self: cdx_stream.ThreadedBody) -> bytes | None:
        if not first_call["done"]:
            first_call["done"] = True
            while not self.future.done():
                await asyncio.sleep(0.01)
        return await original(self)

    monkeypatch.setattr(cdx_stream.ThreadedBody, "get", get)


def test_every_line_arrives_when_the_producer_finished_first(late_consumer: None) -> None:
    lines = [cap(f"http://example.com/page{i:04d}", "20200101000000") for i in range(N)]
    colls = StaticCollections({"many": MemorySource(lines)})
    with TestClient(create_app(colls)) as c:
        r = c.get("/many/cdx", params={"url": "http://example.com/", "matchType": "prefix",
                                       "output": "json"})
    assert r.status_code == 200
    assert len(r.content) > FIRST_CHUNK  # more than one chunk was needed
    got = [json.loads(x)["url"] for x in r.text.splitlines()]
    assert got == [f"http://example.com/page{i:04d}" for i in range(N)]


def test_chunks_single_only_for_a_one_chunk_answer() -> None:
    one = Chunks([b"x" * 10], first=16, size=16)
    assert [len(c) for c in one] == [10] and one.single
    three = Chunks([b"x" * 10] * 5, first=16, size=16)
    assert [len(c) for c in three] == [20, 20, 10]
    assert three.exhausted and not three.single
