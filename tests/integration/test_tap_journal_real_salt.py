"""The tap journal under a burst of real jobs, against the newest Salt of
SALTTAP_SALT_VERSIONS and a real OpenSearch 2.19 (docs/tap-journal.md).

A lab of its own: a master, minion-a and minion-b, and an accepted key for `ghost`, a
minion that never runs. `salttap run` taps it with a queue of one event, spool writes
synced after every batch (a slow pipeline) and reconcile off, so what the engine holds
comes from the live bus alone. A burst of 150 jobs fired 20 a second by Salt's
LocalClient (pings on both minions, on one, a failing state run on minion-a, pings with
ghost missing) makes the reader send frames to the journal and the pipeline drain them:
once every return is in the master's job cache, every job of the burst is in the engine
exactly once, with the cache's verdict and one return document per minion with its
status; /metrics shows frames spilled and as many drained, none dropped, none corrupt;
no tap_journal_full alert; the journal's segments are gone once drained. About 3 minutes.

Run:  SALTTAP_BIN=$PWD/build/dev/salttap .cache/venv/tools/bin/python -m pytest \\
          tests/integration/test_tap_journal_real_salt.py -v
"""

from __future__ import annotations

import pytest

from burst import Agreement, Burst, burst_lab, cache_truth, failing_state, mixed_plan, ping_with_ghost, verdict
from http_calls import hits, wait_until
from salttap_process import SalttapRun, metric

MISSING_AFTER = 90     # correlator.missing_after_seconds: minions under a burst answer in seconds, not ms
INTERVAL = 0.05        # seconds between two publishes: 20 jobs a second
SETTLE_TIMEOUT = 300   # until the engine agrees with the cache: a hang guard on a busy 2-core box
JOBS = 150

pytestmark = pytest.mark.usefixtures("salttap_only")


def plan(n: int) -> list[dict]:
    """Every 10 jobs: a failing state run (3), a ping with ghost missing (7), pings otherwise."""
    return mixed_plan(n, 10, {3: failing_state, 7: ping_with_ghost})


@pytest.fixture(scope="module")
def journal_lab(request):
    yield from burst_lab(request)


agree = Agreement()


def test_a_burst_through_a_tiny_queue_is_journaled_and_every_job_indexed(journal_lab, salttap_bin, opensearch,
                                                                         tmp_path, request):
    lab, url = journal_lab, opensearch.url
    state = tmp_path / "state"
    journal_dir = state / "tap-journal"
    run = SalttapRun.beside(lab, salttap_bin, state / "salttap.yaml", "salttap-run-journal", config_text=(
        f"correlator: {{missing_after_seconds: {MISSING_AFTER}}}\n"
        "checkpoint: {interval_seconds: 1}\n"
        # The live bus alone: the job cache must not fill what the tap would have lost.
        "reconcile: {enabled: false}\n"
        # One event in memory; every frame the pipeline has not taken yet goes to disk.
        f"tap: {{queue_max_events: 1, queue_max_bytes: 1024, journal: {{dir: {journal_dir}, segment_bytes: 4096}}}}\n"
        "indexer:\n"
        f"  hosts: [\"{url}\"]\n"
        # A batch costs an fdatasync: the pipeline falls behind the burst.
        f"  spool: {{dir: {state / 'spool'}, fsync: every_batch}}\n"
        "  bulk: {max_docs: 500, max_wait_ms: 200, in_flight: 2, backoff_initial_ms: 200, backoff_max_ms: 2000}\n"))
    request.node._watchers = run.taps
    burst = None
    try:
        run.start()
        burst = Burst(lab, plan(JOBS), INTERVAL, name="burst-journal")
        fired = burst.wait_done()

        def answered() -> bool:
            """Every running minion's return of the burst is in the job cache (ghost never answers)."""
            cache = cache_truth(lab)
            return all(j in cache and set(cache[j]["minions"]) - {"ghost"} <= set(cache[j]["returns"]) for j in fired)

        wait_until(answered, SETTLE_TIMEOUT, "every return of the burst in the job cache", run.diagnostics)
        truth = agree.wait(url, lab, fired, SETTLE_TIMEOUT,
                           "every job of the burst once in the engine, with the cache's verdict", run.diagnostics)
        statuses = [verdict(truth[j])[0] for j in fired]
        assert statuses.count("failed") >= 10 and statuses.count("missing") >= 10, statuses

        def metrics() -> str:
            text = run.metrics_text()
            assert text, run.diagnostics()
            return text

        text = metrics()
        spilled = metric(text, "salttap_tap_journal_spilled_frames_total")
        assert spilled and spilled > 0, f"nothing went to the journal\n{run.diagnostics()}"
        wait_until(lambda: metric(metrics(), "salttap_tap_journal_frames") == 0, 30, "the journal drained")
        text = metrics()
        assert metric(text, "salttap_tap_journal_drained_frames_total") == metric(
            text, "salttap_tap_journal_spilled_frames_total")
        for reason in ("queue_full", "journal_full", "journal_error"):
            assert metric(text, f'salttap_tap_dropped_events_total{{reason="{reason}"}}') == 0, reason
        assert metric(text, "salttap_tap_journal_corrupt_records_total") == 0
        assert metric(text, 'salttap_tap_skipped_frames_total{reason="undecodable"}') == 0
        assert metric(text, 'salttap_alerting_alerts_total{kind="tap_journal_full"}') == 0
        assert not hits(url, "salt-alerts-*", {"term": {"alert": "tap_journal_full"}})
        # Drained and finished: no segment is left (the lock stays while salttap runs).
        wait_until(lambda: not [p for p in journal_dir.iterdir() if p.name.startswith("seg-")], 30,
                   "the journal's segments removed once drained")
        assert run.sigterm() == 0
    finally:
        if burst:
            burst.stop()
        run.stop()
