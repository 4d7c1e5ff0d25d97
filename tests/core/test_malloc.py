"""webark.core.malloc.limit_arenas: glibc's arenas capped at run time (the soak's slow RSS
rise of ``webark serve``). The count of arenas is read from glibc's own ``malloc_info``
in a fresh child process where 8 threads allocate."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from webark.core.malloc import limit_arenas

CHILD = r"""
import ctypes, ctypes.util, os, sys, tempfile, threading
from webark.core.malloc import limit_arenas
print("set" if (sys.argv[1] == "cap" and limit_arenas(2)) else "unset")
barrier = threading.Barrier(8)
def work():
    barrier.wait()
    keep = [bytearray(50_000) for _ in range(200)]
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
libc.fclose.argtypes = (ctypes.c_void_p,)
path = tempfile.mktemp()
f = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, f)
libc.fclose(f)
print(open(path).read().count("<heap nr="))
os.unlink(path)
"""


def _arenas(mode: str, env: dict[str, str] | None = None) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                         check=True, env={**os.environ, **(env or {})}, timeout=60)  # fmt: skip
    said, count = out.stdout.split()
    return said, int(count)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_threads_share_two_arenas_once_capped() -> None:
    said, free = _arenas("free")
    assert said == "unset" and free >= 4  # a new arena for most threads
    said, capped = _arenas("cap")
    assert said == "set" and capped == 2


def test_the_environment_wins() -> None:
    said, capped = _arenas("cap", {"MALLOC_ARENA_MAX": "3"})
    assert said == "unset" and capped <= 3


def test_bad_count() -> None:
    with pytest.raises(ValueError, match="arenas must be >= 1"):
        limit_arenas(0)
