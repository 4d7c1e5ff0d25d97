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
import ipaddress
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from webark import __version__
from webark.core.errors import KeyedConfigError
from webark.crawl.extract import MAX_OUTLINKS
from webark.crawl.job_sections import browser_section, rss_section
from webark.dedup.policy import DedupPolicy
from webark.robots import RobotsMode

__all__ = [
    "JOB_KEYS",
    "CrawlJob",
    "JobConfigError",
    "check_hosts",
    "job_from_mapping",
    "load_job_file",
]

JOB_KEYS: dict[str, str] = {
    "seeds": "list of seed URLs (http/https)",
    "job_dir": "directory of the job: warcs/, logs/, reports/, state/",
    "contact": "operator contact put in the User-Agent: an http(s) URL and/or an e-mail",
    "operator": "operator name for the warcinfo record (default: the contact)",
    "job_name": "collection / job name (warcinfo isPartOf; default: the job_dir name)",
    "allow_private": "bool: allow private, loopback and link-local addresses",
    "workers": "int >= 1: concurrent fetches (over all hosts; one per host at a time)",
    "max_uris": "int >= 1: stop after this many successful fetches of frontier URIs; the "
    "dns: and robots.txt prerequisites are not counted (Heritrix's maxDocumentsDownload "
    "counts them: its downloadedUriCount includes prerequisites); null = no limit",
    "max_bytes": "int >= 1: stop after this many bytes downloaded (Heritrix maxBytesDownload)",
    "max_uris_per_host": "int >= 1: successful fetches per host (its robots.txt not "
    "counted), then its other URIs are logged -5003, Q:hostQuota (Heritrix QuotaEnforcer)",
    "max_bytes_per_host": "int >= 1: bytes downloaded per host, then as max_uris_per_host",
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
    "resolve_only": "bool, default false: look up no name through the system resolver; a "
    "host without a resolve entry fails as unresolvable (-6; tests and demos on loopback)",
    "connect_timeout": "seconds (20)",
    "read_timeout": "seconds (20)",
    "total_timeout": "seconds for a whole fetch (1200, Heritrix timeoutSeconds; timeTrunc)",
    "max_fetch_bytes": "bytes recorded per response (2^30 = 1 GiB), 0 = unlimited; a longer "
    "response is kept cut (WARC-Truncated: length, crawl.log lenTrunc)",
    "progress_interval": "seconds between two lines of logs/progress-statistics.log "
    "(Heritrix intervalSeconds, 20)",
    "stop_grace": "seconds a graceful stop lets in-flight fetches run (30); then they are "
    "aborted and their URIs stay queued for --resume",
    "max_outlinks": "int >= 1: outlinks kept per document (Heritrix maxOutlinks, 6000); "
    "the others are counted in crawl.log as dol:N",
    "warc_prefix": "WARC file name prefix (WEBARK)",
    "warc_max_size": "bytes before a WARC file is rotated (10^9)",
    "warc_compression": "gzip (per record, default) | zstd | none",
    "hybrid_compression": "bool, default false: already-compressed media (video, audio, "
    "images, zip) in uncompressed .warc files beside the .warc.gz (replay seeks for ranges)",
    "dns_records": "bool, default true: record each host's lookup as a dns: URI (Heritrix)",
    "pages": "bool, default true: write pages/pages.jsonl (json-pages-1.0, WACZ's page list: "
    "seeds and HTML pages reached by links, with titles) at the end of the crawl; it reads "
    "the job's WARCs once more (`webark wacz pages JOBDIR` writes it later instead)",
    "dedup": "bool: digest dedup against JOBDIR/state/dedup.sqlite (revisit records)",
    "dedup_index": "path of a dedup index shared with other jobs (e.g. the previous crawl's "
    "state/dedup.sqlite, or one from `webark dedup build`); implies dedup: true",
    "conditional_requests": "bool, default true: with dedup, send If-None-Match / "
    "If-Modified-Since from the URL's last capture; a 304 becomes a server-not-modified revisit",
    "dedup_policy": "mapping: which captures are deduplicated: statuses, skip_mime_types, "
    "only_mime_types, min_size, empty_payload (see webark.dedup.policy.POLICY_KEYS)",
    "scope": "mapping of scope options (see webark.crawl.scope.SCOPE_KEYS)",
    "hosts": "mapping queue key (host, or host:port) → {min_delay, max_delay, delay_factor, "
    "max_uris, max_bytes} for that host only (Heritrix per-host sheet overlays); the "
    "control API's POST /hosts changes it while the crawl runs",
    "rss": "mapping: continuous crawling from RSS/Atom feeds (sites, hops_regex, scope, "
    "poll_interval, database; see webark.crawl.rss.settings.RSS_KEYS); seeds may be empty",
    "browser": "mapping: hybrid crawling, URIs delegated to a browser pool (enabled, pool_size, "
    "regex, hosts, troublesome, …; see webark.crawl.browser.config.BROWSER_KEYS)",
}

MAX_FETCH_BYTES = 1 << 30
"""Default ``max_fetch_bytes``: 1 GiB recorded per response. Heritrix's
``maxLengthBytes`` is unlimited by default, but an endless body (a hostile or broken
server) would then be spooled until the total timeout: tens of GB at loopback speed."""

CODECS = ("gzip", "zstd", "none")
"""Values of ``warc_compression`` (:class:`~webark.warc.writer.WarcWriter`'s codecs)."""

_EMAIL = re.compile(r"^[^@\s<>;()]+@[^@\s<>;()]+\.[^@\s<>;()]+$")


class JobConfigError(KeyedConfigError):
    """A job configuration that cannot be used (every mistake found: ``problems``)."""

    label = "job config"


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
    max_bytes: int | None = None
    max_uris_per_host: int | None = None
    max_bytes_per_host: int | None = None
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
    resolve_only: bool = False
    total_timeout: float = 1200.0
    max_fetch_bytes: int = MAX_FETCH_BYTES
    stop_grace: float = 30.0
    progress_interval: float = 20.0
    max_outlinks: int = MAX_OUTLINKS
    warc_prefix: str = "WEBARK"
    warc_max_size: int = 10**9
    warc_compression: str = "gzip"
    hybrid_compression: bool = False
    dedup: bool = False
    dedup_index: Path | None = None
    conditional_requests: bool = True
    dns_records: bool = True
    pages: bool = True
    scope: Mapping[str, Any] = field(default_factory=dict)
    dedup_policy: Mapping[str, Any] = field(default_factory=dict)
    hosts: Mapping[str, Mapping[str, float | int]] = field(default_factory=dict)
    """Per-queue politeness and quotas (``hosts:``;
    :data:`~webark.crawl.politeness.QUEUE_SETTINGS`)."""
    rss: Mapping[str, Any] | None = None
    """The ``rss:`` section (continuous crawling, :mod:`webark.crawl.rss`), or None."""
    browser: Mapping[str, Any] | None = None
    """The ``browser:`` section (:mod:`webark.crawl.browser.config`), or None."""

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

    def dedup_rules(self) -> DedupPolicy:
        """The validated ``dedup_policy`` mapping as a :class:`~webark.dedup.policy.DedupPolicy`."""
        return DedupPolicy.from_mapping(self.dedup_policy)

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
    def pages_path(self) -> Path:
        """``JOBDIR/pages/pages.jsonl``: the job's page list (WACZ layout)."""
        return self.job_dir / "pages" / "pages.jsonl"

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


def _check_seeds(items: list[str], rss: bool = False) -> tuple[str, ...]:
    if not items and not rss:
        raise JobConfigError("seeds", "at least one seed URL is needed (--seed URL), or an "
                             "rss: section (continuous crawling)")
    for i, s in enumerate(items):
        p = urlsplit(s)
        if p.scheme not in ("http", "https") or not p.hostname:
            raise JobConfigError(f"seeds[{i}]", f"not an absolute http(s) URL: {s!r}")
    return tuple(items)


def resolve_item(item: str) -> tuple[str, str]:
    """``HOST:IP`` or ``HOST=IP`` (one ``resolve`` entry, as ``webark crawl``, ``proxy``
    and ``serve --record`` take it) split into ``(host, ip)``, the host lowercased; the
    address is checked by the caller.

    Raises:
        ValueError: neither separator, or an empty side.
    """
    eq = item.find("=")
    host, sep, ip = item.partition("=" if eq != -1 else ":")
    if not sep or not host.strip() or not ip.strip():
        raise ValueError(f"expected HOST:IP (or HOST=IP), got {item!r}")
    return host.strip().lower(), ip.strip()


def _check_resolve(v: Any) -> dict[str, str]:
    if v is None:
        return {}
    if isinstance(v, list | tuple):  # ["host:ip", ...] as on the command line
        pairs = []
        for i, item in enumerate(v):
            try:
                host, ip = resolve_item(str(item))
            except ValueError as e:
                raise JobConfigError(f"resolve[{i}]", str(e)) from None
            pairs.append((f"resolve[{i}]", host, ip))
    elif isinstance(v, Mapping):
        pairs = [(f"resolve.{k}", str(k), str(ip)) for k, ip in v.items()]
    else:
        raise JobConfigError("resolve", "expected a mapping host: ip")
    out: dict[str, str] = {}
    for key, host, ip in pairs:
        try:
            out[host.lower()] = str(ipaddress.ip_address(ip.strip().strip("[]")))
        except ValueError:
            raise JobConfigError(key, f"{ip!r} is not an IPv4 or IPv6 address") from None
    return out


def _positive(cfg: Mapping[str, Any], key: str) -> int | None:
    """An optional integer >= 1 (a quota): None when absent or null."""
    if cfg.get(key) is None:
        return None
    n = int(_number(cfg, key, 0, integer=True))
    if n < 1:
        raise JobConfigError(key, "must be at least 1 (or null for no limit)")
    return n


def _choice(cfg: Mapping[str, Any], key: str, choices: tuple[str, ...], default: str) -> str:
    v = cfg.get(key, default)
    if v not in choices:
        raise JobConfigError(key, f"expected one of {', '.join(choices)}, got {v!r}")
    return str(v)


class _Problems:
    """Collects :class:`JobConfigError` s so that a job file's mistakes are all reported
    at once (:func:`job_from_mapping`)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def check(self, fn: Any, *args: Any, default: Any = None) -> Any:
        """``fn(*args)``, or ``default`` when it raises :class:`JobConfigError` (noted)."""
        try:
            return fn(*args)
        except JobConfigError as e:
            self.found.extend(e.problems)
            return default

    def note(self, key: str, reason: str) -> None:
        self.found.append((key, reason))

    def raise_any(self) -> None:
        if self.found:
            key, reason = self.found[0]
            raise JobConfigError(key, reason, tuple(self.found))


def _job_dir(cfg: Mapping[str, Any], base_dir: Path | None) -> Path:
    jd = cfg.get("job_dir")
    if not jd or not isinstance(jd, str | Path):
        raise JobConfigError("job_dir", "a job directory is required (-o JOBDIR)")
    job_dir = Path(jd)
    if base_dir is not None and not job_dir.is_absolute():
        job_dir = base_dir / job_dir
    return job_dir


def _delays(cfg: Mapping[str, Any]) -> tuple[float, float]:
    min_delay = float(_number(cfg, "min_delay", 3.0))
    max_delay = float(_number(cfg, "max_delay", max(30.0, min_delay)))
    if min_delay > max_delay:
        raise JobConfigError(
            "max_delay", f"must be >= min_delay ({max_delay} < {min_delay}); raise max_delay"
        )
    return min_delay, max_delay


def _workers(cfg: Mapping[str, Any]) -> int:
    workers = int(_number(cfg, "workers", 10, integer=True))
    if workers < 1:
        raise JobConfigError("workers", "must be at least 1")
    return workers


def _robots(cfg: Mapping[str, Any]) -> str:
    robots = cfg.get("robots", RobotsMode.OBEY.value)
    try:
        return RobotsMode(robots).value
    except ValueError:
        modes = ", ".join(m.value for m in RobotsMode)
        raise JobConfigError("robots", f"expected one of {modes}, got {robots!r}") from None


def _timeout(cfg: Mapping[str, Any], key: str, default: float = 20.0) -> float:
    if cfg.get(key) is not None and not _number(cfg, key, 1.0) > 0:
        raise JobConfigError(key, "must be a positive number of seconds")
    return float(_number(cfg, key, default))


def _scope(cfg: Mapping[str, Any], seeds: tuple[str, ...]) -> dict[str, Any]:
    scope = cfg.get("scope") or {}
    if not isinstance(scope, Mapping):
        raise JobConfigError("scope", "expected a mapping of scope options")
    from webark.crawl.scope import ScopeConfigError, build_scope

    try:  # a typo in a scope key is a configuration error like any other
        build_scope(scope, seeds)
    except ScopeConfigError as e:
        raise JobConfigError(f"scope.{e.key}", e.reason) from None
    return dict(scope)


def check_hosts(hosts: Any, min_delay: float = 3.0, max_delay: float = 30.0,
                delay_factor: float = 5.0) -> dict[str, dict[str, float | int]]:  # fmt: skip
    """Validate a ``hosts:`` mapping (queue key → settings of
    :data:`~webark.crawl.politeness.QUEUE_SETTINGS`) against the job's delays; returns
    it with lowercased keys, ``None`` settings dropped and quotas as integers.

    Raises:
        JobConfigError: not a mapping, an unknown setting, a value that is not a number
            >= 0 (quotas: integers >= 1), or delays that do not fit (min > max).
    """
    from webark.crawl.politeness import QUEUE_SETTINGS, FrontierConfig

    if hosts is None:
        return {}
    if not isinstance(hosts, Mapping):
        raise JobConfigError("hosts", "expected a mapping host → {min_delay: S, max_uris: N …}")
    out: dict[str, dict[str, float | int]] = {}
    for raw_key, settings in hosts.items():
        key = str(raw_key).strip().lower()
        where = f"hosts.{key}"
        if not key or not isinstance(settings, Mapping):
            raise JobConfigError(where, "expected a host (or host:port) and a mapping of settings")
        clean: dict[str, float | int] = {}
        for name, value in settings.items():
            if name not in QUEUE_SETTINGS:
                raise JobConfigError(f"{where}.{name}",
                                     f"unknown setting; known: {', '.join(QUEUE_SETTINGS)}")
            if value is None:
                continue
            quota = name.startswith("max_") and name != "max_delay"
            try:
                n = _number(settings, name, 0, integer=quota)
            except JobConfigError as e:
                raise JobConfigError(f"{where}.{name}", e.reason) from None
            if quota and n < 1:
                raise JobConfigError(f"{where}.{name}", "must be at least 1 (null: no quota)")
            clean[name] = int(n) if quota else float(n)
        if clean:
            out[key] = clean
    try:
        FrontierConfig(min_delay=min_delay, max_delay=max_delay, delay_factor=delay_factor,
                       queue_overrides=out)  # fmt: skip
    except ValueError as e:
        raise JobConfigError("hosts", f"{e} (job min_delay {min_delay}, max_delay "
                             f"{max_delay})") from None  # fmt: skip
    return out


def _dedup_policy(cfg: Mapping[str, Any]) -> dict[str, Any]:
    from webark.dedup.policy import DedupPolicyError

    policy = cfg.get("dedup_policy") or {}
    try:
        DedupPolicy.from_mapping(policy)
    except DedupPolicyError as e:
        problems = tuple((f"dedup_policy.{k}", r) for k, r in e.problems)
        raise JobConfigError(*problems[0], problems) from None
    return dict(policy)


def _prefix(cfg: Mapping[str, Any]) -> str:
    prefix = cfg.get("warc_prefix", "WEBARK")
    if not isinstance(prefix, str) or not prefix or "/" in prefix or "\\" in prefix:
        raise JobConfigError("warc_prefix", f"expected a file name prefix, got {prefix!r}")
    return prefix


def _warc_max(cfg: Mapping[str, Any]) -> int:
    warc_max = int(_number(cfg, "warc_max_size", 10**9, integer=True))
    if warc_max < 1:
        raise JobConfigError("warc_max_size", "must be a positive number of bytes")
    return warc_max


def _string(cfg: Mapping[str, Any], key: str) -> str | None:
    if cfg.get(key) is not None and not isinstance(cfg.get(key), str):
        raise JobConfigError(key, "expected a string")
    return cfg.get(key)


def _dedup_index(cfg: Mapping[str, Any], base_dir: Path | None) -> Path | None:
    dedup_index = cfg.get("dedup_index")
    if dedup_index is None:
        return None
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
    return dedup_index


def job_from_mapping(cfg: Mapping[str, Any], *, base_dir: Path | None = None) -> CrawlJob:
    """Validate a job mapping (from YAML, JSON or CLI options).

    Args:
        cfg: the keys of :data:`JOB_KEYS`; ``None`` values mean "default".
        base_dir: relative ``job_dir`` is taken relative to it (the job file's folder).

    Raises:
        JobConfigError: unknown keys (with a close match), wrong types or values: every
            problem found, one line each (:attr:`JobConfigError.problems`).
    """
    if not isinstance(cfg, Mapping):
        raise JobConfigError("job", "the job file must hold a mapping of keys")
    p = _Problems()
    for key in cfg:
        if key not in JOB_KEYS:
            close = difflib.get_close_matches(str(key), JOB_KEYS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            p.note(str(key), f"unknown key; {hint}known keys: {', '.join(JOB_KEYS)}")
    rss = p.check(rss_section, cfg)
    browser = p.check(browser_section, cfg)
    seeds = p.check(lambda: _check_seeds(_strings(cfg, "seeds"), rss is not None), default=())
    contact = p.check(lambda: _check_contact(_strings(cfg, "contact")), default=())
    job_dir = p.check(_job_dir, cfg, base_dir, default=Path("."))
    min_delay, max_delay = p.check(_delays, cfg, default=(3.0, 30.0))
    values: dict[str, Any] = {
        "workers": p.check(_workers, cfg, default=10),
        "robots": p.check(_robots, cfg, default=RobotsMode.OBEY.value),
        "connect_timeout": p.check(_timeout, cfg, "connect_timeout", default=20.0),
        "read_timeout": p.check(_timeout, cfg, "read_timeout", default=20.0),
        "total_timeout": p.check(_timeout, cfg, "total_timeout", 1200.0, default=1200.0),
        "max_outlinks": p.check(lambda: _positive(cfg, "max_outlinks") or MAX_OUTLINKS,
                                default=MAX_OUTLINKS),
        "scope": p.check(_scope, cfg, seeds, default={}),
        "dedup_policy": p.check(_dedup_policy, cfg, default={}),
        "warc_prefix": p.check(_prefix, cfg, default="WEBARK"),
        "warc_max_size": p.check(_warc_max, cfg, default=10**9),
        "warc_compression": p.check(_choice, cfg, "warc_compression", CODECS, "gzip",
                                    default="gzip"),
        "resolve": p.check(_check_resolve, cfg.get("resolve"), default={}),
    }
    for key in ("operator", "job_name"):
        values[key] = p.check(_string, cfg, key)
    for key in ("max_uris", "max_bytes", "max_uris_per_host", "max_bytes_per_host"):
        values[key] = p.check(_positive, cfg, key)
    flags = (("allow_private", False), ("conditional_requests", True), ("dns_records", True),
             ("hybrid_compression", False), ("pages", True), ("resolve_only", False))
    for flag, on in flags:
        values[flag] = p.check(_bool, cfg, flag, on, default=on)
    numbers: tuple[tuple[str, float, bool], ...] = (
        ("delay_factor", 5.0, False), ("crawl_delay_cap", 30.0, False),
        ("max_retries", 30, True), ("retry_delay", 900.0, False),
        ("max_http_retries", 3, True), ("backoff_base", 120.0, False),
        ("max_fetch_bytes", MAX_FETCH_BYTES, True), ("stop_grace", 30.0, False),
        ("progress_interval", 20.0, False),
    )  # fmt: skip
    for key, start, integer in numbers:
        n = p.check(lambda k=key, d=start, i=integer: _number(cfg, k, d, integer=i),
                    default=start)  # fmt: skip
        values[key] = int(n) if integer else float(n)
    values["hosts"] = p.check(lambda: check_hosts(cfg.get("hosts"), min_delay, max_delay,
                                                  values["delay_factor"]), default={})
    dedup_index = p.check(_dedup_index, cfg, base_dir)
    dedup = p.check(_bool, cfg, "dedup", rss is not None, default=False)
    if cfg.get("rss") is not None and cfg.get("dedup") is False:
        p.note("dedup", "continuous crawling (rss:) needs dedup: an unchanged feed is a "
               "revisit of its last capture; remove 'dedup: false'")
    p.raise_any()
    return CrawlJob(
        seeds=seeds, job_dir=job_dir, contact=contact, min_delay=min_delay,
        max_delay=max_delay, dedup=dedup or dedup_index is not None, dedup_index=dedup_index,
        rss=rss, browser=browser, **values,
    )  # fmt: skip


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
