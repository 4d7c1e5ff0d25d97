"""The HTML pages of the replay app (jinja2 templates in ``webark/apps/replay/templates``):
home, collection, capture calendar / URL list, "Not in archive", 451, errors, diff.

Templates get, besides their own values: ``root`` (the app's root path, ``/``), ``app``
(``/_webark/``), ``coll``, ``prefix`` (``/{coll}/``) and the helpers ``archival_url``,
``captures_url``, ``url_for_path`` and ``display_date``. Autoescaping is on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse

from webark.apps.replay.memento import display_date
from webark.apps.replay.paths import APP_PREFIX, archival_url, captures_url, url_for_path

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"


class Pages:
    """Renders the app's pages.

    Args:
        root: path prefix of the app (``/``, or ``/replay/`` when mounted below one).
    """

    def __init__(self, root: str = "/"):
        self.root = root if root.endswith("/") else root + "/"
        self.env = Environment(
            loader=FileSystemLoader(str(TEMPLATES)),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals.update(
            archival_url=archival_url,
            captures_url=captures_url,
            url_for_path=url_for_path,
            display_date=display_date,
        )

    def html(self, template: str, status_code: int = 200,
             headers: dict[str, str] | None = None, **values: Any) -> HTMLResponse:
        """``template`` rendered with ``values`` (see the module docstring)."""
        coll = values.get("coll") or ""
        ctx = {
            "root": self.root,
            "app": self.root + APP_PREFIX[1:],
            "coll": coll,
            "prefix": f"{self.root}{coll}/" if coll else self.root,
            "query_url": values.get("query_url") or values.get("url") or "",
            **values,
        }
        body = self.env.get_template(template).render(**ctx)
        return HTMLResponse(body, status_code=status_code, headers=headers)

    def error(self, status: int, title: str, message: str, coll: str = "",
              headers: dict[str, str] | None = None) -> HTMLResponse:
        """A plain error page (400, 404 unknown collection, 500, 503 …)."""
        return self.html("error.html", status, headers, status=status, title=title,
                         message=message, coll=coll)  # fmt: skip
