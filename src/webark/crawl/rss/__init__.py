"""Continuous crawling from RSS and Atom feeds (CrawlRSS's semantics, issue 14).

For high-value, fast-changing sites: each *site* has feeds, each feed its *implied
pages* (the section front page that changes when the feed gets an entry). A site's
*round* fetches all its feeds together once its minimum wait has passed; the entries
newer than each feed's most recent seen date, and the implied pages of the feeds that
had one, are fetched with their embeds; when every URI of the round is finished the
site waits again. An unchanged feed is a revisit and nothing else.

* :mod:`.settings` — the job file's ``rss:`` section;
* :mod:`.model`, :mod:`.interval` — sites, feeds, state; ``1h30m`` waits;
* :mod:`.store` — the SQLite database (configuration that changes while the crawl
  runs, and the feed and round state);
* :mod:`.entries` — which entries are new (feedparser reads the feeds);
* :mod:`.scheduler` — rounds, as a crawl extension (:mod:`webark.crawl.extension`);
* :mod:`.processor` — ``rssFeeds``, the disposition-chain processor that reads feeds;
* :mod:`.report` — the RSS report; :mod:`.control` — the operations of the CLI and the
  control API.

Everything goes through the bulk crawler's frontier (politeness, robots.txt, one request
at a time per host) and capture back end (WARCs, dedup, crawl.log).
"""
