"""Fixtures shared by the search-engine tests that drive the salttap binary."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import FLAVORS, ROOT, Engine, suite_flavors  # noqa: E402
from tls_proxy import TlsProxy  # noqa: E402

CAPTURES = ROOT / "tests" / "captures"


@pytest.fixture(scope="module")
def salttap() -> Path:
    """$SALTTAP_BIN, else $SALTTAP_BUILD_DIR/salttap, else build/dev/salttap."""
    explicit = os.environ.get("SALTTAP_BIN")
    build_dir = os.environ.get("SALTTAP_BUILD_DIR")
    p = Path(explicit) if explicit else Path(build_dir) / "salttap" if build_dir else ROOT / "build" / "dev" / "salttap"
    p = p if p.is_absolute() else ROOT / p
    if not (p.is_file() and os.access(p, os.X_OK)):
        # A missing binary fails: a skipped suite would pass without testing anything.
        pytest.fail(f"salttap binary not found: {p}; build it: cmake --preset dev && "
                    f"cmake --build --preset dev --target salttap (or set SALTTAP_BIN)", pytrace=False)
    return p


@pytest.fixture(scope="module")
def captures() -> list[Path]:
    """Every non-empty raw capture, ordered by its first event's _stamp (from the .jsonl twin)."""
    found = []
    for jsonl in sorted(CAPTURES.glob("salt-*/*.jsonl")):
        first = jsonl.read_text().partition("\n")[0]
        if first:
            found.append((json.loads(first)["data"]["_stamp"], jsonl.with_suffix(".raw")))
    assert len(found) > 60, f"captures missing under {CAPTURES}"
    return [raw for _, raw in sorted(found)]


@pytest.fixture(scope="module")
def opensearch(tmp_path_factory) -> Engine:
    """One OpenSearch node for the module (2.19, or the first OpenSearch flavor of
    $SALTTAP_ENGINE_FLAVORS), stopped at its end."""
    flavor = next((f for f in suite_flavors() if FLAVORS[f]["product"] == "opensearch"), "opensearch")
    eng = Engine(flavor, tmp_path_factory.mktemp("opensearch")).start()
    yield eng
    eng.stop()


@pytest.fixture(scope="module")
def tls_proxy(opensearch, tmp_path_factory) -> TlsProxy:
    """nginx in front of the module's OpenSearch (tls_proxy.py): TLS with the test's own CA, basic
    auth, a door that requires a client certificate and one that takes an API key; credentials
    made fresh for the module. Stopped by its PID at the module's end."""
    proxy = TlsProxy(tmp_path_factory.mktemp("tls-proxy"), opensearch.port)
    yield proxy
    proxy.stop()
