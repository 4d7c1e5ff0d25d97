"""The crawler (layer L4): CrawlURI, frontier, politeness, decide rules, extractors."""
