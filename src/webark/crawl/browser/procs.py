"""The processes of a pool's Chromium, found in Linux's ``/proc`` (``proc(5)``): for
measuring a browser page's CPU time and memory (the issue's benchmark) and for stopping
a browser by its own PID. Elsewhere than Linux every function returns nothing."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcessUsage", "descendants", "usage"]

_PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _stat(pid: int) -> list[str] | None:
    """Fields of ``/proc/PID/stat`` after the command name (field 3 first), or None."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _parents() -> dict[int, int]:
    out: dict[int, int] = {}
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            out[int(entry.name)] = int(fields[1])
    return out


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children …), parents first."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = [pid]
    while todo:
        kids = sorted(children.get(todo.pop(0), []))
        out.extend(kids)
        todo.extend(kids)
    return out


def command_name(pid: int) -> str:
    """``/proc/PID/comm`` ("" when the process is gone)."""
    try:
        return (_PROC / str(pid) / "comm").read_text().strip()
    except OSError:
        return ""


@dataclass(frozen=True)
class ProcessUsage:
    """CPU time and memory of a set of processes at one moment.

    Attributes:
        cpu_seconds: user + system CPU time of the processes and of their children
            that have ended and been waited for (``utime + stime + cutime +
            cstime``), s: the renderer of a closed page is counted in its parent.
        rss_bytes: sum of their resident set sizes, bytes (shared pages counted in
            each process, so an upper bound of the memory they use together).
        processes: how many were found.
        pss_bytes: sum of their proportional set sizes (``smaps_rollup`` ``Pss``:
            each shared page divided among its sharers), bytes: what they use together;
            0 where the kernel does not tell.
    """

    cpu_seconds: float
    rss_bytes: int
    processes: int
    pss_bytes: int = 0


def usage(pids: Iterable[int]) -> ProcessUsage:
    """:class:`ProcessUsage` of ``pids`` (those already gone are left out)."""
    cpu = 0.0
    rss = pss = n = 0
    for pid in pids:
        fields = _stat(pid)
        if fields is None:
            continue
        # stat fields 14-17 utime, stime, cutime, cstime (ticks), 24 rss (pages);
        # here shifted by 3
        cpu += sum(int(f) for f in fields[11:15]) / _TICKS
        rss += int(fields[21]) * _PAGE
        pss += _pss(pid)
        n += 1
    return ProcessUsage(cpu, rss, n, pss)


def _pss(pid: int) -> int:
    """``Pss`` of ``/proc/PID/smaps_rollup`` in bytes (0 when unreadable)."""
    try:
        with open(_PROC / str(pid) / "smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
