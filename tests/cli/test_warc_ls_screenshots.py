"""``webark warc ls`` on screenshot records (issue 13): a resource record shows its
type, its ``urn:view:`` / ``urn:thumbnail:`` URI and its image Content-Type."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from screenshot_site import PAGE, write_screenshot_warc
from webark.cli.main import cli


def test_ls_shows_resource_uri_and_type(tmp_path: Path) -> None:
    warc = write_screenshot_warc(tmp_path)
    res = CliRunner().invoke(cli, ["warc", "ls", str(warc)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.stdout.splitlines()]
    shots = [r for r in rows if (r["target_uri"] or "").endswith(PAGE)
             and r["target_uri"].startswith("urn:")]  # fmt: skip
    assert [(r["type"], r["target_uri"], r["content_type"], r["status"]) for r in shots] == [
        ("resource", f"urn:view:{PAGE}", "image/png", None),
        ("resource", f"urn:thumbnail:{PAGE}", "image/jpeg", None),
    ] * 2
    assert [r["date"] for r in shots] == ["2024-05-01T12:00:02Z"] * 2 + ["2024-05-01T12:00:22Z"] * 2
