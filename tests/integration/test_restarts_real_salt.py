"""Restarts under load, against the newest Salt of SALTTAP_SALT_VERSIONS and a real OpenSearch 2.19.

A lab of its own: a master, minion-a and minion-b, and an accepted key for `ghost`, a
minion that never runs (a job targeting it has a minion missing). Jobs are fired
asynchronously with Salt's LocalClient (tests/harness/burst.py): pings on `minion-*`
(succeeded), a failing state run on minion-a (failed), pings on minion-a and ghost
(missing), pings on one minion, and `test.sleep 3` on `minion-*`, open for a while; where
salttap is killed, a job held open on `minion-*` until the test lets it end (held_job.py).

1. `salttap run` is SIGKILLed three times during a 200-job burst, each time with a held job
   open in it and in a checkpoint written since (two checkpoint writes counted on /metrics
   after its running document was searchable); the test lets the job end while salttap is
   dead and starts salttap again once both returns are in the job cache. At the end every job
   of the master's job cache is in the engine exactly once (one job document per jid), with
   the cache's verdict and one return document per minion with its status. The restored held
   jobs take the returns they missed from the cache (the log says how many).
2. The master restarts in the middle of a burst while salttap taps it: salttap logs the
   gap, reconnects, reads the gap from the job cache, and again every job is there once
   with its verdict and returns.

Run:  SALTTAP_BIN=$PWD/build/dev/salttap .cache/venv/tools/bin/python -m pytest \
          tests/integration/test_restarts_real_salt.py -v
"""

from __future__ import annotations

import re

import pytest

from burst import (Agreement, Burst, burst_lab, cache_truth, failing_state, mixed_plan, ping_with_ghost, salttap_run,
                   verdict)
from held_job import HeldJob
from http_calls import search, wait_until

MISSING_AFTER = 15     # correlator.missing_after_seconds: the deadline of every job but the held ones
HELD_DEADLINE = 3600   # the held jobs': the test ends them, their deadline never does
SETTLE_TIMEOUT = 180   # until the engine agrees with the cache: a hang guard on a busy 2-core box
SLEEP = 3              # the sleep jobs: open for a while
INTERVAL = 0.25        # seconds between two publishes of a burst
KILLS = (40, 100, 160)  # the burst's jobs open when salttap is killed (held)

pytestmark = pytest.mark.usefixtures("salttap_only")


def plan(n: int, held: dict[int, HeldJob] | None = None) -> list[dict]:
    """Every 20 jobs: a sleep (0), a failing state run (5), two pings with ghost
    missing (10, 15), pings on both minions or one otherwise; the held jobs at their index."""
    def sleep() -> dict:
        return {"tgt": "minion-*", "fun": "test.sleep", "arg": [SLEEP]}

    jobs = mixed_plan(n, 20, {0: sleep, 5: failing_state, 10: ping_with_ghost, 15: ping_with_ghost})
    for i, job in (held or {}).items():
        if i < n:
            jobs[i] = {"tgt": "minion-*", "fun": "cmd.run", "arg": [job.command]}
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
    run = salttap_run(lab, salttap_bin, url, tmp_path / "state", "salttap-run-kill", missing_after=MISSING_AFTER,
                      deadlines={"cmd.run": HELD_DEADLINE})
    request.node._watchers = run.taps
    held = {i: HeldJob(tmp_path) for i in KILLS}
    jobs = plan(200, held)
    burst = None
    try:
        run.start()
        burst = Burst(lab, jobs, INTERVAL, name="burst-kill")
        for index in KILLS:
            burst.wait_fired(index + 1)
            holder = burst.jids[index]
            # Open in salttap (its running document searchable), then in a checkpoint: the
            # second write counted after that began after it (writes follow one another).
            run.wait_until(lambda: [d for d in search(url, "salt-jobs-*", {"term": {"jid": holder}})
                                    if d.get("status") == "running"],
                           SETTLE_TIMEOUT, f"the held job {holder} open in salt-jobs-*")
            writes = run.metric("salttap_correlator_checkpoint_writes_total") or 0
            run.wait_until(lambda: (run.metric("salttap_correlator_checkpoint_writes_total") or 0) >= writes + 2,
                           60, "two checkpoints written since")
            run.sigkill()
            # Its returns come while salttap is dead.
            held[index].release()
            wait_until(lambda: len(cache_truth(lab).get(holder, {}).get("returns", {})) == 2, 120,
                       f"both returns of {holder} in the job cache")
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
        for h in held.values():
            h.release()  # no minion keeps a job waiting after a failure
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
        lab.restart_master(wait_minions=False)
        assert len(burst.jids) < len(jobs), "the burst ended before the master was back"
        tap.wait_stderr(r"reconcile: not connected to the bus since", timeout=60)
        fired = burst.wait_done()
        tap.wait_stderr(r"reconcile: reading \d+ job directories .* from ", timeout=60)
        agree.wait(url, lab, fired, SETTLE_TIMEOUT, "every job of the burst once in the engine, with the cache's verdict",
                   run.diagnostics)
        # one salttap throughout: it rode out the restart without exiting
        assert tap.proc.poll() is None and len(run.taps) == 1, run.diagnostics()
        assert run.sigterm() == 0
    finally:
        if burst:
            burst.stop()
        run.stop()
        if not lab.master.running():
            lab.master.start()
        lab.wait_master_up()
