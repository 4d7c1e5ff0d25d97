"""Registered domains and public suffixes from tldextract's bundled Public Suffix List,
without the network."""

from __future__ import annotations

import socket

import pytest

from webark.url import domains, public_prefix, public_suffix, registered_domain


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("www.fool.com", "fool.com"),  # IA handyurl tests (getPublicSuffix)
        ("www.amazon.co.uk", "amazon.co.uk"),
        ("www.images.amazon.co.uk", "amazon.co.uk"),
        ("funky-images.fancy.co.jp", "fancy.co.jp"),
        ("WWW.Example.COM.", "example.com"),
        ("example.com", "example.com"),
        ("xn--landsbkasafn-5hb.is", "xn--landsbkasafn-5hb.is"),
        ("www.landsbókasafn.is", "landsbókasafn.is"),
        ("www.bbc.co.uk", "bbc.co.uk"),
        ("timmknibbs4senate.blogspot.com", "blogspot.com"),
        ("co.uk", ""),
        ("com", ""),
        ("localhost", ""),
        ("", ""),
        ("192.0.2.1", "192.0.2.1"),
        ("[2001:db8::1]", "2001:db8::1"),
    ],
)
def test_registered_domain(host: str, expected: str) -> None:
    assert registered_domain(host) == expected


def test_private_section_of_the_list() -> None:
    assert registered_domain("timmknibbs4senate.blogspot.com", include_private=True) == (
        "timmknibbs4senate.blogspot.com"
    )
    assert public_suffix("timmknibbs4senate.blogspot.com", include_private=True) == ("blogspot.com")
    assert public_suffix("timmknibbs4senate.blogspot.com") == "com"


@pytest.mark.parametrize(
    ("host", "suffix", "prefix"),
    [
        ("www.fool.com", "com", "www"),  # IA handyurl tests (getPublicPrefix)
        ("www.amazon.co.uk", "co.uk", "www"),
        ("www.images.amazon.co.uk", "co.uk", "www.images"),
        ("funky-images.fancy.co.jp", "co.jp", "funky-images"),
        ("example.com", "com", ""),
        ("localhost", "", ""),
        ("10.0.0.1", "", ""),
        ("", "", ""),
    ],
)
def test_public_suffix_and_prefix(host: str, suffix: str, prefix: str) -> None:
    assert public_suffix(host) == suffix
    assert public_prefix(host) == prefix


def test_bundled_snapshot_only_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """tldextract must use its bundled PSL snapshot: with every way to open a connection
    or resolve a name failing, lookups still work (from a fresh extractor)."""

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("tldextract tried to use the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    domains._extractor.cache_clear()
    domains._split.cache_clear()
    try:
        assert registered_domain("forums.news.cnn.com") == "cnn.com"
        assert registered_domain("www.parliament.uk") == "parliament.uk"
        assert public_suffix("a.b.c.kawasaki.jp") == "c.kawasaki.jp"
    finally:
        domains._extractor.cache_clear()
        domains._split.cache_clear()
