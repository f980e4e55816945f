"""A restart of `salttap run` in the middle of a job, against real Salt and a real OpenSearch 2.19.

1. `salt --async '*' test.sleep N` is open in salttap (its job document, status `running`, is
   in the engine); salttap gets SIGTERM, writes its checkpoint and exits 0; a new `salttap run`
   restores the job before its first live event and takes the two returns. The engine then
   holds one job document for that jid: kind `job`, fun `test.sleep`, user and target from the
   `new` event, status succeeded with both minions, both returns succeeded, and no orphan.
   Without the checkpoint the restarted salttap sees returns for a jid it never saw `new`
   for and the job ends as kind `orphan`, without fun arguments, user or target.
2. A corrupt checkpoint file: salttap logs a WARN naming the file and why, counts it, moves
   it aside, starts, and indexes a live job.

Salt versions: the newest 3006.x, 3007.x and 3008.x of SALTTAP_SALT_VERSIONS for the restart,
the newest alone for the corrupt file.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_checkpoint_real_salt.py -v
"""

from __future__ import annotations

import re
import signal
import time
import uuid
from pathlib import Path

import pytest

import saltlab
from conftest import NEWEST, SERIES
from test_index_real_salt import call, metric, salt_jid, search, wait_for_hits, wait_until, _healthz, _no_events

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
# The job must still be open when the restarted salttap is tapping the bus again: the
# stop (drain), the restart and the index setup fit in this with room on a busy 2-core box.
SLEEP_SECONDS = 15
SEARCH_TIMEOUT = 90   # until documents are searchable (a busy 2-core box)
STOP_TIMEOUT = 60     # a hang guard after SIGTERM, not a measure
START_TIMEOUT = 60


pytestmark = pytest.mark.usefixtures("salttap_only")


class Run:
    """One `salttap run` on the lab, its config in tmp_path; stopped (by PID) at the end."""

    def __init__(self, lab, salttap_bin: Path, url: str, tmp_path: Path, name: str):
        self.config = tmp_path / "salttap.yaml"
        self.checkpoint = tmp_path / "state" / "correlator.checkpoint"
        self.config.write_text(
            "correlator: {missing_after_seconds: 120}\n"
            "checkpoint: {interval_seconds: 1}\n"
            # The checkpoint alone: the lab's job cache holds the earlier tests'
            # jobs, which a reconcile would hand to the correlator (and so to the
            # checkpoint) too. test_reconcile_real_salt.py has both at work.
            "reconcile: {enabled: false}\n"
            "indexer:\n"
            f"  hosts: [\"{url}\"]\n"
            f"  spool: {{dir: {tmp_path / 'state' / 'spool'}}}\n"
            "  bulk: {max_docs: 200, max_wait_ms: 200, in_flight: 2, backoff_initial_ms: 200, "
            "backoff_max_ms: 2000}\n")
        self.lab, self.bin, self.name = lab, salttap_bin, name
        self.count = 0
        self.tap = None
        self.metrics = ""

    def start(self, request) -> saltlab.EventWatcher:
        self.count += 1
        port, = saltlab.free_ports(1)
        self.metrics = f"http://127.0.0.1:{port}"
        argv = [str(self.bin), "run", "--config", str(self.config),
                "--master-config", str(self.lab.master_conf_dir / "master"),
                "--metrics-listen", f"127.0.0.1:{port}", "--drain-seconds", "2"]
        self.tap = saltlab.EventWatcher(argv, name=f"{self.name}-{self.count}", log_dir=self.lab.log_dir,
                                        parse=_no_events)
        request.node._watchers = [self.tap]  # conftest attaches its diagnostics to a failure report
        wait_until(lambda: self.tap.proc.poll() is None and _healthz(self.metrics), START_TIMEOUT,
                   "salttap /healthz (tap connected, index setup done)", self.tap.diagnostics)
        return self.tap

    def metric(self, name: str) -> float | None:
        status, text = call(f"{self.metrics}/metrics")
        return metric(text, name) if status == 200 else None

    def sigterm(self) -> None:
        self.tap.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.tap.proc.wait(timeout=STOP_TIMEOUT)
        except Exception:
            pytest.fail(f"salttap run did not exit within {STOP_TIMEOUT}s of SIGTERM\n{self.tap.diagnostics()}")
        assert rc == 0, f"salttap run exited {rc}\n{self.tap.diagnostics()}"

    def stop(self) -> None:
        if self.tap:
            self.tap.stop()


def synced(lab, url: str) -> None:
    """Until a raw event fired now reaches the events index: salttap follows the bus."""
    tag = f"salttap-test/sync/{uuid.uuid4().hex}"

    def seen():
        lab.fire_event(tag, {"sync": True})
        return wait_for_hits(url, "salt-events-*", {"term": {"tag": tag}}, 5)
    wait_until(seen, 60, f"the event {tag} in salt-events-*")


def salt_async(lab, args: list[str]) -> str:
    r = lab.salt(["--async", *args], check=False, timeout=60)
    m = re.search(r"job ID: (\d+)", r.stdout)
    assert m, f"no jid from salt --async {args}: rc={r.returncode} out={r.stdout!r} err={r.stderr!r}"
    return m.group(1)


@pytest.mark.parametrize("salt_lab", SERIES, indirect=True, ids=lambda v: f"salt-{v}")
def test_a_job_open_across_a_restart_is_indexed_as_if_salttap_never_stopped(
        lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    run = Run(lab, salttap_bin, url, tmp_path, "salttap-run-checkpoint")
    try:
        first = run.start(request)
        first.wait_stderr(r"checkpoint: none at .*correlator\.checkpoint", timeout=5)
        synced(lab, url)

        published = time.monotonic()
        jid = salt_async(lab, ["*", "test.sleep", str(SLEEP_SECONDS)])
        # open in salttap: its job document (status running) reached the engine
        running = wait_until(
            lambda: [d for d in search(url, "salt-jobs-*", {"term": {"jid": jid}}) if d.get("status") == "running"],
            SLEEP_SECONDS, f"job {jid} open (status running) in salt-jobs-*", first.diagnostics)[0]
        assert running["kind"] == "job" and running["fun"] == "test.sleep", running

        run.sigterm()
        first.wait_stderr(r"checkpoint: wrote 1 tracked jobs to .*correlator\.checkpoint", timeout=5)
        assert run.checkpoint.is_file(), run.checkpoint

        second = run.start(request)
        up = time.monotonic()
        second.wait_stderr(r"checkpoint: restored 1 open jobs from .*correlator\.checkpoint", timeout=5)
        assert up - published < SLEEP_SECONDS, (
            f"the restarted salttap was ready {up - published:.1f}s after the publish, after the "
            f"{SLEEP_SECONDS}s job had returned: the machine is too slow for this test\n{second.diagnostics()}")

        def settled():
            docs = search(url, "salt-jobs-*", {"term": {"jid": jid}})
            return docs if docs and docs[0].get("status") == "succeeded" else None
        docs = wait_until(settled, SEARCH_TIMEOUT + SLEEP_SECONDS, f"job {jid} succeeded in salt-jobs-*",
                          lambda: f"{search(url, 'salt-jobs-*', {'term': {'jid': jid}})}\n{second.diagnostics()}")
        assert len(docs) == 1, docs  # one document for the jid: no orphan beside it
        job = docs[0]
        assert job["kind"] == "job", job
        assert job["fun"] == "test.sleep", job
        assert job["user"] and job["user"] == running["user"], job
        assert job["tgt"] == "*" and job["tgt_type"] == "glob", job
        assert sorted(job["minions"]["expected"]) == MINIONS, job
        assert sorted(job["minions"]["succeeded"]) == MINIONS, job
        assert job["counts"]["missing"] == 0 and job["counts"]["failed"] == 0, job

        def returns():
            docs = search(url, "salt-returns-*", {"term": {"jid": jid}})
            return docs if len(docs) >= len(MINIONS) else None
        rets = wait_until(returns, SEARCH_TIMEOUT, f"both returns of {jid}")
        assert sorted(r["minion"] for r in rets) == MINIONS, rets
        assert all(r["status"] == "succeeded" and r["fun"] == "test.sleep" for r in rets), rets
        assert not search(url, "salt-jobs-*", {"bool": {"filter": [{"term": {"jid": jid}},
                                                                   {"term": {"kind": "orphan"}}]}})

        assert wait_until(lambda: run.metric("salttap_correlator_checkpoint_restored_jobs_total"), 10,
                          "salttap_correlator_checkpoint_restored_jobs_total on /metrics") == 1
        run.sigterm()
    finally:
        run.stop()


@pytest.mark.parametrize("salt_lab", [NEWEST], indirect=True, ids=lambda v: f"salt-{v}")
def test_a_corrupt_checkpoint_is_logged_and_ignored(lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    run = Run(lab, salttap_bin, url, tmp_path, "salttap-run-corrupt-checkpoint")
    run.checkpoint.parent.mkdir(parents=True)
    garbage = b"STAPCKPT\x00\x00\x00\x01\x00\x00\x00\x10\xde\xad\xbe\xefnot the payload!"
    run.checkpoint.write_bytes(garbage)
    try:
        tap = run.start(request)
        tap.wait_stderr(r"WARN.*checkpoint: ignoring .*correlator\.checkpoint \(bad_crc: crc32 does not match\)",
                        timeout=5)
        assert (run.checkpoint.parent / "correlator.checkpoint.bad").read_bytes() == garbage
        synced(lab, url)
        jid = salt_jid(lab, ["*", "test.ping"], t=10)

        def settled():
            docs = search(url, "salt-jobs-*", {"term": {"jid": jid}})
            return docs if docs and docs[0].get("status") == "succeeded" else None
        job = wait_until(settled, SEARCH_TIMEOUT, f"job {jid} succeeded", tap.diagnostics)[0]
        assert job["kind"] == "job" and sorted(job["minions"]["succeeded"]) == MINIONS, job
        errors = wait_until(
            lambda: run.metric('salttap_correlator_checkpoint_restore_errors_total{reason="bad_crc"}'), 10,
            "the bad_crc restore error on /metrics")
        assert errors == 1
        # the next checkpoint is a good one again
        wait_until(lambda: run.checkpoint.is_file(), 30, "a new checkpoint written")
        run.sigterm()
    finally:
        run.stop()
