"""Where the salttap binary and the GoogleTest binaries of a build are: one rule for every suite.

salttap: $SALTTAP_BIN, else $SALTTAP_BUILD_DIR/salttap, else build/dev/salttap. A GoogleTest
binary: $SALTTAP_BUILD_DIR/tests/<name>, else build/dev/tests/<name>. Relative paths are taken
from the repository's root. A binary that is missing raises MissingBinary saying how to build
it: a suite without its binary fails, it never skips.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]


class MissingBinary(RuntimeError):
    pass


def _from_root(path: str | Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else ROOT / p


def build_dir() -> Path:
    """$SALTTAP_BUILD_DIR, else build/dev."""
    return _from_root(os.environ.get("SALTTAP_BUILD_DIR") or "build/dev")


def salttap_path() -> Path:
    """Where the salttap binary is looked for (it may not be there)."""
    explicit = os.environ.get("SALTTAP_BIN")
    return _from_root(explicit) if explicit else build_dir() / "salttap"


def _executable(path: Path, target: str) -> Path:
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise MissingBinary(f"{path} not found or not executable; build it: cmake --preset dev && "
                            f"cmake --build --preset dev --target {target} (or set SALTTAP_BIN or "
                            f"SALTTAP_BUILD_DIR)")
    return path


def salttap() -> Path:
    """The salttap binary."""
    return _executable(salttap_path(), "salttap")


def gtest(name: str) -> Path:
    """The GoogleTest binary `name` of the build (e.g. indexer-engine-test)."""
    return _executable(build_dir() / "tests" / name, name)


def require(find: Callable[[], Path]) -> Path:
    """find()'s binary, for a pytest fixture: a missing one fails the test, saying how to build it
    (a skipped suite would pass without testing anything)."""
    import pytest  # only the suites import pytest; the scripts that find binaries do not
    try:
        return find()
    except MissingBinary as e:
        pytest.fail(str(e), pytrace=False)
