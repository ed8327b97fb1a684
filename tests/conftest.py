"""Options and shared fixtures of the test suite."""

from __future__ import annotations

import libcst as cst
import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite tests/snapshots/ from the current output; review the diff before committing",
    )


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts given to LibCST's parser from now on, in order (devlint's parses go
    through ``libcst.parse_module``)."""
    texts: list[str] = []
    real_parse = cst.parse_module

    def parse(source: str) -> cst.Module:
        texts.append(source)
        return real_parse(source)

    monkeypatch.setattr(cst, "parse_module", parse)
    return texts
