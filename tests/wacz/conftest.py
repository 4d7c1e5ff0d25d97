"""The crawl the page-list and WACZ tests share: :mod:`wacz_site` crawled once with the
``webark crawl`` CLI; ``(site, job folder)`` (the site is stopped afterwards, its URLs
are what the job holds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sites import TestSite
from wacz_site import PAGES, crawl_site


@pytest.fixture(scope="session")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestSite, Path]:
    job = tmp_path_factory.mktemp("wacz-site") / "job"
    with TestSite(PAGES) as site:
        res = crawl_site(site, job)
    assert res.returncode == 0, res.stderr
    return site, job
