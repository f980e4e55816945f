"""The remediation reactor (deploy/salt/reactor/salttap_rerun.sls) on a real master.

One lab of its own (the reactor map is fixed at master start): the newest Salt under
test, the reactor mapped to salttap/alert/failed/*, salttap/alert/missing/* and
salt/minion/*/start and enabled; `salttap run` fires its alerts on the bus and indexes
into a real OpenSearch. The tests, in order:

1. a job misses a stopped minion; the minion starts again; the reactor re-runs the job
   on it alone (same function and arguments, list target, the original jid in the
   metadata), and the jobs index holds the re-run as its own job with `rerun_of`;
2. a state run fails on one minion: it is re-run there at once; the re-run fails too,
   its alert carries `rerun_of`, and the reactor does not re-run it;
3. a job of risk `high` (a shell command on every minion) fails: not re-run;
4. the master restarted with the reactor mapped but `salttap_rerun` not set: an alert
   makes nothing happen.

Every negative check waits for a proof that the reactor has handled the alert: its own
`salttap/rerun/skipped/<jid>` event, or (when disabled, where it says nothing) a sync
event answered by a reactor mapped after it (the reactor handles events in order, and
publishes a re-run before it handles the next event).

Run:  SALTTAP_BIN=$PWD/build/dev/salttap .cache/venv/tools/bin/python -m pytest \
          tests/integration/test_reactor_real_salt.py -v
"""

from __future__ import annotations

import os
import re
import uuid

import pytest

import saltlab
from http_calls import search, wait_until
from salt_suite import NEWEST, WATCHER_MODE
from salttap_process import SalttapRun, wait_following

REACTOR_SLS = saltlab.REPO_ROOT / "deploy" / "salt" / "reactor" / "salttap_rerun.sls"
MISSING_AFTER = 6       # correlator.missing_after_seconds
EVENT_TIMEOUT = 90      # a hang guard on a busy 2-core box, not a measure
SEARCH_TIMEOUT = 90
SYNCED = "salttap-test/synced"

RERUN_ON = {"salttap_rerun": {"enabled": True}}
SYNC_REACTOR = (
    "salttap_test_synced:\n"
    "  runner.event.send:\n"
    "    - args:\n"
    f"      - tag: \"{SYNCED}/{{{{ tag.split('/')[-1] }}}}\"\n"
    "      - data: {}\n"
)
# fails on minion-a only
HALF_SLS = (
    "{% if grains['id'] == 'minion-a' %}\n"
    "half_fails:\n  test.fail_without_changes:\n    - name: fails on minion-a\n"
    "{% else %}\n"
    "half_ok:\n  test.succeed_without_changes:\n    - name: fine elsewhere\n"
    "{% endif %}\n"
)


@pytest.fixture(autouse=True)
def _needs_salttap():
    if WATCHER_MODE != "salttap":
        pytest.skip(f"SALTTAP_WATCHER={WATCHER_MODE}: the re-run link needs the salttap binary")


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def new_events(bus: saltlab.EventWatcher, fun: str, tgt: list[str]) -> list[dict]:
    """The `salt/job/<jid>/new` events of list-target jobs of `fun` on `tgt`."""
    with bus._cond:
        events = list(bus.events)
    return [e["data"] for e in events
            if re.fullmatch(r"salt/job/[^/]+/new", e["tag"]) and e["data"].get("fun") == fun
            and e["data"].get("tgt_type") == "list" and e["data"].get("tgt") == tgt]


def rerun_events(bus: saltlab.EventWatcher, jid: str) -> list[str]:
    return [t for t in bus.tags() if re.fullmatch(rf"salttap/rerun/\w+/{jid}", t)]


def job_doc(url: str, jid: str, pred=lambda d: d.get("settled_at")):
    docs = search(url, "salt-jobs-*", {"term": {"jid": jid}})
    return docs[0] if docs and pred(docs[0]) else None


# --------------------------------------------------------------------------
# fixtures: one lab, one engine, one salttap for the module
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rlab():
    if not saltlab.venv_ok(NEWEST):
        pytest.fail(f"salt {NEWEST}: no working venv at {saltlab.venv_dir(NEWEST)}", pytrace=False)
    sls = REACTOR_SLS.read_text()
    lab = saltlab.SaltLab(NEWEST, master_extra=RERUN_ON, sls_files={"half.sls": HALF_SLS}, reactors={
        "salttap/alert/failed/*": sls,
        "salttap/alert/missing/*": sls,
        "salt/minion/*/start": sls,
        "salttap-test/sync/*": SYNC_REACTOR,
    })
    failed = False
    try:
        lab.start()
        yield lab
    except BaseException:
        failed = True
        raise
    finally:
        lab.stop()
        if not failed and not os.environ.get("SALTTAP_KEEP_LAB"):
            lab.cleanup()


@pytest.fixture(scope="module")
def tap(rlab, salttap_bin, opensearch, tmp_path_factory):
    """`salttap run`: alerts on the bus, documents into OpenSearch; ready and following the bus."""
    tmp = tmp_path_factory.mktemp("salttap")
    config = tmp / "salttap.yaml"
    config.write_text(
        "master_id: reactor-lab\n"
        f"correlator: {{missing_after_seconds: {MISSING_AFTER}}}\n"
        "alerts: {fire_event: true, min_risk: critical}\n"
        "indexer:\n"
        f"  hosts: [\"{opensearch.url}\"]\n"
        f"  spool: {{dir: {tmp / 'spool'}}}\n"
        "  bulk: {max_docs: 200, max_wait_ms: 200, backoff_initial_ms: 200, backoff_max_ms: 2000}\n")
    check = rlab.run([str(salttap_bin), "check-config", str(config)], check=False, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
    run = SalttapRun.beside(rlab, salttap_bin, config, "salttap-run")
    try:
        run.start(timeout=120)
        wait_following(rlab, opensearch.url, timeout=120)
        yield run
    finally:
        run.stop()


@pytest.fixture
def bus(rlab, request):
    """Salt's own view of the bus (`salt-run state.event`), synced."""
    rlab.restore()
    rlab.wait_minions()  # every minion answers, restarted or not
    w = rlab.salt_event_watcher(name=f"bus-{request.node.name}")
    request.node._watchers = [w]
    request.node._saltlab = rlab
    try:
        w.sync(rlab)
        yield w
    finally:
        w.stop()


# --------------------------------------------------------------------------
# the tests (in this order: the last one restarts the master without the flag)
# --------------------------------------------------------------------------

def test_a_missed_minion_is_re_run_alone_when_it_starts_again(rlab, tap, bus, opensearch):
    rlab.stop_minion("minion-b")
    jid = rlab.salt_async(["*", "test.arg", "rerun-me", "keep=1"])
    original = bus.wait_tag(f"salt/job/{jid}/new", timeout=EVENT_TIMEOUT)["data"]
    alert = bus.wait_tag(f"salttap/alert/missing/{jid}", timeout=EVENT_TIMEOUT)["data"]
    assert alert["missing"] == ["minion-b"] and alert["failed"] == [], alert
    assert "rerun_of" not in alert and "args_redacted" not in alert, alert
    pending = bus.wait_tag(f"salttap/rerun/pending/{jid}", timeout=EVENT_TIMEOUT)["data"]
    assert pending["minions"] == ["minion-b"], pending
    assert not new_events(bus, "test.arg", ["minion-b"]), "re-run before the minion came back"

    rlab.start_minion("minion-b", wait=False)
    started = bus.wait_tag(f"salttap/rerun/started/{jid}", timeout=EVENT_TIMEOUT)["data"]
    assert started["minions"] == ["minion-b"], started
    reruns = new_events(bus, "test.arg", ["minion-b"])
    assert len(reruns) == 1, reruns
    rerun = reruns[0]
    rjid = rerun["jid"]
    assert rjid != jid and rerun["minions"] == ["minion-b"], rerun
    assert rerun["arg"] == original["arg"], (rerun, original)
    ret = bus.wait_tag(f"salt/job/{rjid}/ret/minion-b", timeout=EVENT_TIMEOUT)["data"]
    assert ret.get("metadata") == {"salttap_rerun_of": jid}, ret
    assert ret.get("success") is True, ret

    # indexed as a job of its own, linked to the original
    doc = wait_until(lambda: job_doc(opensearch.url, rjid), SEARCH_TIMEOUT, f"the job document of {rjid}",
                     tap.diagnostics)
    assert doc["rerun_of"] == jid, doc
    assert doc["status"] == "succeeded" and doc["minions"]["expected"] == ["minion-b"], doc
    assert doc["tgt_type"] == "list" and doc["fun"] == "test.arg", doc
    orig = wait_until(lambda: job_doc(opensearch.url, jid), SEARCH_TIMEOUT, f"the job document of {jid}")
    assert "rerun_of" not in orig and orig["minions"]["missing"] == ["minion-b"], orig
    # one re-run, and only on minion-b
    assert [r["jid"] for r in new_events(bus, "test.arg", ["minion-b"])] == [rjid]
    assert not new_events(bus, "test.arg", ["minion-a"])


def test_failed_minions_are_re_run_at_once_and_the_re_run_is_never_re_run(rlab, tap, bus, opensearch):
    jid = rlab.salt_async(["*", "state.apply", "half"])
    alert = bus.wait_tag(f"salttap/alert/failed/{jid}", timeout=EVENT_TIMEOUT)["data"]
    assert alert["failed"] == ["minion-a"] and alert["risk"]["level"] == "medium", alert
    started = bus.wait_tag(f"salttap/rerun/started/{jid}", timeout=EVENT_TIMEOUT)["data"]
    assert started["minions"] == ["minion-a"], started
    reruns = new_events(bus, "state.apply", ["minion-a"])
    assert len(reruns) == 1 and reruns[0]["arg"] == ["half"], reruns
    rjid = reruns[0]["jid"]

    # the re-run fails again: its alert names the original, and the reactor skips it
    again = bus.wait_tag(f"salttap/alert/failed/{rjid}", timeout=EVENT_TIMEOUT)["data"]
    assert again["rerun_of"] == jid and again["failed"] == ["minion-a"], again
    skipped = bus.wait_tag(f"salttap/rerun/skipped/{rjid}", timeout=EVENT_TIMEOUT)["data"]
    assert skipped["reason"] == f"a re-run of {jid}", skipped
    assert [r["jid"] for r in new_events(bus, "state.apply", ["minion-a"])] == [rjid]
    assert rerun_events(bus, rjid) == [f"salttap/rerun/skipped/{rjid}"]

    doc = wait_until(lambda: job_doc(opensearch.url, rjid), SEARCH_TIMEOUT, f"the job document of {rjid}",
                     tap.diagnostics)
    assert doc["rerun_of"] == jid and doc["status"] == "failed", doc
    alerts = wait_until(lambda: search(opensearch.url, "salt-alerts-*", {"term": {"jid": rjid}}),
                        SEARCH_TIMEOUT, f"the alert document of {rjid}")
    assert alerts[0]["rerun_of"] == jid, alerts


def test_a_high_risk_job_is_not_re_run(rlab, tap, bus):
    jid = rlab.salt_async(["*", "cmd.run", "exit 3"])
    alert = bus.wait_tag(f"salttap/alert/failed/{jid}", timeout=EVENT_TIMEOUT)["data"]
    assert alert["risk"]["level"] == "high" and sorted(alert["failed"]) == ["minion-a", "minion-b"], alert
    skipped = bus.wait_tag(f"salttap/rerun/skipped/{jid}", timeout=EVENT_TIMEOUT)["data"]
    assert skipped["reason"] == "risk high is above max_risk medium", skipped
    assert rerun_events(bus, jid) == [f"salttap/rerun/skipped/{jid}"]
    for tgt in (["minion-a"], ["minion-b"], ["minion-a", "minion-b"]):
        assert not new_events(bus, "cmd.run", tgt), tgt


def test_mapped_but_not_enabled_does_nothing(rlab, tap, request):
    rlab.set_master_options({})  # the reactor stays mapped; salttap_rerun is gone
    rlab.restart_master()
    bus = request.getfixturevalue("bus")
    jid = rlab.salt_async(["*", "test.retcode", "3"])
    alert = bus.wait_tag(f"salttap/alert/failed/{jid}", timeout=EVENT_TIMEOUT)["data"]
    assert sorted(alert["failed"]) == ["minion-a", "minion-b"] and alert["risk"]["level"] == "none", alert
    # the reactor handles events in order: once it answered this, it handled the alert
    sync = uuid.uuid4().hex
    rlab.fire_event(f"salttap-test/sync/{sync}", {})
    bus.wait_tag(f"{SYNCED}/{sync}", timeout=EVENT_TIMEOUT)
    assert rerun_events(bus, jid) == []
    for tgt in (["minion-a"], ["minion-b"], ["minion-a", "minion-b"]):
        assert not new_events(bus, "test.retcode", tgt), tgt
