"""`webark --version` and the one place the version lives (webark.__version__)."""

from __future__ import annotations

import platform
import re
import sys
import tomllib
from importlib.metadata import version

from click.testing import CliRunner

from corpus_location import REPO
from webark import __version__
from webark.cli.main import cli


def test_version_names_webark_its_readers_and_python() -> None:
    res = CliRunner().invoke(cli, ["--version"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        f"webark {__version__}",
        f"fastwarc {version('fastwarc')}",
        f"warcio {version('warcio')}",
        f"Python {platform.python_version()} ({platform.python_implementation()}, "
        f"{sys.executable})",
    ]


def test_the_version_has_one_source_and_a_changelog_entry() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "webark.__version__"}
    assert version("webark") == __version__  # the installed metadata comes from it
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(__version__)}\]", changelog, re.M)
