"""The indexer's bulk shipper and libcurl client against real engines.

Starts OpenSearch 2.19 and Elasticsearch 7.17 once each (module-scoped) and runs the
C++ gtest binary ``indexer-engine-test`` against it with SALTTAP_ENGINE_URL set. The
binary is built by the default build: ``$SALTTAP_BUILD_DIR/tests/indexer-engine-test``
or ``build/dev/tests/indexer-engine-test`` (binaries.py).

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_shipper_engines.py -v -s
"""
from __future__ import annotations


def test_shipper_against_real_engine(engine_of_each_flavor, engine_gtest, tmp_path):
    engine_gtest("indexer-engine-test", engine_of_each_flavor, tmp_path, timeout=240)
