"""The job file's ``browser:`` section: defaults, every value, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from webark.crawl.browser.config import BrowserSettings, Troublesome, browser_settings
from webark.crawl.job import JobConfigError, job_from_mapping, load_job_file

BASE = {"seeds": ["http://127.0.0.1:1/"], "job_dir": "j", "contact": "a@b.org"}


def test_defaults_of_an_empty_section() -> None:
    s = browser_settings({})
    assert s == BrowserSettings()
    assert (s.enabled, s.pool_size, s.viewport, s.load_timeout, s.behavior_timeout) == (
        True, 2, (1366, 768), 30.0, 30.0,
    )  # fmt: skip
    assert s.troublesome == Troublesome(3, 1, True, True)
    assert job_from_mapping(BASE).browser is None


def test_every_value_read(tmp_path: Path) -> None:
    job_file = tmp_path / "job.yaml"
    job_file.write_text(
        "seeds: [http://127.0.0.1:1/]\njob_dir: j\ncontact: a@b.org\n"
        "browser:\n  pool_size: 4\n  executable_path: /usr/bin/env\n  viewport: 800x600\n"
        "  load_timeout: 5\n  behavior_timeout: 2.5\n  screenshots: false\n"
        "  regex: ['/app/', '^https://spa\\.']\n  hosts: [Spa.Example.]\n"
        "  troublesome: {max_links: 0, min_scripts: 2, app_shell: false}\n"
    )
    job = job_from_mapping(load_job_file(job_file))
    assert job.browser is not None
    s = browser_settings(job.browser)
    assert s == BrowserSettings(
        enabled=True, pool_size=4, executable_path="/usr/bin/env", viewport=(800, 600),
        load_timeout=5.0, behavior_timeout=2.5, screenshots=False,
        regex=("/app/", r"^https://spa\."), hosts=("spa.example",),
        troublesome=Troublesome(max_links=0, min_scripts=2, app_shell=False, noscript=True),
    )  # fmt: skip
    assert browser_settings({"viewport": {"width": 1024, "height": 700}}).viewport == (1024, 700)
    assert browser_settings({"troublesome": False}).troublesome is None
    # the section survives job.json (resume)
    job.save()
    again = job_from_mapping(load_job_file(job.state_dir / "job.json"))
    assert again.browser == job.browser


def test_bad_section_lists_every_problem() -> None:
    bad = {
        "pool_size": 0, "viewport": "wide", "load_timeout": -1, "regex": ["(unclosed"],
        "hosts": ["https://spa.example/"], "troublesome": {"max_link": 2, "min_scripts": 0},
        "screenshot": True, "executable_path": "/no/such/chromium", "enabled": "yes",
    }  # fmt: skip
    with pytest.raises(JobConfigError) as e:
        job_from_mapping({**BASE, "browser": bad})
    keys = [k for k, _ in e.value.problems]
    assert keys == [
        "browser.screenshot", "browser.executable_path", "browser.enabled",
        "browser.pool_size", "browser.viewport", "browser.load_timeout", "browser.regex[0]",
        "browser.hosts[0]", "browser.troublesome.max_link", "browser.troublesome.min_scripts",
    ]  # fmt: skip
    text = str(e.value)
    assert "job config: browser.screenshot: unknown key; did you mean 'screenshots'?" in text
    assert "browser.pool_size: expected an integer 1 … 16, got 0" in text
    assert "browser.executable_path: /no/such/chromium is not a file" in text
    assert "browser.troublesome.max_link: unknown key; did you mean 'max_links'?" in text
    assert "browser.hosts[0]: expected a host name (no scheme, port or path)" in text
    with pytest.raises(JobConfigError, match="job config: browser: expected a mapping"):
        job_from_mapping({**BASE, "browser": ["regex"]})
    with pytest.raises(JobConfigError, match="unknown key; did you mean 'browser'"):
        job_from_mapping({**BASE, "browsr": {}})
