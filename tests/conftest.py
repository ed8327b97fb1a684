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


@pytest.fixture(autouse=True, scope="session")
def _cache_key_of_the_suite(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The secret that signs cache entries lives in a folder of the suite's, not in the
    home of whoever runs it (subprocesses inherit it through the environment)."""
    import os

    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
    os.environ.pop("DEVLINT_CACHE_KEY", None)
