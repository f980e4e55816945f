"""`salttap run` reconciles from the master's job cache, against real Salt
masters and a real OpenSearch 2.19.

Per Salt series (the newest 3006.x and 3008.x of SALTTAP_SALT_VERSIONS):

1. A ping runs before salttap ever started ("early"). `salttap run` starts
   with an empty state directory: its first pass reads the whole job cache,
   and the early ping is indexed with its verdict. A ping runs live.
2. salttap is SIGKILLed (no goodbye: only the coverage record it wrote every
   second survives). Jobs run meanwhile: a ping, a failing state run, a ping
   with minion-b stopped. Then a job held open on minion-a until the test lets it end
   (held_job.py) starts: still running when salttap comes back, by construction.
3. `salttap run` starts again: every job of the gap is indexed once with its
   real verdict and its returns; the held job, whose return reaches the live
   bus, is a job with its fun, user and target (not an orphan) and
   succeeded; the live ping's documents are untouched. /metrics counts the
   passes and what they did. With a short late grace, the gap's jobs settled
   long before are indexed from the cache through the spool's backfill lane:
   /metrics shows that lane's figures moving, its documents appended and all
   acknowledged, none dropped.
4. The master restarts under salttap: the lost connection is logged as a gap,
   a job right after the restart is indexed, and a pass reads the gap.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_reconcile_real_salt.py -v
"""

from __future__ import annotations

import re

import pytest

import saltlab
from held_job import HeldJob
from http_calls import hits
from indexed import snapshot
from salt_suite import SERIES
from saltlab import jid_micros
from salttap_process import SalttapRun, indexer_yaml

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
MISSING_AFTER = 6       # the deadline of every job but the held one (correlator.deadlines)
SEARCH_TIMEOUT = 120    # until documents are searchable (a busy 2-core box): a hang guard
HELD_DEADLINE = 3600    # the held job's: the test ends it, its deadline never does
LATE_GRACE = 4          # correlator.late_grace_seconds: a job is the cache's once this long past its deadline

pytestmark = [pytest.mark.parametrize("salt_lab", [v for v in SERIES if not v.startswith("3007")], indirect=True,
                                      ids=lambda v: f"salt-{v}"),
              pytest.mark.usefixtures("salttap_only")]


def metric_value(text: str, sample: str) -> float:
    m = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def jid_hits(url: str, index: str, jids: list[str]) -> list[dict]:
    """Every document of `index` for these jids, with _id, _version and _source."""
    return hits(url, index, {"terms": {"jid": jids}}, size=1000, version=True)


def job_doc(url: str, jid: str, status: str | None = None):
    docs = jid_hits(url, "salt-jobs-*", [jid])
    if len(docs) != 1:
        return None
    src = docs[0]["_source"]
    return src if status is None or src["status"] == status else None


def test_run_indexes_what_the_job_cache_holds_and_the_index_lacks(lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    config = tmp_path / "salttap.yaml"
    config.write_text(
        # Every job's deadline MISSING_AFTER but the held one's, which returns live; a short late
        # grace, so the gap's jobs that settled well before salttap is back are indexed with the
        # cache's verdict, through the spool's backfill lane (the newest are followed live).
        f"correlator: {{deadlines: [{{fun: cmd.run, seconds: {HELD_DEADLINE}}}, {{fun: '*', seconds: {MISSING_AFTER}}}], "
        f"late_grace_seconds: {LATE_GRACE}}}\n"
        "reconcile: {state_interval_seconds: 1, overlap_seconds: 1}\n"
        "checkpoint: {interval_seconds: 1}\n"
        + indexer_yaml(url, tmp_path / "spool"))
    run = SalttapRun.beside(lab, salttap_bin, config, "salttap-run", drain_seconds=5)
    request.node._watchers = run.taps
    held = HeldJob(tmp_path)
    restart_b = False
    try:
        # ---- 1. a job before salttap ever ran; the first start reads the whole cache
        early = lab.salt_jid(["*", "test.ping"], t=10)
        tap = run.start()
        tap.wait_stderr(r"reconcile: no record of an earlier run", timeout=30)
        run.wait_until(lambda: job_doc(url, early, "succeeded"), SEARCH_TIMEOUT, f"the early job {early}")
        live = lab.salt_jid(["*", "test.ping"], t=10)
        run.wait_until(lambda: job_doc(url, live, "succeeded") and len(jid_hits(url, "salt-returns-*", [live])) == 2,
                       SEARCH_TIMEOUT, f"the live job {live}")
        # The coverage record: past the live job (and the overlap), nothing open.
        state = tmp_path / "spool" / "reconcile.state"

        def covered():
            text = state.read_text() if state.exists() else ""
            m = re.search(r"^live_until (\d+)$", text, re.M)
            return m and int(m.group(1)) > jid_micros(live) + 3_000_000 and "open_since -" in text
        run.wait_until(covered, 30, "the coverage record past the live job")
        # The live stream's last word on the live job: its final version, LATE_GRACE past its
        # deadline. Taken before the kill, so what follows must leave it as it is.
        run.wait_until(lambda: (job_doc(url, live) or {}).get("update") == "final", SEARCH_TIMEOUT,
                       f"the live job {live} final")
        live_docs = snapshot(url, [live])
        # And a checkpoint written after that final version (on the same pipeline thread, so
        # without the live job): the next start must not take it back and settle it again.
        final_us = next(v for (index, _), (v, _) in live_docs.items() if "-jobs-" in index) // 4
        run.wait_until(
            lambda: (run.metric("salttap_correlator_checkpoint_last_write_timestamp_seconds") or 0) * 1e6 > final_us,
            30, "a checkpoint written after the live job's final version")

        # ---- 2. SIGKILL: jobs run while salttap is dead
        run.sigkill()
        ping = lab.salt_jid(["*", "test.ping"], t=10)
        failed_state = lab.salt_jid(["*", "state.apply", "fail"], t=30)
        lab.stop_minion("minion-b")
        restart_b = True
        missing = lab.salt_jid(["*", "test.ping"], t=3)
        held_jid = lab.salt_async(held.args("minion-a"))

        # ---- 3. back: the gap is read from the cache
        tap = run.start()
        tap.wait_stderr(r"reconcile: the bus was tapped until", timeout=30)
        held.release()  # salttap is back: the held job's return reaches the live bus
        want = {ping: "succeeded", failed_state: "failed", missing: "missing", held_jid: "succeeded"}
        for jid, status in want.items():
            run.wait_until(lambda: job_doc(url, jid, status), SEARCH_TIMEOUT, f"job {jid} {status}")
        for jid in want:
            src = job_doc(url, jid)
            assert src["kind"] == "job", src
            assert src["user"] == "root" and src["tgt"], src
        assert job_doc(url, held_jid)["fun"] == "cmd.run"
        assert job_doc(url, held_jid)["minions"]["expected"] == ["minion-a"]
        assert job_doc(url, missing)["minions"]["missing"] == ["minion-b"]
        assert job_doc(url, failed_state)["states"]["failed"] == 4

        def returns_complete():
            by = {(h["_source"]["jid"], h["_source"]["minion"]): h["_source"]["status"]
                  for h in jid_hits(url, "salt-returns-*", list(want))}
            return by if len(by) == 2 * 3 + 1 else None
        by = run.wait_until(returns_complete, SEARCH_TIMEOUT, "every return of the gap")
        assert by[(missing, "minion-b")] == "missing" and by[(missing, "minion-a")] == "succeeded", by
        assert by[(held_jid, "minion-a")] == "succeeded", by
        assert all(by[(failed_state, mid)] == "failed" for mid in MINIONS), by

        # the live job: as the live stream wrote it; every job once
        assert snapshot(url, [live]) == live_docs
        assert len(jid_hits(url, "salt-jobs-*", [early, live, *want])) == 6

        text = run.wait_until(lambda: (lambda t: t if metric_value(t, "salttap_reconcile_running") == 0 and
                                   metric_value(t, "salttap_reconcile_passes_total") >= 1 else None)(
                              run.metrics_text()), 60, "the pass done on /metrics")
        read = sum(metric_value(text, f'salttap_reconcile_jobs_total{{outcome="{o}"}}')
                   for o in ("indexed", "followed"))
        assert read >= 3, text
        assert metric_value(text, 'salttap_reconcile_errors_total{error="state_write"}') == 0, text
        passes = metric_value(text, "salttap_reconcile_passes_total")

        # the gap's documents went through the backfill lane, and /metrics shows that lane's own figures
        def backfill_lane_shipped():
            t = run.metrics_text()
            appended = metric_value(t, "salttap_spool_backfill_appended_documents_total")
            # acked may exceed appended: what the killed run left in the lane is recovered and
            # acknowledged by this one, appended by the other
            done = appended > 0 and metric_value(t, "salttap_spool_backfill_acked_documents_total") >= appended \
                and metric_value(t, "salttap_spool_backfill_pending_documents") == 0
            return t if done else None
        text = run.wait_until(backfill_lane_shipped, SEARCH_TIMEOUT, "the backfill lane shipped on /metrics")
        # at least the first ping of the gap (long settled) came from the cache: its job and two returns
        assert metric_value(text, 'salttap_reconcile_jobs_total{outcome="indexed"}') >= 1, text
        assert metric_value(text, "salttap_spool_backfill_appended_documents_total") >= 3, text
        assert metric_value(text, "salttap_spool_backfill_appended_bytes_total") > 0, text
        assert re.search(r"^salttap_spool_backfill_size_bytes \d", text, re.M), text
        assert metric_value(text, "salttap_spool_backfill_full") == 0, text
        assert not [line for line in text.splitlines()
                    if line.startswith("salttap_spool_backfill_dropped_documents_total{") and not line.endswith(" 0")]
        # the live lane's series keep their names, without a label: the live ping and the held job's return went there
        assert metric_value(text, "salttap_spool_appended_documents_total") > 0, text

        # ---- 4. the master restarts under salttap: the gap is read when the bus is back
        lab.start_minion("minion-b", wait=False)
        lab.restart_master()
        restart_b = False
        after = lab.salt_jid(["*", "test.ping"], t=10)
        tap.wait_stderr(r"reconcile: not connected to the bus since", timeout=60)
        run.wait_until(lambda: job_doc(url, after, "succeeded"), SEARCH_TIMEOUT, f"job {after} after the restart")
        run.wait_until(lambda: metric_value(run.metrics_text(), "salttap_reconcile_passes_total") > passes,
                       60, "a pass for the restart's gap")
    finally:
        held.release()  # no minion keeps the job waiting after a failure
        run.stop()
        if restart_b:
            if not lab.minions["minion-b"].running():
                lab.start_minion("minion-b", wait=False)
            lab.wait_minions(["minion-b"])  # later tests need two minions
