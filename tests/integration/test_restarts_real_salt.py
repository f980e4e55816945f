"""Restarts under load, against the newest Salt of SALTTAP_SALT_VERSIONS and a real OpenSearch 2.19.

A lab of its own: a master, minion-a and minion-b, and an accepted key for `ghost`, a
minion that never runs (a job targeting it has a minion missing). Jobs are fired
asynchronously with Salt's LocalClient (tests/harness/burst.py): pings on `minion-*`
(succeeded), a failing state run on minion-a (failed), pings on minion-a and ghost
(missing), pings on one minion, and `test.sleep 3` on `minion-*`, open for a while.

1. `salttap run` is SIGKILLed three times during a 200-job burst, each time right after a
   sleep job is in its checkpoint; it is started again once that job's returns are in the
   job cache, so they came while salttap was dead. At the end every job of the master's job
   cache is in the engine exactly once (one job document per jid), with the cache's verdict
   and one return document per minion with its status. The restored sleep jobs take the
   returns they missed from the cache (the log says how many).
2. The master restarts in the middle of a burst while salttap taps it: salttap logs the
   gap, reconnects, reads the gap from the job cache, and again every job is there once
   with its verdict and returns.

Run:  SALTTAP_BIN=$PWD/build/dev/salttap .cache/venv/tools/bin/python -m pytest \
          tests/integration/test_restarts_real_salt.py -v
"""

from __future__ import annotations

import re
import time

import pytest

from burst import Agreement, Burst, burst_lab, cache_truth, salttap_run, verdict
from http_calls import wait_until

MISSING_AFTER = 15     # correlator.missing_after_seconds: every job's deadline
SETTLE_TIMEOUT = 180   # until the engine agrees with the cache: a hang guard on a busy 2-core box
SLEEP = 3              # the sleep jobs: still running when salttap is killed
INTERVAL = 0.25        # seconds between two publishes of a burst

pytestmark = pytest.mark.usefixtures("salttap_only")


def plan(n: int) -> list[dict]:
    """Every 20 jobs: a sleep (0), a failing state run (5), two pings with ghost
    missing (10, 15), pings on both minions or one otherwise."""
    jobs = []
    for i in range(n):
        k = i % 20
        if k == 0:
            jobs.append({"tgt": "minion-*", "fun": "test.sleep", "arg": [SLEEP]})
        elif k == 5:
            jobs.append({"tgt": ["minion-a"], "tgt_type": "list", "fun": "state.apply", "arg": ["fail"]})
        elif k in (10, 15):
            jobs.append({"tgt": ["minion-a", "ghost"], "tgt_type": "list", "fun": "test.ping"})
        elif k % 2:
            jobs.append({"tgt": "minion-*", "fun": "test.ping"})
        else:
            jobs.append({"tgt": f"minion-{'ab'[k % 4 // 2]}", "fun": "test.ping"})
    return jobs


@pytest.fixture(scope="module")
def restart_lab(request):
    yield from burst_lab(request)


@pytest.fixture
def lab(restart_lab, request):
    request.node._saltlab = restart_lab  # conftest adds its daemon logs to a failure report
    if not restart_lab.master.running():
        restart_lab.master.start()
        restart_lab.wait_master_up()
    return restart_lab


agree = Agreement()


def restored_and_passed(stderr: str) -> tuple[int, int]:
    restored = sum(int(n) for n in re.findall(r"checkpoint: restored (\d+) open jobs", stderr))
    passed = sum(int(n) for n in re.findall(r"\((\d+) of their returns read from the cache\)", stderr))
    return restored, passed


def test_sigkill_three_times_during_a_burst(lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    run = salttap_run(lab, salttap_bin, url, tmp_path / "state", "salttap-run-kill", missing_after=MISSING_AFTER)
    request.node._watchers = run.taps
    jobs = plan(200)
    burst = None
    try:
        run.start()
        burst = Burst(lab, jobs, INTERVAL, name="burst-kill")
        for sleep_index in (40, 100, 160):
            assert jobs[sleep_index]["fun"] == "test.sleep"
            # The sleep job went out over a second ago: it is in the checkpoint (written every second).
            burst.wait_fired(sleep_index + 12)
            sleeper = burst.jids[sleep_index]
            run.sigkill()
            # Its returns come while salttap is dead.
            wait_until(lambda: len(cache_truth(lab).get(sleeper, {}).get("returns", {})) == 2, 120,
                       f"both returns of {sleeper} in the job cache")
            run.start()
        fired = burst.wait_done()
        truth = agree.wait(url, lab, None, SETTLE_TIMEOUT,
                           "every job of the cache once in the engine, with the cache's verdict", run.diagnostics)
        assert set(fired) <= set(truth)
        statuses = [verdict(truth[j])[0] for j in fired]
        assert statuses.count("failed") >= 10 and statuses.count("missing") >= 20, statuses
        restored, passed = restored_and_passed(run.stderr())
        assert restored >= 3 and passed >= 3, (restored, passed, run.diagnostics())
        assert run.sigterm() == 0
    finally:
        if burst:
            burst.stop()
        run.stop()


def test_a_master_restart_during_a_burst(lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    run = salttap_run(lab, salttap_bin, url, tmp_path / "state", "salttap-run-master-restart",
                      missing_after=MISSING_AFTER)
    request.node._watchers = run.taps
    jobs = plan(60)
    burst = None
    try:
        tap = run.start()
        burst = Burst(lab, jobs, INTERVAL, name="burst-master-restart")
        burst.wait_fired(25)
        t0 = time.monotonic()
        lab.restart_master(wait_minions=False)
        assert len(burst.jids) < len(jobs), "the burst ended before the master was back"
        tap.wait_stderr(r"reconcile: not connected to the bus since", timeout=60)
        fired = burst.wait_done()
        tap.wait_stderr(r"reconcile: reading \d+ job directories .* from ", timeout=60)
        agree.wait(url, lab, fired, SETTLE_TIMEOUT, "every job of the burst once in the engine, with the cache's verdict",
                   run.diagnostics)
        assert tap.proc.poll() is None, "salttap exited"
        assert len(run.taps) == 1 and time.monotonic() - t0 < SETTLE_TIMEOUT + 120
        assert run.sigterm() == 0
    finally:
        if burst:
            burst.stop()
        run.stop()
        if not lab.master.running():
            lab.master.start()
        lab.wait_master_up()
