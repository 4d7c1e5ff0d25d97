"""glibc's malloc arenas for long-running servers (``webark serve``).

glibc gives each thread that allocates under contention its own arena, up to 8 per
core; memory freed in one arena is not reused by another, so a server whose worker
threads allocate and free large buffers (WARC reads, decoding, rewriting) grows its RSS
slowly without keeping any object. ``bench/soak.py`` measured it on ``webark serve``:
72.7 → 86.5 MiB over 300 s with the default arenas, 64–73 MiB flat with two
(``MALLOC_ARENA_MAX=2``, glibc ``mallopt(3)``). :func:`limit_arenas` sets the same at
run time, before the server starts its threads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["M_ARENA_MAX", "limit_arenas"]

M_ARENA_MAX = -8
"""``mallopt`` parameter number of ``M_ARENA_MAX`` (glibc ``malloc.h``)."""


def limit_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas at ``arenas`` for this process (``mallopt(M_ARENA_MAX)``).

    Does nothing when ``MALLOC_ARENA_MAX`` is in the environment (the operator's choice
    wins; glibc has read it already) or when the C library is not glibc (musl, macOS).

    Returns:
        True when the cap was set now, False otherwise.
    Raises:
        ValueError: ``arenas`` < 1.
    """
    if arenas < 1:
        raise ValueError(f"arenas must be >= 1, got {arenas}")
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, arenas))
