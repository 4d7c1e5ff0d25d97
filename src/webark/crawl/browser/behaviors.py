"""Behaviors of the browser workers: Webrecorder's ``browsertrix-behaviors`` (the npm
package Browsertrix-crawler injects into every page) plus webark's own page script.

- ``browsertrix-behaviors`` ``dist/behaviors.js`` (version :data:`BEHAVIORS_VERSION`,
  fetched by ``WEBARK_BROWSER=1 bash scripts/setup.sh`` into
  ``.cache/browsertrix-behaviors-VERSION/``; AGPL-3.0, never vendored here) defines
  ``self.__bx_behaviors``. It is initialised in every frame by the init script
  (``init({autofetch, autoplay, autoscroll, autoclick, siteSpecific, log})``: the
  background behaviors, autofetch and autoplay, start at once) and its active behavior
  (a site-specific one when the site has one, else autoscroll) is started with
  ``run()`` in each frame once the page has loaded — the package README's own recipe.
  Browsertrix's defaults are the same set (autoclick opt-in, behavior timeout 90 s).
- ``page.js`` (ours): records ``window.open`` targets instead of opening popups, lists
  the ``a[href]``/``area[href]`` links of a frame, and opens click-to-expand content
  (``<details>``, ``aria-expanded="false"`` controls), which autoclick does not do (it
  clicks same-origin ``<a>`` elements only, ``src/autoclick.ts`` of the package).

There is no fallback: without the package, :func:`behaviors_script` raises
:class:`~webark.core.errors.BrowserUnavailableError` naming the setup flag.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from webark.core.errors import BrowserUnavailableError

__all__ = [
    "BEHAVIORS_VERSION",
    "SETUP_HINT",
    "BehaviorOptions",
    "behaviors_path",
    "behaviors_script",
    "init_script",
    "page_script",
]

#: The ``browsertrix-behaviors`` version scripts/setup.sh fetches (keep them equal).
BEHAVIORS_VERSION = "0.8.4"
#: How to install what the browser workers need.
SETUP_HINT = "WEBARK_BROWSER=1 bash scripts/setup.sh"
#: Environment variable naming another ``behaviors.js`` (an installed copy elsewhere).
BEHAVIORS_ENV = "WEBARK_BEHAVIORS_JS"
_CACHE_PATH = Path(".cache", f"browsertrix-behaviors-{BEHAVIORS_VERSION}", "package", "dist",
                   "behaviors.js")  # fmt: skip


@dataclass(frozen=True)
class BehaviorOptions:
    """Which behaviors run in a page (``browsertrix-behaviors`` ``init`` options, plus
    ``expand``: webark's click-to-expand behavior of ``page.js``).

    Defaults are Browsertrix-crawler's (autoplay, autofetch, autoscroll, site-specific;
    autoclick opt-in: it clicks every same-origin link that has a click handler and
    goes back, slow on link-heavy pages) plus ``expand``. ``expand_rounds`` bounds how
    many times expanding is repeated when opened content holds more to open;
    ``expand_pause`` (seconds) is the wait after each round for fetched content.
    """

    autoscroll: bool = True
    autoplay: bool = True
    autofetch: bool = True
    autoclick: bool = False
    site_specific: bool = True
    expand: bool = True
    expand_rounds: int = 5
    expand_pause: float = 0.5

    def bx_init(self) -> dict[str, object]:
        """The options object of ``self.__bx_behaviors.init`` (log off: the package
        would otherwise log each step to the page's console)."""
        return {"autoscroll": self.autoscroll, "autoplay": self.autoplay,
                "autofetch": self.autofetch, "autoclick": self.autoclick,
                "siteSpecific": self.site_specific, "log": False}  # fmt: skip


def behaviors_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where ``behaviors.js`` is: ``explicit``, else ``$WEBARK_BEHAVIORS_JS``, else
    ``.cache/browsertrix-behaviors-VERSION/package/dist/behaviors.js`` in the checkout
    this module runs from (an editable install) or in the current folder.

    Raises:
        BrowserUnavailableError: no such file (the message names the setup command).
    """
    if explicit is not None or os.environ.get(BEHAVIORS_ENV):
        path = Path(explicit if explicit is not None else os.environ[BEHAVIORS_ENV])
        candidates = [path]
    else:
        here = Path(__file__).resolve()
        candidates = [p / _CACHE_PATH for p in (*here.parents, Path.cwd())]
    for path in candidates:
        if path.is_file():
            return path
    raise BrowserUnavailableError(
        f"browsertrix-behaviors {BEHAVIORS_VERSION} not found ({candidates[-1]}): "
        f"install it with `{SETUP_HINT}` (npm), or name its dist/behaviors.js "
        f"in ${BEHAVIORS_ENV}"
    )


def behaviors_script(explicit: str | os.PathLike[str] | None = None) -> str:
    """The text of ``behaviors.js`` (:func:`behaviors_path`; same errors)."""
    return behaviors_path(explicit).read_text(encoding="utf-8")


def page_script() -> str:
    """The text of webark's ``page.js`` (shipped with the package)."""
    return resources.files("webark.crawl.browser").joinpath("page.js").read_text(encoding="utf-8")


def init_script(behaviors_js: str, options: BehaviorOptions) -> str:
    """The init script of every page (Playwright ``add_init_script``, run in every frame
    before the page's scripts): ``page.js``, then ``behaviors_js`` and its ``init``
    call with ``options``."""
    init = json.dumps(options.bx_init())
    return (f"{page_script()}\n;{behaviors_js}\n;"
            f"try {{ self.__bx_behaviors.init({init}); }} catch (e) {{}}\n")  # fmt: skip
