"""End to end: a real salt-master and two minions, `salttap run`, a real OpenSearch 2.19.

salttap taps the lab's bus and ships into the engine; the test fires real jobs (a ping,
a failing state run, a risky `rm -rf` on every minion, a ping with minion-b stopped) and
polls the engine until the documents are searchable: job status per jid, one return per
minion per job (the stopped one `missing`), the failed / missing / risky alerts, and
/metrics showing an empty spool, and the job browser on the same listener showing the failed
job's minions and the alerts. Then SIGTERM: salttap exits 0 with nothing left to ship.

One Salt version: the newest of SALTTAP_SALT_VERSIONS (conftest.py).

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_index_real_salt.py -v
"""

from __future__ import annotations

import pytest

import saltlab
from engine import Engine
from http_calls import call, search, wait_until
from salt_suite import NEWEST, WATCHER_MODE
from salttap_process import SalttapRun, indexer_yaml, metric, wait_following

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
MISSING_AFTER = 8          # correlator.missing_after_seconds
DRAIN_SECONDS = 5          # salttap run --drain-seconds
SEARCH_TIMEOUT = 90        # until documents are searchable (a busy 2-core box)
STOP_TIMEOUT = 60          # a hang guard after SIGTERM, not a measure: the drain is DRAIN_SECONDS

# one lab: the newest configured Salt (conftest's salt_lab, parametrized here)
pytestmark = pytest.mark.parametrize("salt_lab", [NEWEST], indirect=True, ids=lambda v: f"salt-{v}")


@pytest.fixture(autouse=True)
def _needs_salttap():
    if WATCHER_MODE != "salttap":
        pytest.skip(f"SALTTAP_WATCHER={WATCHER_MODE}: indexing needs the salttap binary")


@pytest.fixture
def opensearch(tmp_path):
    eng = Engine("opensearch", tmp_path / "opensearch")
    try:
        eng.start()
        yield eng
    finally:
        eng.stop()


# --------------------------------------------------------------------------
# the test
# --------------------------------------------------------------------------

def test_jobs_indexed_end_to_end(lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    run = SalttapRun.beside(
        lab, salttap_bin, tmp_path / "salttap.yaml", "salttap-run", drain_seconds=DRAIN_SECONDS, config_text=(
            f"correlator: {{missing_after_seconds: {MISSING_AFTER}}}\n"
            + indexer_yaml(url, tmp_path / "spool", states_index=True)))
    request.node._watchers = run.taps  # conftest attaches their diagnostics to a failure report
    restart_b = False
    try:
        # ready: tapping the bus and templates installed
        tap = run.start()
        metrics = run.metrics
        # and demonstrably following the bus: a raw event reaches the events index
        wait_following(lab, url)

        ping = lab.salt_jid(["*", "test.ping"], t=10)
        # -t 4: the CLI polls saltutil.find_job after 4 s, which extends salttap's 8 s
        # deadline for a slow state run instead of calling its minions missing
        failed = lab.salt_jid(["*", "state.apply", "fail"], t=4)
        risky = lab.salt_jid(["*", "cmd.run", "rm -rf /tmp/salttap-nothing"], t=4)
        lab.stop_minion("minion-b")
        restart_b = True
        missing = lab.salt_jid(["*", "test.ping"], t=3)
        # a publish is not queued for a stopped minion: it cannot answer this job
        lab.start_minion("minion-b", wait=False)

        # ---- jobs: one document per jid, final status
        want_status = {ping: "succeeded", failed: "failed", risky: "succeeded", missing: "missing"}

        def jobs_final():
            docs = {d["jid"]: d for d in search(url, "salt-jobs-*", {"terms": {"jid": list(want_status)}})}
            if all(docs.get(j, {}).get("status") == s and docs[j].get("settled_at")
                   for j, s in want_status.items()):
                return docs
            return None
        jobs = wait_until(jobs_final, SEARCH_TIMEOUT, f"job docs with status {want_status}",
                          lambda: f"{search(url, 'salt-jobs-*', {'terms': {'jid': list(want_status)}})}\n"
                                  f"{run.diagnostics()}")
        for jid in want_status:
            assert sorted(jobs[jid]["minions"]["expected"]) == MINIONS, jobs[jid]
            assert jobs[jid]["update"] in ("settled", "final"), jobs[jid]
        assert sorted(jobs[ping]["minions"]["succeeded"]) == MINIONS, jobs[ping]
        assert sorted(jobs[failed]["minions"]["failed"]) == MINIONS, jobs[failed]
        assert jobs[failed]["fun"] == "state.apply" and jobs[failed]["states"]["failed"] == 4, jobs[failed]
        assert sorted(jobs[risky]["minions"]["succeeded"]) == MINIONS, jobs[risky]
        assert jobs[risky]["risk"]["level"] == "critical", jobs[risky]
        assert jobs[missing]["minions"]["missing"] == ["minion-b"], jobs[missing]
        assert jobs[missing]["minions"]["succeeded"] == ["minion-a"], jobs[missing]
        assert jobs[missing]["counts"]["missing"] == 1, jobs[missing]

        # ---- returns: one per minion per job, the stopped minion's `missing`
        def returns_all():
            docs = search(url, "salt-returns-*", {"terms": {"jid": list(want_status)}})
            return docs if len(docs) >= 2 * len(want_status) else None
        rets = wait_until(returns_all, SEARCH_TIMEOUT, "two returns per job")
        by = {(d["jid"], d["minion"]): d for d in rets}
        assert len(rets) == len(by) == 2 * len(want_status), sorted(by)
        for jid, status in want_status.items():
            for m in MINIONS:
                d = by[(jid, m)]
                want = "missing" if (jid, m) == (missing, "minion-b") else \
                    "failed" if jid == failed else "succeeded"
                assert d["status"] == want, (jid, m, d)
        assert by[(missing, "minion-b")]["fun"] == "test.ping", by[(missing, "minion-b")]
        assert by[(failed, "minion-a")]["retcode"] != 0, by[(failed, "minion-a")]
        # the failing state run's states: 2 per minion, both failed
        states = search(url, "salt-states-*", {"term": {"jid": failed}})
        assert len(states) == 4 and all(s["outcome"] == "failed" for s in states), states

        # ---- alerts: the failed, missing and risky jobs, and not the plain ping
        want_alert = {failed: "failed", missing: "missing", risky: "risky"}

        def alerts_all():
            docs = {d["jid"]: d for d in search(url, "salt-alerts-*", {"terms": {"jid": list(want_status)}})}
            return docs if set(want_alert) <= set(docs) else None
        alerts = wait_until(alerts_all, SEARCH_TIMEOUT, "the failed, missing and risky alerts")
        assert ping not in alerts, alerts[ping]
        for jid, kind in want_alert.items():
            assert kind in alerts[jid]["kinds"], alerts[jid]
        assert alerts[failed]["alert"] == "failed" and sorted(alerts[failed]["failed"]) == MINIONS
        assert alerts[missing]["alert"] == "missing" and alerts[missing]["missing"] == ["minion-b"]
        assert alerts[risky]["alert"] == "risky" and alerts[risky]["risk"]["level"] == "critical"

        # ---- nothing left in the spool, nothing dead-lettered
        def spool_empty():
            status, text = call(f"{metrics}/metrics")
            if status != 200:
                return None
            pending = metric(text, "salttap_spool_pending_documents")
            return text if pending == 0 else None
        text = wait_until(spool_empty, 30, "salttap_spool_pending_documents 0 on /metrics")
        assert (metric(text, "salttap_spool_appended_documents_total") or 0) > 0, text
        assert metric(text, "salttap_indexer_setup_done") == 1, text
        dead = search(url, "salt-deadletter-*", {"match_all": {}})
        assert dead == [], dead

        # ---- the job browser, served by run beside /metrics, answers from the same engine
        status, page = call(f"{metrics}/ui/")
        assert status == 200 and "/ui/static/app.js" in page, (status, page[:500])
        status, shown = call(f"{metrics}/ui/api/jobs/{failed}")
        assert status == 200, shown
        assert shown["job"]["status"] == "failed" and shown["job"]["states"]["failed"] == 4, shown["job"]
        assert {r["minion"]: r["status"] for r in shown["returns"]} == {m: "failed" for m in MINIONS}, shown
        assert all(r["failed_states"] for r in shown["returns"]), shown["returns"]
        status, listed = call(f"{metrics}/ui/api/alerts?since=all")
        assert status == 200 and set(want_alert) <= {a["jid"] for a in listed["alerts"]}, listed
        status, text = call(f"{metrics}/metrics")
        assert metric(text, 'salttap_ui_requests_total{route="api_job",status="200"}') is not None, text[-2000:]

        # ---- SIGTERM: exits 0, nothing waiting in the spool when it stops or after
        rc = run.sigterm(STOP_TIMEOUT)
        assert rc == 0, f"salttap run exited {rc}\n{run.diagnostics()}"
        tap.wait_stderr(r"run: stopping; 0 documents wait in the spool", timeout=STOP_TIMEOUT)
        tap.wait_stderr(r"run: stopped; 0 documents left in the spool", timeout=STOP_TIMEOUT)
    finally:
        run.stop()
        if restart_b:
            if not lab.minions["minion-b"].running():
                lab.start_minion("minion-b", wait=False)
            lab.wait_minions(["minion-b"])  # later tests need two minions

