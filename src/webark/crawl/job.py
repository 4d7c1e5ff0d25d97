"""Crawl job configuration: a YAML file and/or CLI options → a validated :class:`CrawlJob`.

A job file is a flat YAML mapping (keys below, :data:`JOB_KEYS`); CLI options override
it. Every error names the key and says how to fix it (:class:`JobConfigError`).

.. code-block:: yaml

    seeds: [https://example.org/]
    job_dir: jobs/example          # -o / --output
    contact: https://example.org/webarchive   # or archive@example.org; a list for both
    min_delay: 3.0                 # seconds (Heritrix minDelayMs 3000)
    max_delay: 30.0                # seconds (Heritrix maxDelayMs 30000)
    delay_factor: 5.0              # × last fetch duration (Heritrix delayFactor)
    max_uris: 1000                 # stop after this many successful fetches
    scope: {max_hops: 5}           # see webark.crawl.scope.build_scope
    dedup_index: ../crawl-1/state/dedup.sqlite   # recrawl: revisits of crawl-1's captures

The resolved job is saved as ``JOBDIR/state/job.json`` so ``webark crawl --resume
JOBDIR`` runs the same job.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from webark import __version__
from webark.core.errors import WebarkError
from webark.robots import RobotsMode

__all__ = ["JOB_KEYS", "CrawlJob", "JobConfigError", "job_from_mapping", "load_job_file"]

JOB_KEYS: dict[str, str] = {
    "seeds": "list of seed URLs (http/https)",
    "job_dir": "directory of the job: warcs/, logs/, reports/, state/",
    "contact": "operator contact put in the User-Agent: an http(s) URL and/or an e-mail",
    "operator": "operator name for the warcinfo record (default: the contact)",
    "job_name": "collection / job name (warcinfo isPartOf; default: the job_dir name)",
    "allow_private": "bool: allow private, loopback and link-local addresses",
    "workers": "int >= 1: concurrent fetches (over all hosts; one per host at a time)",
    "max_uris": "int >= 1: stop after this many successful fetches, robots.txt included "
    "(Heritrix maxDocumentsDownload; null = no limit)",
    "min_delay": "seconds >= 0 between fetches to one host (Heritrix minDelay, 3)",
    "max_delay": "seconds >= min_delay (Heritrix maxDelay, 30)",
    "delay_factor": "delay = delay_factor × fetch time, clamped (Heritrix delayFactor, 5)",
    "crawl_delay_cap": "robots.txt Crawl-delay honoured up to this many seconds (30)",
    "max_retries": "retries of network failures (Heritrix maxRetries, 30)",
    "retry_delay": "seconds between those retries (Heritrix retryDelaySeconds, 900)",
    "max_http_retries": "retries of 429/500/502/503/504 answers (3)",
    "backoff_base": "seconds of the first back-off after a 429/5xx (120), doubled after",
    "robots": "obey | ignore | obey-but-allow-embeds",
    "resolve": "mapping host → IP address (like curl --resolve)",
    "connect_timeout": "seconds (20)",
    "read_timeout": "seconds (20)",
    "max_fetch_bytes": "bytes recorded per response, 0 = unlimited (lenTrunc beyond)",
    "warc_prefix": "WARC file name prefix (WEBARK)",
    "warc_max_size": "bytes before a WARC file is rotated (10^9)",
    "dns_records": "bool, default true: record each host's lookup as a dns: URI (Heritrix)",
    "dedup": "bool: digest dedup against JOBDIR/state/dedup.sqlite (revisit records)",
    "dedup_index": "path of a dedup index shared with other jobs (e.g. the previous crawl's "
    "state/dedup.sqlite, or one from `webark dedup build`); implies dedup: true",
    "conditional_requests": "bool, default true: with dedup, send If-None-Match / "
    "If-Modified-Since from the URL's last capture; a 304 becomes a server-not-modified revisit",
    "scope": "mapping of scope options (see webark.crawl.scope.SCOPE_KEYS)",
}

_EMAIL = re.compile(r"^[^@\s<>;()]+@[^@\s<>;()]+\.[^@\s<>;()]+$")


class JobConfigError(WebarkError, ValueError):
    """A job configuration that cannot be used.

    Attributes:
        key: the offending key (``"min_delay"``, ``"seeds[2]"``).
        reason: what is wrong and how to fix it.
    """

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        self.reason = reason
        super().__init__(f"job config: {key}: {reason}")


@dataclass(frozen=True)
class CrawlJob:
    """A validated crawl job. Durations in seconds, sizes in bytes.

    Defaults are Heritrix 3's where it has one (politeness 5× / 3 s / 30 s, 30 retries
    900 s apart, robots obeyed); see :data:`JOB_KEYS` for each key.
    """

    seeds: tuple[str, ...]
    job_dir: Path
    contact: tuple[str, ...]
    operator: str | None = None
    job_name: str | None = None
    allow_private: bool = False
    workers: int = 10
    max_uris: int | None = None
    min_delay: float = 3.0
    max_delay: float = 30.0
    delay_factor: float = 5.0
    crawl_delay_cap: float = 30.0
    max_retries: int = 30
    retry_delay: float = 900.0
    max_http_retries: int = 3
    backoff_base: float = 120.0
    robots: str = RobotsMode.OBEY.value
    resolve: Mapping[str, str] = field(default_factory=dict)
    connect_timeout: float = 20.0
    read_timeout: float = 20.0
    max_fetch_bytes: int = 0
    warc_prefix: str = "WEBARK"
    warc_max_size: int = 10**9
    dedup: bool = False
    dedup_index: Path | None = None
    conditional_requests: bool = True
    dns_records: bool = True
    scope: Mapping[str, Any] = field(default_factory=dict)

    # -- derived -------------------------------------------------------------------
    @property
    def contact_url(self) -> str | None:
        return next((c for c in self.contact if "://" in c), None)

    @property
    def contact_email(self) -> str | None:
        return next((c for c in self.contact if "://" not in c), None)

    @property
    def user_agent(self) -> str:
        """``webark/VERSION (+URL; EMAIL)``: who runs the crawler and how to reach them
        (Heritrix requires ``+http…`` in its user agent template for the same reason)."""
        parts = []
        if self.contact_url:
            parts.append("+" + self.contact_url)
        if self.contact_email:
            parts.append(self.contact_email)
        return f"webark/{__version__} ({'; '.join(parts)})"

    @property
    def robots_token(self) -> str:
        """The product token matched against robots.txt ``User-agent`` lines."""
        return "webark"

    @property
    def dedup_path(self) -> Path:
        """The dedup index used when dedup is on: ``dedup_index``, else
        ``JOBDIR/state/dedup.sqlite``."""
        return self.dedup_index or self.state_dir / "dedup.sqlite"

    @property
    def warcs_dir(self) -> Path:
        return self.job_dir / "warcs"

    @property
    def logs_dir(self) -> Path:
        return self.job_dir / "logs"

    @property
    def reports_dir(self) -> Path:
        return self.job_dir / "reports"

    @property
    def state_dir(self) -> Path:
        return self.job_dir / "state"

    def to_json(self) -> dict[str, Any]:
        """The job as plain data (:func:`job_from_mapping` reads it back)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Path):
                v = str(v)
            elif isinstance(v, tuple):
                v = list(v)
            elif isinstance(v, Mapping):
                v = dict(v)
            out[f.name] = v
        return out

    def save(self) -> Path:
        """Write ``state/job.json`` (for ``--resume``) and return its path."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        path = self.state_dir / "job.json"
        path.write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")
        return path


# --- validation ---------------------------------------------------------------------


def _number(cfg: Mapping[str, Any], key: str, default: float, *, integer: bool = False) -> Any:
    v = cfg.get(key)
    if v is None:
        return default
    kind = "an integer" if integer else "a number"
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise JobConfigError(key, f"expected {kind}, got {v!r}")
    if integer and not isinstance(v, int):
        raise JobConfigError(key, f"expected {kind}, got {v!r}")
    if not math.isfinite(v) or v < 0:
        raise JobConfigError(key, f"must be >= 0, got {v!r}")
    return v


def _bool(cfg: Mapping[str, Any], key: str, default: bool) -> bool:
    v = cfg.get(key)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise JobConfigError(key, f"expected true or false, got {v!r}")
    return v


def _strings(cfg: Mapping[str, Any], key: str) -> list[str]:
    v = cfg.get(key)
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if not isinstance(v, list | tuple) or not all(isinstance(s, str) for s in v):
        raise JobConfigError(key, f"expected a string or a list of strings, got {v!r}")
    return [s.strip() for s in v if s.strip()]


def _check_contact(items: list[str]) -> tuple[str, ...]:
    if not items:
        raise JobConfigError(
            "contact",
            "an operator contact is required (it goes into the User-Agent so site owners "
            "can reach you): pass --contact https://your.org/crawler or "
            "--contact archive@your.org, or set `contact:` in the job file",
        )
    for i, c in enumerate(items):
        if "://" in c:
            p = urlsplit(c)
            if p.scheme not in ("http", "https") or not p.hostname or " " in c:
                raise JobConfigError(f"contact[{i}]", f"not an http(s) URL: {c!r}")
        elif not _EMAIL.match(c):
            raise JobConfigError(
                f"contact[{i}]", f"neither an http(s) URL nor an e-mail address: {c!r}"
            )
    return tuple(items)


def _check_seeds(items: list[str]) -> tuple[str, ...]:
    if not items:
        raise JobConfigError("seeds", "at least one seed URL is needed (--seed URL)")
    for i, s in enumerate(items):
        p = urlsplit(s)
        if p.scheme not in ("http", "https") or not p.hostname:
            raise JobConfigError(f"seeds[{i}]", f"not an absolute http(s) URL: {s!r}")
    return tuple(items)


def _check_resolve(v: Any) -> dict[str, str]:
    if v is None:
        return {}
    if isinstance(v, list | tuple):  # ["host:ip", ...] as on the command line
        out: dict[str, str] = {}
        for i, item in enumerate(v):
            host, sep, ip = str(item).partition(":")
            if not sep or not host or not ip:
                raise JobConfigError(f"resolve[{i}]", f"expected HOST:IP, got {item!r}")
            out[host.lower()] = ip
        return out
    if not isinstance(v, Mapping):
        raise JobConfigError("resolve", "expected a mapping host: ip")
    return {str(k).lower(): str(ip) for k, ip in v.items()}


def job_from_mapping(cfg: Mapping[str, Any], *, base_dir: Path | None = None) -> CrawlJob:
    """Validate a job mapping (from YAML, JSON or CLI options).

    Args:
        cfg: the keys of :data:`JOB_KEYS`; ``None`` values mean "default".
        base_dir: relative ``job_dir`` is taken relative to it (the job file's folder).

    Raises:
        JobConfigError: unknown key (with a close match), wrong type or value.
    """
    if not isinstance(cfg, Mapping):
        raise JobConfigError("job", "the job file must hold a mapping of keys")
    for key in cfg:
        if key not in JOB_KEYS:
            close = difflib.get_close_matches(str(key), JOB_KEYS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise JobConfigError(str(key), f"unknown key; {hint}known keys: {', '.join(JOB_KEYS)}")
    seeds = _check_seeds(_strings(cfg, "seeds"))
    contact = _check_contact(_strings(cfg, "contact"))
    jd = cfg.get("job_dir")
    if not jd or not isinstance(jd, str | Path):
        raise JobConfigError("job_dir", "a job directory is required (-o JOBDIR)")
    job_dir = Path(jd)
    if base_dir is not None and not job_dir.is_absolute():
        job_dir = base_dir / job_dir
    min_delay = float(_number(cfg, "min_delay", 3.0))
    max_delay = float(_number(cfg, "max_delay", max(30.0, min_delay)))
    if min_delay > max_delay:
        raise JobConfigError(
            "max_delay", f"must be >= min_delay ({max_delay} < {min_delay}); raise max_delay"
        )
    workers = int(_number(cfg, "workers", 10, integer=True))
    if workers < 1:
        raise JobConfigError("workers", "must be at least 1")
    max_uris = cfg.get("max_uris")
    if max_uris is not None:
        max_uris = int(_number(cfg, "max_uris", 0, integer=True))
        if max_uris < 1:
            raise JobConfigError("max_uris", "must be at least 1 (or null for no limit)")
    robots = cfg.get("robots", RobotsMode.OBEY.value)
    try:
        robots = RobotsMode(robots).value
    except ValueError:
        modes = ", ".join(m.value for m in RobotsMode)
        raise JobConfigError("robots", f"expected one of {modes}, got {robots!r}") from None
    for key in ("connect_timeout", "read_timeout"):
        if cfg.get(key) is not None and not _number(cfg, key, 1.0) > 0:
            raise JobConfigError(key, "must be a positive number of seconds")
    scope = cfg.get("scope") or {}
    if not isinstance(scope, Mapping):
        raise JobConfigError("scope", "expected a mapping of scope options")
    from webark.crawl.scope import ScopeConfigError, build_scope

    try:  # a typo in a scope key is a configuration error like any other
        build_scope(scope, seeds)
    except ScopeConfigError as e:
        raise JobConfigError(f"scope.{e.key}", e.reason) from None
    prefix = cfg.get("warc_prefix", "WEBARK")
    if not isinstance(prefix, str) or not prefix or "/" in prefix:
        raise JobConfigError("warc_prefix", f"expected a file name prefix, got {prefix!r}")
    warc_max = int(_number(cfg, "warc_max_size", 10**9, integer=True))
    if warc_max < 1:
        raise JobConfigError("warc_max_size", "must be a positive number of bytes")
    for key in ("operator", "job_name"):
        if cfg.get(key) is not None and not isinstance(cfg.get(key), str):
            raise JobConfigError(key, "expected a string")
    dedup_index = cfg.get("dedup_index")
    if dedup_index is not None:
        if not isinstance(dedup_index, str | Path) or not str(dedup_index):
            raise JobConfigError("dedup_index", f"expected a file path, got {dedup_index!r}")
        dedup_index = Path(dedup_index)
        if base_dir is not None and not dedup_index.is_absolute():
            dedup_index = base_dir / dedup_index
        if not dedup_index.is_file():
            raise JobConfigError(
                "dedup_index",
                f"{dedup_index} is not a file: give the state/dedup.sqlite of an earlier job "
                "crawled with 'dedup: true', or make one with 'webark dedup build' "
                "(a relative path is taken from the job file's folder)",
            )
    return CrawlJob(
        seeds=seeds,
        job_dir=job_dir,
        contact=contact,
        operator=cfg.get("operator"),
        job_name=cfg.get("job_name"),
        allow_private=_bool(cfg, "allow_private", False),
        workers=workers,
        max_uris=max_uris,
        min_delay=min_delay,
        max_delay=max_delay,
        delay_factor=float(_number(cfg, "delay_factor", 5.0)),
        crawl_delay_cap=float(_number(cfg, "crawl_delay_cap", 30.0)),
        max_retries=int(_number(cfg, "max_retries", 30, integer=True)),
        retry_delay=float(_number(cfg, "retry_delay", 900.0)),
        max_http_retries=int(_number(cfg, "max_http_retries", 3, integer=True)),
        backoff_base=float(_number(cfg, "backoff_base", 120.0)),
        robots=robots,
        resolve=_check_resolve(cfg.get("resolve")),
        connect_timeout=float(_number(cfg, "connect_timeout", 20.0)),
        read_timeout=float(_number(cfg, "read_timeout", 20.0)),
        max_fetch_bytes=int(_number(cfg, "max_fetch_bytes", 0, integer=True)),
        warc_prefix=prefix,
        warc_max_size=warc_max,
        dedup=_bool(cfg, "dedup", False) or dedup_index is not None,
        dedup_index=dedup_index,
        conditional_requests=_bool(cfg, "conditional_requests", True),
        dns_records=_bool(cfg, "dns_records", True),
        scope=dict(scope),
    )


def load_job_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML (or JSON) job file into a mapping; ``job_dir`` relative to the file.

    Raises:
        JobConfigError: the file cannot be read or is not a YAML mapping.
    """
    import yaml

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise JobConfigError("job", f"cannot read {p}: {e.strerror or e}") from e
    except yaml.YAMLError as e:
        raise JobConfigError("job", f"{p} is not valid YAML: {e}") from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise JobConfigError("job", f"{p} must hold a mapping of keys, not {type(data).__name__}")
    for key in ("job_dir", "dedup_index"):
        v = data.get(key)
        if isinstance(v, str) and not Path(v).is_absolute():
            data[key] = str(p.parent / v)
    return data
