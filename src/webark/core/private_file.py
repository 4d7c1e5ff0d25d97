"""Files only their owner may read (tokens, keys): created with mode 0600."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["write_private_json"]


def write_private_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` with mode 0600 (also when the file
    existed with another mode), so a token in it is not readable by other users.

    Raises:
        OSError: the file cannot be written.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (json.dumps(data, indent=2) + "\n").encode())
    finally:
        os.close(fd)
