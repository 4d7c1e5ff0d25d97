"""The job file's sections that are crawl extensions of their own (``rss:``, continuous
crawling; ``browser:``, the hybrid crawl): each validated by its own module, its
problems reported under the section's key (``rss.sites[0].name``,
``browser.pool_size``) like those of any other job key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from webark.core.errors import KeyedConfigError

__all__ = ["browser_section", "rss_section"]


def _section(
    cfg: Mapping[str, Any], key: str, validate: Callable[[Any], object]
) -> dict[str, Any] | None:
    """``cfg[key]`` checked by ``validate`` (which raises a :class:`KeyedConfigError`);
    None when absent or null.

    Raises:
        JobConfigError: every problem ``validate`` found, keyed ``KEY.subkey``.
    """
    if cfg.get(key) is None:
        return None
    from webark.crawl.job import JobConfigError

    try:
        validate(cfg[key])
    except KeyedConfigError as e:
        problems = tuple((key if k == key else f"{key}.{k}", r) for k, r in e.problems)
        raise JobConfigError(*problems[0], problems) from None
    return dict(cfg[key])


def rss_section(cfg: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``rss:`` section, validated (:func:`webark.crawl.rss.settings.rss_settings`);
    None when absent or null (``rss: {}`` is continuous crawling of the database's sites)."""
    from webark.crawl.rss.settings import rss_settings

    return _section(cfg, "rss", rss_settings)


def browser_section(cfg: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``browser:`` section, validated
    (:func:`webark.crawl.browser.config.browser_settings`); None when absent or null
    (``browser: {}`` is the hybrid crawl with every default)."""
    from webark.crawl.browser.config import browser_settings

    return _section(cfg, "browser", browser_settings)
