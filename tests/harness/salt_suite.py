"""What the real-Salt suite runs against, from the environment, and what its session learned.

  SALTTAP_SALT_VERSIONS  Salt versions to test, space/comma separated
                         (default "3006.25 3006.30 3007.17 3008.5")
  SALTTAP_WATCHER        "salttap" (default) or "salt": watch the bus with Salt's own
                         `salt-run state.event`, to check the harness itself without salttap

tests/integration/conftest.py fills INSTALL_ERRORS (a version whose virtualenv could not be
installed: its tests fail) and SUMMARY (figures per version for the final report).
"""
from __future__ import annotations

import os
import re

DEFAULT_VERSIONS = "3006.25 3006.30 3007.17 3008.5"
VERSIONS = [v for v in re.split(r"[\s,]+", os.environ.get("SALTTAP_SALT_VERSIONS", DEFAULT_VERSIONS)) if v]
WATCHER_MODE = os.environ.get("SALTTAP_WATCHER", "salttap")


def version_key(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def newest_per_series(versions: list[str]) -> list[str]:
    newest: dict[str, str] = {}
    for v in versions:
        series = v.split(".")[0]
        if series not in newest or version_key(v) > version_key(newest[series]):
            newest[series] = v
    return sorted(newest.values(), key=version_key)


NEWEST = max(VERSIONS, key=version_key)  # the newest configured Salt
SERIES = newest_per_series(VERSIONS)     # the newest of each series (3006, 3007, 3008)

# version -> installer error, for versions whose venv could not be installed
INSTALL_ERRORS: dict[str, str] = {}
# per-version facts for the final summary: {version: {key: value}}
SUMMARY: dict[str, dict] = {}
