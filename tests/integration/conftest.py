"""Fixtures for the real-Salt integration suite (its helpers: tests/harness/).

Environment:
  SALTTAP_SALT_VERSIONS  Salt versions to test, space/comma separated
                         (default "3006.25 3006.30 3007.17 3008.5"). A missing
                         venv is installed with tests/salt/install-salt.sh; if that
                         fails the version's tests error (never skipped).
  SALTTAP_BIN            salttap binary (else $SALTTAP_BUILD_DIR/salttap, else
                         build/dev/salttap under the repo: binaries.py).
  SALTTAP_WATCHER        "salttap" (default) or "salt": watch the bus with Salt's own
                         `salt-run state.event` instead, to check the harness itself
                         without a salttap binary (tests that need salttap's own
                         output are then skipped with a reason).
  SALTTAP_KEEP_LAB=1     keep the lab temp dirs (they are kept anyway after a failure).
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

import binaries
import saltlab
from engine import Engine
from salt_suite import INSTALL_ERRORS, SUMMARY, VERSIONS, WATCHER_MODE

if WATCHER_MODE not in ("salttap", "salt"):
    raise pytest.UsageError(f"SALTTAP_WATCHER must be 'salttap' or 'salt', not {WATCHER_MODE!r}")


def pytest_configure(config):
    # Turn SIGTERM into KeyboardInterrupt so fixture teardown stops the daemons;
    # saltlab's atexit hook is the last resort.
    def _term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, _term)


def pytest_collection_finish(session):
    """Install missing Salt venvs before any test runs (outside per-test timeouts)."""
    if session.config.option.collectonly:
        return
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    for v in VERSIONS:
        if saltlab.venv_ok(v):
            continue
        if tr:
            tr.write_line(f"installing salt {v} with {saltlab.INSTALL_SCRIPT} ...")
        t0 = time.monotonic()
        try:
            saltlab.ensure_salt(v)
            SUMMARY.setdefault(v, {})["install_s"] = time.monotonic() - t0
        except RuntimeError as e:
            INSTALL_ERRORS[v] = str(e)


@pytest.fixture(scope="session", params=VERSIONS, ids=lambda v: f"salt-{v}")
def salt_lab(request):
    """One running master + minion-a + minion-b per Salt version (versions run
    one after another; the previous lab is stopped before the next starts).
    The master reacts to salttap/alert/* (saltlab.SALTTAP_ALERT_REACTOR)."""
    version = request.param
    info = SUMMARY.setdefault(version, {})
    t0 = time.monotonic()
    if version in INSTALL_ERRORS:
        info["error"] = "install failed"
        pytest.fail(INSTALL_ERRORS[version], pytrace=False)
    if not saltlab.venv_ok(version):
        info["error"] = "not installed"
        pytest.fail(f"salt {version}: no working venv at {saltlab.venv_dir(version)}",
                    pytrace=False)
    lab = saltlab.SaltLab(version, reactors=saltlab.SALTTAP_ALERT_REACTOR)
    failed_before = request.session.testsfailed
    try:
        try:
            lab.start()
        except Exception as e:
            info["error"] = f"lab start failed: {type(e).__name__}"
            pytest.fail(f"salt {version}: lab did not start: {e}", pytrace=False)
        info["lab_up_s"] = lab.timings.get("lab_up")
        yield lab
    finally:
        lab.stop()
        info["total_s"] = time.monotonic() - t0
        if request.session.testsfailed > failed_before or os.environ.get("SALTTAP_KEEP_LAB"):
            info["kept"] = str(lab.base)
        else:
            lab.cleanup()


@pytest.fixture
def lab(salt_lab, request):
    """The version's lab, made healthy again if an earlier test left it degraded."""
    request.node._saltlab = salt_lab
    salt_lab.restore()
    return salt_lab


@pytest.fixture(scope="session")
def salttap_bin() -> Path:
    return binaries.require(binaries.salttap)


@pytest.fixture
def start_watcher(lab, request):
    """start_watcher(kind=None) -> a running, synced EventWatcher on the master bus.

    kind "salttap": `salttap watch --sock-dir <sock_dir> --format json`;
    kind "salt": `salt-run state.event pretty=False`; default: SALTTAP_WATCHER.
    All watchers are stopped (process group, by PID) at teardown.
    """
    watchers = []
    request.node._watchers = watchers
    counter = [0]

    def start(kind: str | None = None, sync: bool = True):
        kind = kind or WATCHER_MODE
        counter[0] += 1
        name = f"{request.node.name}-{kind}-{counter[0]}"
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        if kind == "salttap":
            binp = request.getfixturevalue("salttap_bin")
            w = saltlab.EventWatcher(
                [str(binp), "watch", "--sock-dir", str(lab.sock_dir), "--format", "json"],
                name=name, parse=saltlab.parse_json_line, log_dir=lab.log_dir)
        else:
            w = lab.salt_event_watcher(name=name)
        watchers.append(w)
        if sync:
            w.sync(lab)
        return w

    yield start
    for w in watchers:
        w.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed:
        return
    for w in getattr(item, "_watchers", []):
        rep.sections.append((f"watcher {w.name}", w.diagnostics()))
    lab = getattr(item, "_saltlab", None)
    if lab is not None:
        rep.sections.append((f"saltlab {lab.version} daemon logs", lab.logs()))


def pytest_terminal_summary(terminalreporter):
    if not SUMMARY:
        return
    tr = terminalreporter
    tr.section("salttap integration: per Salt version")
    tr.write_line(f"watcher: {WATCHER_MODE}" + (f" ({binaries.salttap_path()})"
                                                if WATCHER_MODE == "salttap" else ""))
    for v, info in SUMMARY.items():
        parts = []
        for k in ("error", "install_s", "lab_up_s", "total_s", "pub_framing_probe", "tap_framing", "kept"):
            if k in info and info[k] is not None:
                val = info[k]
                parts.append(f"{k}={val:.1f}" if isinstance(val, float) else f"{k}={val}")
        tr.write_line(f"salt {v}: " + " ".join(parts))


@pytest.fixture
def salttap_only():
    """For tests of salttap's own behaviour (use with pytest.mark.usefixtures)."""
    if WATCHER_MODE != "salttap":
        pytest.skip(f"SALTTAP_WATCHER={WATCHER_MODE}: this test needs the salttap binary")


@pytest.fixture(scope="module")
def opensearch(tmp_path_factory):
    """A real OpenSearch node for the module (a module may override it with its own)."""
    eng = Engine("opensearch", tmp_path_factory.mktemp("opensearch"))
    try:
        eng.start()
        yield eng
    finally:
        eng.stop()
