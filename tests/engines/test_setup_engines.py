"""The index contract against real engines: templates, degrades, documents, return shapes.

Starts OpenSearch 2.19, OpenSearch 3 and Elasticsearch 7.17 once each and runs the C++ gtest binary
``index-setup-engine-test`` against it with SALTTAP_ENGINE_URL set (the same mechanism
as test_shipper_engines.py). The binary comes from ``$SALTTAP_BUILD_DIR`` or
``build/dev``: ``cmake --build build/dev --target index-setup-engine-test``.

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_setup_engines.py -v -s
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import FLAVORS, ROOT, Engine, suite_flavors  # noqa: E402

BINARY = "tests/index-setup-engine-test"

# What each test engine (Maven jars, no x-pack, no ISM plugin) must degrade.
EXPECTED_DEGRADE = {"opensearch": "ISM is not available", "elasticsearch": "ILM is not available"}


@pytest.fixture(scope="module")
def setup_test_binary() -> Path:
    build_dir = os.environ.get("SALTTAP_BUILD_DIR")
    path = Path(build_dir or ROOT / "build" / "dev") / BINARY
    if not path.exists():
        # A missing binary fails: a skipped engine suite would pass without testing anything.
        pytest.fail(f"{path} not built; build it: cmake --preset dev && cmake --build --preset dev "
                    f"--target index-setup-engine-test (or set SALTTAP_BUILD_DIR to a build dir that has it)",
                    pytrace=False)
    return path


@pytest.fixture(scope="module", params=suite_flavors(*FLAVORS))
def setup_engine(request, tmp_path_factory):
    eng = Engine(request.param, tmp_path_factory.mktemp(f"setup-{request.param}"))
    eng.start()
    yield eng
    eng.stop()


def test_index_setup_against_real_engine(setup_engine, setup_test_binary, tmp_path):
    env = dict(os.environ, SALTTAP_ENGINE_URL=setup_engine.url, TMPDIR=str(tmp_path))
    run = subprocess.run([str(setup_test_binary), "--gtest_color=no"], env=env, capture_output=True,
                         text=True, timeout=280)
    report = run.stdout + run.stderr
    assert run.returncode == 0, f"index-setup-engine-test failed against {setup_engine.flavor}:\n{report[-8000:]}"
    assert "SKIPPED" not in run.stdout, "SALTTAP_ENGINE_URL was not seen"
    # The degrade is logged once per install (three installs: suite set-up + the twice test).
    warn = [line for line in run.stderr.splitlines() if " WARN index setup: " in line]
    assert any(EXPECTED_DEGRADE[setup_engine.product] in line for line in warn), run.stderr[-4000:]
    for line in run.stdout.splitlines():
        if line.startswith("[figures]"):
            print(f"{setup_engine.flavor}: {line}")
