"""The text of a PDF capture, with pypdf (a maintained pure-Python PDF library: no
native code to build, nothing that runs a PDF's scripts).

pypdf is optional (``pip install 'webark[pdf]'``); without it PDF captures get no
document and ``search build`` says how many it skipped and why. Text is read page by
page until :data:`~webark.search.document.MAX_TEXT` characters or :data:`MAX_PAGES`
pages; an encrypted PDF is tried with the empty user password (most "protected" web
PDFs only restrict printing or copying) and otherwise skipped. A PDF pypdf cannot read
is reported, never fatal.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass

from webark.core.errors import ConfigError, FormatError
from webark.search.document import MAX_TEXT

#: Pages read at most (a 10,000-page PDF is a book scan; its first pages say what it is).
MAX_PAGES = 2000
_WS_RUN = re.compile(r"[ \t\f\v]+")
_BLANKS = re.compile(r"\n\s*\n+")


class PdfUnavailable(ConfigError):
    """pypdf is not installed (the message names the extra that installs it)."""


class PdfUnreadable(FormatError, ValueError):
    """The PDF cannot be read (broken, or encrypted with a password)."""


@dataclass(frozen=True, slots=True)
class PdfText:
    """``title`` (document information Title, '' if none), ``text`` (pages in order,
    blank lines collapsed), ``pages`` read."""

    title: str
    text: str
    pages: int


def available() -> bool:
    """True when pypdf can be imported."""
    try:
        import pypdf  # noqa: F401
    except ImportError:
        return False
    return True


def pdf_text(data: bytes, *, max_chars: int = MAX_TEXT, max_pages: int = MAX_PAGES) -> PdfText:
    """Title and text of the PDF ``data`` (module docstring).

    Raises:
        PdfUnavailable: pypdf is not installed.
        PdfUnreadable: pypdf cannot read it, or it needs a password.
    """
    try:
        import pypdf
    except ImportError:
        raise PdfUnavailable("pypdf is not installed: pip install 'webark[pdf]'") from None
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings are per object
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfUnreadable("encrypted PDF (a password is needed)")
        title = ""
        meta = reader.metadata
        if meta is not None and meta.title:
            title = " ".join(str(meta.title).split())
        parts: list[str] = []
        size = 0
        pages = 0
        for page in reader.pages:
            if pages >= max_pages or size >= max_chars:
                break
            text = page.extract_text() or ""
            pages += 1
            parts.append(text)
            size += len(text)
    except PdfUnreadable:
        raise
    except Exception as exc:  # pypdf raises many kinds on broken files
        raise PdfUnreadable(f"PDF not readable: {type(exc).__name__}: {exc}") from exc
    text = _BLANKS.sub("\n\n", _WS_RUN.sub(" ", "\n".join(parts))).strip()
    return PdfText(title, text[:max_chars], pages)
