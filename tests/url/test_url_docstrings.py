"""The examples in the docstrings of webark.url are doctests: they must stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "webark.url.canon",
    "webark.url.domains",
    "webark.url.idn",
    "webark.url.normalize",
    "webark.url.scope",
    "webark.url.surt",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
