"""Resolve overrides, the dns: record, and the private-address guard."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fetch_support import UA, Server, fetcher, keep_alive, run, warc_writer

from webark.core.ids import seeded_record_ids
from webark.fetch import (
    S_BLOCKED_BY_USER,
    S_DNS_SUCCESS,
    S_DOMAIN_PREREQUISITE_FAILURE,
    S_DOMAIN_UNRESOLVABLE,
    DnsAnswer,
    Exchange,
    FetchError,
    HttpFetcher,
    OverrideResolver,
    SystemResolver,
    address_class,
    refusal,
)
from webark.warc.builders import RecordBuilder
from webark.warc.check import check_file
from webark.warc.reader import iter_records, read_record_at

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
NOON = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def noon() -> datetime:
    return NOON


class CountingResolver:
    """Answers every name with 127.0.0.3 (or fails), counting lookups."""

    def __init__(self, fail: bool = False):
        self.calls = 0
        self.fail = fail

    async def resolve(self, host: str) -> DnsAnswer:
        self.calls += 1
        if self.fail:
            return DnsAnswer(host, (), NOON, error="NXDOMAIN")
        return DnsAnswer(host, ("127.0.0.3",), NOON, ttl=60, server="127.0.0.53", source="test")


def test_override_sends_host_name_and_connects_to_address() -> None:
    async def go() -> tuple[Exchange, Server]:
        async with (
            Server(keep_alive(OK)) as srv,
            fetcher(resolve={"Example.TEST": "127.0.0.1"}) as f,
        ):
            ex = await f.fetch(srv.url("/p", host="example.test"))
        return ex, srv

    ex, srv = run(go())
    assert ex.ok and ex.ip_address == "127.0.0.1"
    assert f"\r\nHost: example.test:{srv.port}\r\n".encode() in ex.request


def test_idn_override() -> None:
    async def go() -> tuple[Exchange, Server]:
        async with (
            Server(keep_alive(OK)) as srv,
            fetcher(resolve={"bücher.test": "127.0.0.1"}) as f,
        ):
            ex = await f.fetch(srv.url(host="xn--bcher-kva.test"))
        return ex, srv

    ex, srv = run(go())
    assert ex.ok
    assert f"\r\nHost: xn--bcher-kva.test:{srv.port}\r\n".encode() in ex.request


def test_dns_record_as_heritrix_writes_it(tmp_warcs: Path) -> None:
    async def go() -> DnsAnswer:
        f = HttpFetcher(UA, resolve={"example.com": "127.0.0.2"}, clock=noon)
        return await f.lookup("EXAMPLE.com.")

    answer = run(go())
    assert answer.status == S_DNS_SUCCESS and answer.uri == "dns:example.com"
    assert answer.text() == b"20260101120000\nexample.com.\t300\tIN\tA\t127.0.0.2\n"
    builder = RecordBuilder(clock=noon, record_ids=seeded_record_ids(1))
    rec = answer.to_record(builder)
    assert rec.type == "response" and rec.target_uri == "dns:example.com"
    assert rec.headers.get("Content-Type") == "text/dns"
    assert rec.headers.get("WARC-Date") == "2026-01-01T12:00:00Z"
    assert rec.headers.get("WARC-Payload-Digest") is None
    assert rec.headers.get("WARC-IP-Address") is None  # no DNS server was asked
    with warc_writer(tmp_warcs, builder) as w:
        w.write(rec)
        path = w.paths[0]
    assert check_file(path).ok
    back = [r for r in iter_records(path) if r.type == "response"]
    assert back[0].block.read_all() == answer.text()


def test_dns_text_for_several_addresses() -> None:
    answer = DnsAnswer("example.org", ("192.0.2.1", "2001:db8::1"), NOON, ttl=86400)
    assert answer.text() == (
        b"20260101120000\n"
        b"example.org.\t86400\tIN\tA\t192.0.2.1\n"
        b"example.org.\t86400\tIN\tAAAA\t2001:db8::1\n"
    )


def test_resolver_answers_are_cached() -> None:
    resolver = CountingResolver()

    async def go() -> None:
        async with fetcher(resolver=resolver) as f:
            a1 = await f.lookup("a.test")
            a2 = await f.lookup("A.test")
            assert a1 is a2 and a1.server == "127.0.0.53"
            await f.lookup("a.test", fresh=True)
            f.forget("a.test")
            await f.lookup("a.test")

    run(go())
    assert resolver.calls == 3


def test_system_resolver_reads_localhost() -> None:
    """localhost comes from the hosts file: no DNS query leaves the machine."""

    async def go() -> DnsAnswer:
        return await SystemResolver(clock=noon).resolve("localhost")

    answer = run(go())
    assert answer.ok and answer.source == "system"
    assert set(answer.addresses) & {"127.0.0.1", "::1"}


def test_ip_literal_needs_no_lookup() -> None:
    async def go() -> DnsAnswer:
        return await HttpFetcher(UA, resolver=CountingResolver(fail=True)).lookup("[::1]")

    answer = run(go())
    assert answer.ok and answer.addresses == ("::1",) and answer.source == "literal"


def test_unresolvable_host() -> None:
    resolver = CountingResolver(fail=True)

    async def go() -> tuple[DnsAnswer, Exchange]:
        async with fetcher(resolver=resolver) as f:
            answer = await f.lookup("nowhere.test")
            ex = await f.fetch("http://nowhere.test/")
        return answer, ex

    answer, ex = run(go())
    assert answer.status == S_DOMAIN_UNRESOLVABLE and not answer.ok
    with pytest.raises(FetchError):
        answer.to_record(RecordBuilder())
    assert ex.status == S_DOMAIN_PREREQUISITE_FAILURE and ex.error is not None
    assert "nowhere.test" in ex.error.message and "NXDOMAIN" in ex.error.message
    assert resolver.calls == 2  # failures are not cached


def test_without_fallback_only_overrides_resolve() -> None:
    async def go() -> DnsAnswer:
        return await OverrideResolver({"a.test": ["127.0.0.1", "::1"]}).resolve("b.test")

    assert not run(go()).ok
    with pytest.raises(ValueError, match="not an IP address"):
        OverrideResolver({"a.test": "localhost"})


def test_guard_refuses_loopback_by_default() -> None:
    async def go() -> tuple[Exchange, Server]:
        async with Server(keep_alive(OK)) as srv, HttpFetcher(UA) as f:
            ex = await f.fetch(srv.url())
        return ex, srv

    ex, srv = run(go())
    assert ex.status == S_BLOCKED_BY_USER and ex.error is not None
    assert "127.0.0.1" in ex.error.message and "allow_private=True" in ex.error.message
    assert "loopback" in ex.error.message
    assert srv.connections == 0


def test_guard_checks_overridden_addresses() -> None:
    async def go() -> Exchange:
        async with HttpFetcher(UA, resolve={"intranet.test": "10.1.2.3"}) as f:
            return await f.fetch("http://intranet.test/")

    ex = run(go())
    assert ex.status == S_BLOCKED_BY_USER and ex.ip_address == "10.1.2.3"
    assert ex.error is not None and "10.1.2.3 (private address)" in ex.error.message


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("100.64.0.1", "non-global"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("64:ff9b::a00:1", "private"),
        ("93.184.215.14", None),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", None),
    ],
)
def test_address_classes(address: str, kind: str | None) -> None:
    assert address_class(address) == kind
    assert (refusal(address, allow_private=False) is None) == (kind is None)
    assert refusal(address, allow_private=True) is None


def test_user_agent_is_required() -> None:
    with pytest.raises(FetchError, match="User-Agent"):
        HttpFetcher("")
    with pytest.raises(FetchError):
        HttpFetcher("   ")


def test_dns_text_matches_heritrix_capture(corpus: Path) -> None:
    """Rebuild the dns: record Heritrix wrote in the jwat corpus file from its parts."""
    path = corpus / "jwat" / "warc" / "IAH-20080430204825-00000-blackbook.warc.gz"
    heritrix = read_record_at(path, 463)
    assert heritrix.target_uri == "dns:www.archive.org"
    text = heritrix.block.read_all()
    when = datetime.strptime(text[:14].decode(), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    answer = DnsAnswer("www.archive.org", ("207.241.229.39",), when, ttl=589)
    assert answer.text() == text
    rec = answer.to_record(RecordBuilder(version="WARC/1.0"))
    assert rec.headers.get("Content-Type") == heritrix.headers.get("Content-Type") == "text/dns"
    assert rec.headers.get("WARC-Date") == heritrix.headers.get("WARC-Date")
