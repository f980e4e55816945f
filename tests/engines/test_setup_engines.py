"""The index contract against real engines: templates, degrades, documents, return shapes.

Starts OpenSearch 2.19, OpenSearch 3 and Elasticsearch 7.17 once each and runs the C++ gtest binary
``index-setup-engine-test`` against it with SALTTAP_ENGINE_URL set (the same mechanism
as test_shipper_engines.py). The binary comes from ``$SALTTAP_BUILD_DIR`` or
``build/dev`` (binaries.py): ``cmake --build build/dev --target index-setup-engine-test``.

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_setup_engines.py -v -s
"""
from __future__ import annotations

# What each test engine (Maven jars, no x-pack, no ISM plugin) must degrade.
EXPECTED_DEGRADE = {"opensearch": "ISM is not available", "elasticsearch": "ILM is not available"}


def test_index_setup_against_real_engine(engine_of_each_flavor, engine_gtest, tmp_path):
    run = engine_gtest("index-setup-engine-test", engine_of_each_flavor, tmp_path, timeout=280)
    # The degrade is logged once per install (three installs: suite set-up + the twice test).
    warn = [line for line in run.stderr.splitlines() if " WARN index setup: " in line]
    assert any(EXPECTED_DEGRADE[engine_of_each_flavor.product] in line for line in warn), run.stderr[-4000:]
