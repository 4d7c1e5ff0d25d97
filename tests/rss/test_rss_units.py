"""Units of continuous crawling: which entries are new (feedparser on real RSS 2.0,
Atom and RSS 1.0 documents), minimum waits, the job section's errors, the database's
configuration rules, the RSS report, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from webark.cli.main import cli
from webark.crawl.job import JobConfigError, job_from_mapping
from webark.crawl.rss.entries import Entry, FeedMemory, ParsedFeed, new_entries, parse_feed
from webark.crawl.rss.interval import IntervalError, format_interval, parse_interval
from webark.crawl.rss.model import RssConfigError
from webark.crawl.rss.settings import RssSettingsError, rss_settings
from webark.crawl.rss.store import RssStore

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><title>b</title><link>/b.html</link><guid>id-b</guid>
<pubDate>Tue, 01 Dec 2026 10:00:00 GMT</pubDate></item>
<item><title>a</title><link>http://n.test/a.html</link>
<pubDate>Tue, 01 Dec 2026 09:00:00 GMT</pubDate></item>
<item><title>undated</title><link>http://n.test/u.html</link></item>
<item><title>no link</title><description>x</description></item>
<item><title>mail</title><link>mailto:x@n.test</link></item>
</channel></rss>"""
ATOM = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:f</id>
<updated>2026-12-01T10:00:00Z</updated>
<entry><id>urn:1</id><title>1</title><link href="one.html"/>
<published>2026-12-01T08:00:00Z</published><updated>2026-12-01T10:00:00Z</updated></entry>
<entry><id>urn:2</id><title>2</title><link rel="alternate" href="http://n.test/two.html"/>
<published>2026-12-01T09:00:00Z</published></entry></feed>"""
RDF = b"""<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
 xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://n.test/"><title>t</title><link>http://n.test/</link></channel>
<item rdf:about="http://n.test/r.html"><title>r</title><link>http://n.test/r.html</link>
<dc:date>2026-12-01T07:00:00Z</dc:date></item></rdf:RDF>"""
T10 = 1796119200.0  # 2026-12-01T10:00:00Z


def test_parse_rss_atom_rdf() -> None:
    f = parse_feed(RSS, "http://n.test/feeds/rss.xml", "application/rss+xml; charset=utf-8")
    assert [(e.link, e.key, e.date) for e in f.entries] == [
        # a relative link resolves against the feed's URL (so does a permalink guid)
        ("http://n.test/b.html", "http://n.test/feeds/id-b", T10),
        ("http://n.test/a.html", "http://n.test/a.html", T10 - 3600),  # no guid: the link
        ("http://n.test/u.html", "http://n.test/u.html", None),
    ]
    assert f.skipped == 2 and f.error is None
    a = parse_feed(ATOM, "http://n.test/atom/x.xml")
    assert [(e.link, e.key, e.date) for e in a.entries] == [
        ("http://n.test/atom/one.html", "urn:1", T10),  # updated, not published
        ("http://n.test/two.html", "urn:2", T10 - 3600),  # published when not updated
    ]
    r = parse_feed(RDF, "http://n.test/rdf")
    assert [(e.link, e.date) for e in r.entries] == [("http://n.test/r.html", T10 - 3 * 3600)]


def test_broken_input_is_no_entries_never_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.xml"
    secret.write_bytes(RSS)
    # feedparser opens a file (or fetches a URL) named by a str/bytes argument
    got = parse_feed(str(secret).encode(), "http://n.test/f")
    assert got.entries == () and got.error
    assert parse_feed(b"\x00\xff<rss", "http://n.test/f").entries == ()
    bomb = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">'
            b']><rss version="2.0"><channel><item><title>&c;</title><link>http://n.test/1</link>'
            b"</item></channel></rss>")  # fmt: skip
    assert len(parse_feed(bomb, "http://n.test/f").entries) <= 1


def test_new_entries_by_date_and_key() -> None:
    feed = parse_feed(RSS, "http://n.test/rss.xml")
    first = new_entries(feed, FeedMemory(), now=T10)
    assert first.links == ("http://n.test/b.html", "http://n.test/a.html", "http://n.test/u.html")
    assert (first.dated, first.undated) == (2, 1)
    assert first.memory.most_recent == T10
    assert first.memory.keys_at_most_recent == {"http://n.test/id-b"}
    again = new_entries(feed, first.memory, now=T10 + 60)
    assert again.links == () and again.old == 3
    # another entry in the same second as the most recent one is new; an older one not
    same = ParsedFeed((Entry("http://n.test/c.html", "id-c", T10),
                       Entry("http://n.test/old.html", "id-o", T10 - 1)))  # fmt: skip
    got = new_entries(same, again.memory, now=T10 + 60)
    assert got.links == ("http://n.test/c.html",)
    assert got.memory.keys_at_most_recent == {"http://n.test/id-b", "id-c"}


def test_undated_entries_once_then_forgotten() -> None:
    feed = ParsedFeed((Entry("http://n.test/u1", "u1", None),))
    one = new_entries(feed, FeedMemory(), now=1000.0)
    assert one.links == ("http://n.test/u1",)
    assert new_entries(feed, one.memory, now=2000.0).links == ()
    gone = new_entries(ParsedFeed(()), one.memory, now=1000.0 + 31 * 86400)
    assert "u1" not in gone.memory.undated  # absent for more than 30 days: forgotten


def test_future_dates_do_not_hide_later_entries() -> None:
    now = T10
    wrong = ParsedFeed((Entry("http://n.test/y2099", "y", 4070908800.0),
                        Entry("http://n.test/ok", "ok", now - 10)))  # fmt: skip
    first = new_entries(wrong, FeedMemory(), now=now)
    assert set(first.links) == {"http://n.test/y2099", "http://n.test/ok"}
    assert first.memory.most_recent == now - 10  # the year-2099 entry did not move it
    later = ParsedFeed((Entry("http://n.test/next", "n", now + 5), *wrong.entries))
    assert new_entries(later, first.memory, now=now + 20).links == ("http://n.test/next",)


def test_intervals() -> None:
    assert parse_interval("1h30m") == 5400.0
    assert parse_interval("2d") == 172800.0 and parse_interval(90) == 90.0
    assert parse_interval("0.5s") == 0.5 and parse_interval("45") == 45.0
    assert format_interval(5400) == "1h30m" and format_interval(0.5) == "0.5s"
    for bad in ("30m1h", "1x", "", "-5", "1h1h", True, float("nan")):
        with pytest.raises(IntervalError):
            parse_interval(bad)  # type: ignore[arg-type]


def test_job_section_errors_all_at_once(tmp_path: Path) -> None:
    base = {"job_dir": str(tmp_path / "j"), "contact": "a@example.org"}
    job = job_from_mapping({**base, "rss": {}})
    assert job.seeds == () and job.dedup and job.rss == {}
    with pytest.raises(JobConfigError) as e:
        job_from_mapping({**base, "dedup": False, "rss": {
            "sites": [{"name": "bad name", "min_wait": "soon",
                       "feeds": ["ftp://x/feed", {"uri": "http://ok.test/f", "implied": []}]},
                      {"name": "b", "feeds": ["http://ok.test/f"]}],
            "hops_regex": "(", "poll": 3}})  # fmt: skip
    keys = {k for k, _ in e.value.problems}
    assert keys >= {"dedup", "rss.sites[0].name", "rss.sites[0].min_wait",
                    "rss.sites[0].feeds[0].uri", "rss.sites[0].feeds[1].implied",
                    "rss.hops_regex", "rss.poll"}, keys  # fmt: skip
    with pytest.raises(RssSettingsError) as e2:
        rss_settings({"sites": [{"name": "a", "feeds": ["http://n.test/f"]},
                                {"name": "b", "feeds": ["http://n.test/f"]}]})  # fmt: skip
    assert "belongs to two sites" in str(e2.value)
    with pytest.raises(JobConfigError) as e:
        job_from_mapping(base)
    assert "rss: section" in str(e.value)
    s = rss_settings({"sites": [{"name": "n", "min_wait": "10m", "feeds": ["http://N.test/f"]}]})
    assert s.sites[0].min_wait == 600.0 and s.sites[0].feeds[0].uri == "http://n.test/f"
    with pytest.raises(RssSettingsError):
        rss_settings({"scope": {"reject_regex": ["("]}})


def test_store_rules(tmp_path: Path) -> None:
    with RssStore.open(tmp_path / "rss.sqlite") as st:
        st.add_site("news", min_wait=600)
        st.add_feed("news", "http://n.test/f.xml", implied_pages=["http://n.test/"])
        for bad in (lambda: st.add_site("news"), lambda: st.add_site("a/b"),
                    lambda: st.add_feed("nope", "http://n.test/g"),
                    lambda: st.add_feed("news", "http://n.test/f.xml"),
                    lambda: st.add_feed("news", "file:///etc/passwd"),
                    lambda: st.change_site("news", min_wait=-1),
                    lambda: st.remove_implied_page("http://n.test/f.xml", "http://n.test/x")):
            with pytest.raises(RssConfigError):
                bad()  # fmt: skip
        assert st.change_site("news", active=False).active is False
        feed = st.add_implied_page("http://n.test/f.xml", "http://n.test/sec/")
        assert feed.implied_pages == ("http://n.test/", "http://n.test/sec/")
        v = st.data_version()
        with RssStore.open(tmp_path / "rss.sqlite") as other:
            other.change_site("news", min_wait=5)
        assert st.data_version() != v  # what a running crawl polls
        assert st.site("news").min_wait == 5


def test_cli_verbs(tmp_path: Path) -> None:
    r = CliRunner()
    jd = str(tmp_path / "job")
    assert r.invoke(cli, ["rss", "list", jd]).exit_code == 2  # no database yet
    assert r.invoke(cli, ["rss", "site", "add", jd, "news", "--min-wait", "1h30m"]).exit_code == 0
    out = r.invoke(cli, ["rss", "feed", "add", jd, "news", "http://n.test/f.xml",
                         "--implied", "http://n.test/"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert r.invoke(cli, ["rss", "site", "change", jd, "news", "--min-wait", "x"]).exit_code == 2
    bad = r.invoke(cli, ["rss", "feed", "add", jd, "other", "http://n.test/g.xml"])
    assert bad.exit_code == 1 and "no site 'other'" in bad.output
    assert r.invoke(cli, ["rss", "feed", "deactivate", jd, "http://n.test/f.xml"]).exit_code == 0
    assert r.invoke(cli, ["rss", "implied", "add", jd, "http://n.test/f.xml",
                          "http://n.test/s/"]).exit_code == 0  # fmt: skip
    listing = json.loads(r.invoke(cli, ["rss", "list", jd, "--json"]).output)
    assert listing[0]["name"] == "news" and listing[0]["min_wait"] == 5400.0
    assert listing[0]["feeds"][0]["active"] is False
    assert listing[0]["feeds"][0]["implied_pages"] == ["http://n.test/", "http://n.test/s/"]
    text = r.invoke(cli, ["rss", "list", jd]).output
    assert "news: WAITING" in text and "min wait 1h30m" in text
    assert "implied http://n.test/s/" in text
