"""Every exception class webark defines is under :class:`webark.core.errors.WebarkError`
(the tree in that module's docstring), except control-flow signals that never reach a
caller (listed here with the reason)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import webark
from webark.core.errors import ConfigError, RequestError, StorageError, WebarkError

#: Raised and caught inside one module; never seen by callers.
CONTROL_FLOW = {
    "webark.fetch.transport.StaleConnection": "a kept-alive connection the server closed: "
    "the fetcher retries on a new one",
}


def _exception_classes() -> dict[str, type[BaseException]]:
    out: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(webark.__path__, "webark."):
        if info.name.startswith("webark.spark"):  # optional extra (pyspark)
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException)
                    and obj.__module__ == info.name and not name.startswith("_")):  # fmt: skip
                out[f"{info.name}.{name}"] = obj
    return out


def test_every_webark_exception_is_a_webark_error() -> None:
    found = _exception_classes()
    assert len(found) > 30
    outside = sorted(n for n, c in found.items() if not issubclass(c, WebarkError))
    assert outside == sorted(CONTROL_FLOW), outside


def test_branches() -> None:
    from webark.apps.cdx.params import ParamError
    from webark.crawl.job import JobConfigError
    from webark.index.source import IndexUnavailable

    assert issubclass(JobConfigError, ConfigError) and issubclass(JobConfigError, ValueError)
    assert issubclass(IndexUnavailable, StorageError)
    assert issubclass(ParamError, RequestError) and issubclass(ParamError, ValueError)
