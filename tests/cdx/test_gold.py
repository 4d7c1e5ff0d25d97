"""The indexer against the peers' gold files.

* pywb's byte-exact CDX11 of example/dupes/iana (``cdx-indexer --sort``), through the
  library and through ``webark index -f cdx11 --sort``;
* every entry of ``pywb/expected-index/INDEX.json`` and
  ``cdxj-indexer/expected-index/INDEX.json``: the peer's options are mapped to
  :class:`IndexOptions` (``cdx_support.to_webark``) and the output compared byte for
  byte, or after JSON parsing where INDEX.json says field order is not significant.

Gold entries that are bugs of the peer and that webark does not reproduce would be
listed in ``docs/cdx-gold-differences.md`` and marked ``xfail(strict=True)`` in
``KNOWN_GOLD_BUGS``; today every gold file is reproduced, so it is empty (the quirks
reproduced on purpose are listed in that document too).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cdx_support import (
    CORPUS,
    GoldCase,
    gold_cases,
    index_text,
    input_path,
    to_webark,
    with_dir_root,
)
from click.testing import CliRunner

from webark.cdx.indexer import IndexOptions
from webark.cli.main import cli

KNOWN_GOLD_BUGS: dict[str, str] = {}
"""``peer:file`` → reason, for gold entries webark deliberately does not reproduce."""

CASES = gold_cases()


def _param(c: GoldCase) -> object:
    marks = []
    if c.id in KNOWN_GOLD_BUGS:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_GOLD_BUGS[c.id]))
    return pytest.param(c, id=c.id, marks=marks)


def _cdxj_parsed(text: str) -> list[tuple[str, str, dict[str, object]]]:
    out = []
    for line in text.splitlines():
        key, ts, blob = line.split(" ", 2)
        out.append((key, ts, json.loads(blob)))
    return out


def test_index_json_lists_every_gold_file() -> None:
    assert len(CASES) == 40
    for c in CASES:
        assert c.expected_path.is_file(), c.id
    # and each gold file is listed once
    for peer in ("pywb", "cdxj-indexer"):
        listed = {c.file for c in CASES if c.peer == peer}
        on_disk = {
            p.name for p in (CORPUS / peer / "expected-index").iterdir() if p.name != "INDEX.json"
        }
        assert listed == on_disk


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_gold(case: GoldCase, tmp_path: Path) -> None:
    fmt, options, sort, dir_root = to_webark(case.peer, case.options)
    path = input_path(case.peer, case.input)
    if dir_root is not None:
        # the gold was made from the peer's repository root with inputs in test/data/
        data = tmp_path / "test" / "data"
        data.mkdir(parents=True)
        shutil.copy(path, data / path.name)
        path = data / path.name
        options = with_dir_root(options, str(tmp_path))
    got = index_text(path, fmt, options, sort)
    expected = case.expected_path.read_text(encoding="utf-8")
    body = [ln for ln in expected.splitlines() if not ln.startswith(" CDX")]
    assert len(body) == case.lines or case.lines == len(expected.splitlines())
    if "field order not significant" in case.note:
        assert _cdxj_parsed(got) == _cdxj_parsed(expected)
    else:
        assert got == expected


@pytest.mark.parametrize("name", ["example", "dupes", "iana"])
def test_pywb_sorted_cdx11_byte_identical(name: str) -> None:
    warc = CORPUS / "pywb" / "warcs" / f"{name}.warc.gz"
    gold = (CORPUS / "pywb" / "cdx" / f"{name}.cdx").read_bytes()
    text = index_text(warc, "cdx11", IndexOptions(compat="pywb"), sort=True)
    assert text.encode() == gold


@pytest.mark.parametrize("name", ["example", "dupes", "iana"])
def test_pywb_sorted_cdx11_byte_identical_cli(name: str, tmp_path: Path) -> None:
    """What an archivist runs: ``webark index -f cdx11 --sort X.warc.gz -o X.cdx``
    (webark's CLI defaults, POST folding included, give pywb's classic CDX)."""
    warc = CORPUS / "pywb" / "warcs" / f"{name}.warc.gz"
    out = tmp_path / f"{name}.cdx"
    res = CliRunner().invoke(
        cli, ["index", "-f", "cdx11", "--sort", "-j", "1", str(warc), "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert out.read_bytes() == (CORPUS / "pywb" / "cdx" / f"{name}.cdx").read_bytes()


def test_pywb_post_cdx_with_append_post() -> None:
    """``pywb/cdx/post-test.cdx`` is the sorted, POST-folded index of post-test.warc.gz."""
    warc = CORPUS / "pywb" / "warcs" / "post-test.warc.gz"
    text = index_text(warc, "cdx11", IndexOptions(compat="pywb", post_append=True), sort=True)
    assert text == (CORPUS / "pywb" / "cdx" / "post-test.cdx").read_text()


def test_pywb_sample_archive_url_agnostic_cdx() -> None:
    """pywb's sample ``url-agnost-example.cdx``: two WARCs, one sorted CDX11."""
    warcs = CORPUS / "pywb" / "warcs"
    lines: list[str] = []
    for name in ("example-url-agnostic-revisit.warc.gz", "example-url-agnostic-orig.warc.gz"):
        lines += index_text(warcs / name, "cdx11", IndexOptions(compat="pywb")).splitlines()[1:]
    lines.sort(key=lambda s: s.encode())
    got = " CDX N b a m s k r M S V g\n" + "".join(f"{s}\n" for s in lines)
    assert got == (CORPUS / "pywb" / "cdx" / "url-agnost-example.cdx").read_text()


@pytest.mark.parametrize("name", ["httpbin-resource", "missing-status-text"])
def test_pywb_sample_archive_cdxj(name: str) -> None:
    """pywb's sample CDXJ files (written by another JSON encoder: compared parsed)."""
    warcs = CORPUS / "pywb" / "warcs"
    warc = next(p for p in warcs.iterdir() if p.name.startswith(name + ".warc"))
    got = index_text(warc, "cdxj", IndexOptions(compat="pywb"))
    expected = (CORPUS / "pywb" / "cdx" / f"{name}.cdxj").read_text()
    assert _cdxj_parsed(got) == _cdxj_parsed(expected)
