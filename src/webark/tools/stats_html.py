"""A self-contained HTML page for :class:`~webark.tools.stats.ArchiveStats`: summary
table, and horizontal bar charts drawn as inline SVG (no script, no external file,
no plotting library), so the page can be archived or mailed as it is.

Charts: captures and bytes per year (stored vs represented), captures per MIME type
(top 15, revisits shown as the lighter part of each bar), bytes per harvest. Text is
escaped by jinja2's autoescape.
"""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from webark import __version__
from webark.tools.stats import ArchiveStats, Bucket

BAR_HEIGHT = 18
LABEL_WIDTH = 220
CHART_WIDTH = 760


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar of a chart: label, two values (the second drawn over the first,
    e.g. represented / stored) and their texts, with widths in SVG pixels."""

    label: str
    y: int
    w1: float
    w2: float
    text: str


@dataclass(frozen=True, slots=True)
class Chart:
    title: str
    legend1: str
    legend2: str
    height: int
    bars: tuple[Bar, ...]


def human_bytes(n: int) -> str:
    """``1536`` → ``1.5 KiB`` (binary prefixes)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def chart(title: str, rows: list[tuple[str, int, int, str]], legend1: str,
          legend2: str) -> Chart:
    """A chart of ``(label, value1, value2, text)`` rows; value2 ≤ value1 is drawn on
    top of value1 (both scaled to the largest value1)."""
    top = max((max(r[1], r[2]) for r in rows), default=0) or 1
    room = CHART_WIDTH - LABEL_WIDTH - 160
    bars = tuple(
        Bar(label, 8 + i * (BAR_HEIGHT + 6), room * v1 / top, room * v2 / top, text)
        for i, (label, v1, v2, text) in enumerate(rows)
    )
    return Chart(title, legend1, legend2, 16 + len(rows) * (BAR_HEIGHT + 6), bars)


Row = tuple[str, int, int, str]


def byte_rows(table: dict[str, Bucket], keys: list[str]) -> list[Row]:
    """Chart rows ``(key, represented, stored, "stored / represented")``."""
    return [
        (k, table[k].represented, table[k].stored,
         f"{human_bytes(table[k].stored)} / {human_bytes(table[k].represented)}")
        for k in keys
    ]


def capture_rows(table: dict[str, Bucket], keys: list[str]) -> list[Row]:
    """Chart rows ``(key, captures, revisits, "N (M revisits)")``."""
    return [
        (k, table[k].captures, table[k].revisits,
         f"{table[k].captures} ({table[k].revisits} revisits)")
        for k in keys
    ]


def charts(stats: ArchiveStats) -> list[Chart]:
    """The charts of the page (see the module docstring)."""
    years = sorted(stats.year)
    mimes = sorted(stats.mime, key=lambda k: (-stats.mime[k].captures, k))[:15]
    return [
        chart("Captures per year", capture_rows(stats.year, years), "captures", "revisits"),
        chart("Bytes per year: stored / represented", byte_rows(stats.year, years),
              "represented", "stored"),
        chart("Captures per MIME type (top 15)", capture_rows(stats.mime, mimes),
              "captures", "revisits"),
        chart("Bytes per harvest: stored / represented",
              byte_rows(stats.harvest, sorted(stats.harvest)), "represented", "stored"),
    ]


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{ title }}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:60em}
table{border-collapse:collapse;margin:1em 0}td,th{padding:.2em .8em;text-align:right}
td:first-child,th:first-child{text-align:left}tr:nth-child(even){background:#f3f3f3}
.legend span{display:inline-block;width:.9em;height:.9em;margin:0 .3em 0 1em}
</style></head><body>
<h1>{{ title }}</h1>
<table>
{% for name, value in summary %}<tr><th>{{ name }}</th><td>{{ value }}</td></tr>
{% endfor %}</table>
{% for c in charts %}
<h2>{{ c.title }}</h2>
<p class="legend"><span style="background:#4a7bb7"></span>{{ c.legend1 }}
<span style="background:#f0a030"></span>{{ c.legend2 }}</p>
<svg xmlns="http://www.w3.org/2000/svg" width="{{ width }}" height="{{ c.height }}"
 role="img" aria-label="{{ c.title }}">
{% for b in c.bars %}<g><title>{{ b.label }}: {{ b.text }}</title>
<text x="{{ label_width - 6 }}" y="{{ b.y + 13 }}" text-anchor="end" font-size="12">
{{- b.label|truncate(34, True, '…') }}</text>
<rect x="{{ label_width }}" y="{{ b.y }}" width="{{ '%.1f'|format(b.w1) }}"
 height="{{ bar }}" fill="#4a7bb7"/>
<rect x="{{ label_width }}" y="{{ b.y + 4 }}" width="{{ '%.1f'|format(b.w2) }}"
 height="{{ bar - 8 }}" fill="#f0a030"/>
<text x="{{ label_width + b.w1 + 6 }}" y="{{ b.y + 13 }}" font-size="12">{{ b.text }}</text></g>
{% endfor %}</svg>
{% endfor %}
<p><small>webark {{ version }} · stats</small></p>
</body></html>
"""


def summary_rows(stats: ArchiveStats) -> list[tuple[str, str]]:
    """The summary table as ``(name, value)`` text pairs (shared with the text output)."""
    t = stats.total
    return [
        ("files", f"{stats.files} ({human_bytes(stats.file_bytes)})"),
        ("records", str(stats.records)),
        ("captures", str(t.captures)),
        ("revisits", f"{t.revisits} ({stats.revisit_ratio:.1%} of captures)"),
        ("URLs", str(stats.urls)),
        ("hosts", str(len(stats.hosts))),
        ("bytes stored (all records)", human_bytes(stats.stored)),
        ("bytes stored (captures)", human_bytes(t.stored)),
        ("payload bytes stored", human_bytes(t.payload_stored)),
        ("payload bytes represented", human_bytes(t.represented)),
        ("dedup savings", f"{human_bytes(t.savings)} ({stats.savings_ratio:.1%})"),
        ("unresolved revisits", str(stats.unresolved_revisits)),
    ]


def render_html(stats: ArchiveStats, title: str = "Archive statistics") -> str:
    """The page as a string (UTF-8 HTML5, no external resources)."""
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_TEMPLATE).render(
        title=title, summary=summary_rows(stats), charts=charts(stats), width=CHART_WIDTH,
        label_width=LABEL_WIDTH, bar=BAR_HEIGHT, version=__version__,
    )
