"""The indexer's bulk shipper and libcurl client against real engines.

Starts OpenSearch 2.19 and Elasticsearch 7.17 once each (module-scoped) and runs the
C++ gtest binary ``indexer-engine-test`` against it with SALTTAP_ENGINE_URL set. The
binary is built by the default build: ``$SALTTAP_BUILD_DIR/tests/indexer-engine-test``
or ``build/dev/tests/indexer-engine-test``.

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_shipper_engines.py -v -s
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import FLAVORS, ROOT, Engine, suite_flavors  # noqa: E402

BINARY = "tests/indexer-engine-test"


@pytest.fixture(scope="module")
def engine_test_binary() -> Path:
    build_dir = os.environ.get("SALTTAP_BUILD_DIR")
    path = Path(build_dir or ROOT / "build" / "dev") / BINARY
    if not path.exists():
        # A missing binary fails: a skipped engine suite would pass without testing anything.
        pytest.fail(f"{path} not built; build it: cmake --preset dev && cmake --build --preset dev "
                    f"--target indexer-engine-test (or set SALTTAP_BUILD_DIR to a build dir that has it)",
                    pytrace=False)
    return path


@pytest.fixture(scope="module", params=suite_flavors(*FLAVORS))
def shipper_engine(request, tmp_path_factory):
    eng = Engine(request.param, tmp_path_factory.mktemp(f"shipper-{request.param}"))
    eng.start()
    yield eng
    eng.stop()


def test_shipper_against_real_engine(shipper_engine, engine_test_binary, tmp_path):
    env = dict(os.environ, SALTTAP_ENGINE_URL=shipper_engine.url, TMPDIR=str(tmp_path))
    run = subprocess.run([str(engine_test_binary), "--gtest_color=no"], env=env, capture_output=True,
                         text=True, timeout=240)
    report = run.stdout + run.stderr
    assert run.returncode == 0, f"indexer-engine-test failed against {shipper_engine.flavor}:\n{report[-8000:]}"
    assert "SKIPPED" not in run.stdout, "SALTTAP_ENGINE_URL was not seen"
    for line in run.stdout.splitlines():
        if line.startswith("[figures]"):
            print(f"{shipper_engine.flavor}: {line}")
