"""Starting (or joining) the Spark session of a ``webark spark`` job.

PySpark is imported here only, so the rest of webark never needs it; a missing PySpark
or Java is a :class:`SparkUnavailable` with the command that installs it.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING, Any

from webark.core.errors import WebarkError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DEFAULT_MASTER", "SparkUnavailable", "is_local", "spark_session"]

DEFAULT_MASTER = f"local[{max(1, min(os.cpu_count() or 1, 8))}]"
"""``local[N]``: N worker threads in this machine's JVM (N = CPUs, at most 8)."""


class SparkUnavailable(WebarkError):
    """PySpark or Java is not installed (``pip install 'webark[spark]'``, Java 17+)."""


def is_local(master: str) -> bool:
    """True for ``local``, ``local[N]``, ``local[*]``, ``local[N,F]`` masters."""
    return master == "local" or master.startswith("local[")


def spark_session(master: str | None, app_name: str, conf: dict[str, str] | None = None,
                  *, quiet: bool = False) -> SparkSession:
    """The job's :class:`pyspark.sql.SparkSession`.

    Args:
        master: a Spark master URL (``local[2]``, ``spark://host:7077``, ``yarn``,
            ``k8s://…``); None: the one ``spark-submit`` set, else :data:`DEFAULT_MASTER`.
        app_name: the application name shown in Spark's UI.
        conf: further Spark settings.
        quiet: do not print the UI address on stderr.

    In local mode the driver and its UI bind to 127.0.0.1 (nothing listens on other
    addresses) and the executors' Python is this interpreter.

    Raises:
        SparkUnavailable: PySpark cannot be imported or no ``java`` is found.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise SparkUnavailable(
            "webark spark needs PySpark: pip install 'webark[spark]' "
            "(or WEBARK_SPARK=1 bash scripts/setup.sh)"
        ) from e
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise SparkUnavailable(
            "webark spark needs Java 17 or later: apt-get install openjdk-17-jre-headless "
            "(or WEBARK_SPARK=1 bash scripts/setup.sh)"
        )
    # under spark-submit the JVM is already up (PythonRunner passes its gateway port)
    # and holds the master given there
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    if master is None and not submitted:
        master = DEFAULT_MASTER
    builder: Any = SparkSession.builder.appName(app_name)
    settings = {
        "spark.ui.showConsoleProgress": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.python.worker.reuse": "true",
    }
    if master is not None:
        builder = builder.master(master)
        if is_local(master):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            settings.update({"spark.driver.host": "127.0.0.1",
                             "spark.driver.bindAddress": "127.0.0.1"})
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    session: SparkSession = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    if not quiet:
        ui = session.sparkContext.uiWebUrl
        print(f"spark: {session.sparkContext.master}, UI at {ui or '(disabled)'}",
              file=sys.stderr)
    return session
