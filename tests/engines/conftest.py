"""Fixtures shared by the search-engine tests (their helpers: tests/harness/)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import binaries
from engine import FLAVORS, ROOT, Engine, suite_flavors
from indexed import Expected, expected_documents, replay_config, ship
from http_calls import call
from tls_proxy import TlsProxy

CAPTURES = ROOT / "tests" / "captures"


@pytest.fixture(scope="module")
def salttap() -> Path:
    """$SALTTAP_BIN, else $SALTTAP_BUILD_DIR/salttap, else build/dev/salttap (binaries.py)."""
    return binaries.require(binaries.salttap)


@pytest.fixture(scope="module")
def engine_gtest():
    """engine_gtest(name, engine, tmp_path, timeout) -> the finished run of the GoogleTest binary
    `name` of the build ($SALTTAP_BUILD_DIR, else build/dev) against `engine` (SALTTAP_ENGINE_URL),
    checked: it passed and saw the engine (nothing SKIPPED). Its [figures] lines are printed."""
    def run(name: str, engine: Engine, tmp_path: Path, timeout: float) -> subprocess.CompletedProcess:
        binary = binaries.require(lambda: binaries.gtest(name))
        env = dict(os.environ, SALTTAP_ENGINE_URL=engine.url, TMPDIR=str(tmp_path))
        done = subprocess.run([str(binary), "--gtest_color=no"], env=env, capture_output=True, text=True,
                              timeout=timeout)
        report = done.stdout + done.stderr
        assert done.returncode == 0, f"{name} failed against {engine.flavor}:\n{report[-8000:]}"
        assert "SKIPPED" not in done.stdout, "SALTTAP_ENGINE_URL was not seen"
        for line in done.stdout.splitlines():
            if line.startswith("[figures]"):
                print(f"{engine.flavor}: {line}")
        return done
    return run


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


@pytest.fixture(scope="module", params=suite_flavors(*FLAVORS))
def engine_of_each_flavor(request, tmp_path_factory) -> Engine:
    """An engine of each flavor in turn (every flavor, or $SALTTAP_ENGINE_FLAVORS), stopped at the module's end."""
    eng = Engine(request.param, tmp_path_factory.mktemp(request.param)).start()
    yield eng
    eng.stop()


@pytest.fixture(scope="module")
def replay_prefix() -> str:
    """The index prefix replayed_engine holds the captures under; a module using it names its own
    by overriding this fixture."""
    return "replayed"


@pytest.fixture(scope="module")
def replay_states_index() -> bool:
    """Whether replayed_engine indexes state results too (indexer.states_index); overridable."""
    return False


@pytest.fixture(scope="module")
def replayed_documents(salttap, captures, replay_prefix, replay_states_index, tmp_path_factory) -> Expected:
    """What `salttap replay --output documents` says an engine holding every capture keeps."""
    d = tmp_path_factory.mktemp("documents")
    config = replay_config(d / "salttap.yaml", "http://127.0.0.1:9", d / "spool", replay_prefix, replay_states_index)
    return expected_documents(salttap, captures, config)


@pytest.fixture(scope="module", params=suite_flavors(*FLAVORS))
def replayed_engine(request, salttap, captures, replay_prefix, replay_states_index, replayed_documents,
                    tmp_path_factory) -> Engine:
    """An engine of each flavor holding every capture's documents under replay_prefix, shipped by
    `salttap replay --ship` in recorded order (one stream, as one master saw it), each kind's count
    checked against replayed_documents. `.config` is the salttap config that finds it."""
    d = tmp_path_factory.mktemp(f"replayed-{request.param}")
    eng = Engine(request.param, d / "engine").start()
    try:
        eng.config = replay_config(d / "salttap.yaml", eng.url, d / "spool", replay_prefix, replay_states_index)
        ship(salttap, captures, eng.config)
        status, _ = call(f"{eng.url}/{replay_prefix}-*/_refresh", "POST")
        assert status == 200
        for kind, docs in replayed_documents.by_kind(replay_prefix).items():
            status, got = call(f"{eng.url}/{replay_prefix}-{kind}-*/_count")
            assert status == 200 and got["count"] == len(docs), \
                f"{kind}: {got} in the engine, {len(docs)} documents expected"
        yield eng
    finally:
        eng.stop()


@pytest.fixture(scope="module")
def tls_proxy(opensearch, tmp_path_factory) -> TlsProxy:
    """nginx in front of the module's OpenSearch (tls_proxy.py): TLS with the test's own CA, basic
    auth, a door that requires a client certificate and one that takes an API key; credentials
    made fresh for the module. Stopped by its PID at the module's end."""
    proxy = TlsProxy(tmp_path_factory.mktemp("tls-proxy"), opensearch.port)
    yield proxy
    proxy.stop()
