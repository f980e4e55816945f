"""Several masters and an HA pair indexing into one engine, against the newest Salt of
SALTTAP_SALT_VERSIONS and a real OpenSearch 2.19.

Two labs of their own, each a master with a minion called minion-a; each master has its
own `salttap run` (`master_id` east and west), and east has a second one, its HA twin
(the same `master_id`, a spool of its own). All three index into one OpenSearch.

- The same jid on both masters (fired with an explicit jid through Salt's LocalClient,
  `test.echo east` on one, `test.echo west` on the other) makes two job documents and two
  return documents, `_id`s `east/<jid>...` and `west/<jid>...`, told apart by `master`,
  each with its own master's function arguments and return.
- All three are one fleet (`fleet_id: both`), yet `salttap jobs show <jid>` shows two jobs,
  "same jid, different jobs": the arguments differ (the collision guard, docs/masters.md).
- Every job of each master's job cache is in the engine exactly once under that master,
  with the cache's verdict and one return per minion: the HA pair makes no duplicate.
- A failing job alerts once from each of the pair (two WARN lines, one per salttap), and
  the alerts index holds one document for it.

Run:  SALTTAP_BIN=$PWD/build/dev/salttap .cache/venv/tools/bin/python -m pytest \
          tests/integration/test_masters_real_salt.py -v
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

import saltlab
from burst import Burst, cache_truth, mismatches, salttap_run
from http_calls import hits, wait_until
from salt_suite import INSTALL_ERRORS, NEWEST
from salttap_process import indexer_yaml

SETTLE_TIMEOUT = 180   # until the engine agrees with the caches: a hang guard on a busy 2-core box
MISSING_AFTER = 15

pytestmark = pytest.mark.usefixtures("salttap_only")


@pytest.fixture(scope="module")
def two_labs(request):
    if NEWEST in INSTALL_ERRORS:
        pytest.fail(INSTALL_ERRORS[NEWEST], pytrace=False)
    labs = {name: saltlab.SaltLab(NEWEST, minions=("minion-a",)) for name in ("east", "west")}
    failed_before = request.session.testsfailed
    errors = []

    def start(lab):
        try:
            lab.start()
        except Exception as e:  # reported below, with the lab's logs
            errors.append(e)
    try:
        threads = [threading.Thread(target=start, args=(lab,)) for lab in labs.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            pytest.fail(f"a lab did not start: {errors[0]}", pytrace=False)
        yield labs
    finally:
        for lab in labs.values():
            lab.stop()
            if request.session.testsfailed == failed_before and not os.environ.get("SALTTAP_KEEP_LAB"):
                lab.cleanup()


def test_two_masters_and_an_ha_pair_in_one_engine(two_labs, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    east, west = two_labs["east"], two_labs["west"]
    request.node._saltlab = east
    runs = [salttap_run(east, salttap_bin, url, tmp_path / "east-1", "salttap-east-1", master_id="east",
                        missing_after=MISSING_AFTER, fleet_id="both"),
            salttap_run(east, salttap_bin, url, tmp_path / "east-2", "salttap-east-2", master_id="east",
                        missing_after=MISSING_AFTER, fleet_id="both"),
            salttap_run(west, salttap_bin, url, tmp_path / "west", "salttap-west", master_id="west",
                        missing_after=MISSING_AFTER, fleet_id="both")]
    request.node._watchers = [t for r in runs for t in r.taps]
    bursts = []
    try:
        for r in runs:
            r.start()
        request.node._watchers = [t for r in runs for t in r.taps]

        # The same jid on both masters: a jid each master would make itself, the time now.
        jid = time.strftime("%Y%m%d%H%M%S", time.gmtime()) + "424242"
        for lab, word in ((east, "east"), (west, "west")):
            bursts.append(Burst(lab, [{"tgt": "*", "fun": "test.echo", "arg": [word], "jid": jid},
                                      *({"tgt": "*", "fun": "test.ping"} for _ in range(5))],
                                interval=0.2, name=f"burst-{word}"))
        for b in bursts:
            assert b.wait_done()[0] == jid
        failing = east.salt_jid(["*", "cmd.run", "exit 3"], t=30)

        def both():
            jobs = {h["_id"]: h["_source"] for h in hits(url, "salt-jobs-*", {"term": {"jid": jid}})}
            rets = {h["_id"]: h["_source"] for h in hits(url, "salt-returns-*", {"term": {"jid": jid}})}
            done = len(jobs) == 2 and len(rets) == 2 and all(j["status"] == "succeeded" for j in jobs.values())
            return (jobs, rets) if done else None
        jobs, rets = wait_until(both, SETTLE_TIMEOUT, f"the jid {jid} of both masters",
                                lambda: "\n".join(r.diagnostics() for r in runs))
        assert set(jobs) == {f"east/{jid}", f"west/{jid}"}, jobs
        assert set(rets) == {f"east/{jid}/minion-a", f"west/{jid}/minion-a"}, rets
        for master in ("east", "west"):
            job, ret = jobs[f"{master}/{jid}"], rets[f"{master}/{jid}/minion-a"]
            assert job["master"] == master and ret["master"] == master, (job, ret)
            assert job["fun"] == "test.echo" and job["args"] == [master], job
            assert ret["return_text"] == f'"{master}"', ret
        # One fleet, but not one job: the collision guard keeps them apart.
        history = tmp_path / "history.yaml"
        history.write_text(indexer_yaml(url, tmp_path / "history-spool"))
        shown = subprocess.run([str(salttap_bin), "jobs", "show", jid, "--config", str(history)],
                               capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                               env=dict(os.environ, NO_COLOR="1"))
        print(shown.stdout, shown.stderr)
        assert shown.returncode == 0, shown.stderr
        assert f"same jid, different jobs: 2 jobs have the jid {jid}" in shown.stderr, shown.stderr
        assert "== job 1 of 2: same jid, different jobs" in shown.stdout
        assert "== job 2 of 2: same jid, different jobs" in shown.stdout
        for master in ("east", "west"):
            assert f"seen by   {master}" in shown.stdout.splitlines(), shown.stdout
            assert f'function  test.echo ["{master}"]' in shown.stdout.splitlines(), shown.stdout

        # Every job of each cache once under its master: the HA pair adds no document.
        for lab, master in ((east, "east"), (west, "west")):
            wait_until(lambda: not mismatches(url, cache_truth(lab), master), SETTLE_TIMEOUT,
                       f"every job of {master}'s cache once in the engine",
                       lambda: "\n".join(mismatches(url, cache_truth(lab), master)[:20]))

        # Alerts: one from each of the pair, one document.
        for r in runs[:2]:
            r.tap.wait_stderr(rf"WARN alert failed job {failing}", timeout=60)
        assert not any(f"alert failed job {failing}" in line for line in runs[2].tap.stderr_lines)
        alerts = wait_until(lambda: hits(url, "salt-alerts-*", {"term": {"jid": failing}}), 60,
                            f"the alert of {failing} in salt-alerts-*")
        assert [h["_id"] for h in alerts] == [f"east/{failing}/alert"], alerts
        for r in runs:
            assert r.sigterm() == 0
    finally:
        for b in bursts:
            b.stop()
        for r in runs:
            r.stop()
