"""A restart of `salttap run` in the middle of a job, against real Salt and a real OpenSearch 2.19.

1. A job held open on both minions (held_job.py: `cmd.run` of a loop that ends when the test
   creates a file) is open in salttap (its job document, status `running`, is in the engine);
   salttap gets SIGTERM, writes its checkpoint and exits 0; a new `salttap run` restores the
   job before its first live event. Only then does the test let the job end, and the new
   salttap takes the two returns. The engine then holds one job document for that jid: kind
   `job`, fun `cmd.run` with its argument, user and target from the `new` event, status
   succeeded with both minions, both returns succeeded, and no orphan. Without the checkpoint
   the restarted salttap sees returns for a jid it never saw `new` for and the job ends as
   kind `orphan`, without fun arguments, user or target. The job ends when the test says, not
   after a sleep: how long the stop, the restart and the index setup take cannot decide it.
2. A corrupt checkpoint file: salttap logs a WARN naming the file and why, counts it, moves
   it aside, starts, and indexes a live job.

Salt versions: the newest 3006.x, 3007.x and 3008.x of SALTTAP_SALT_VERSIONS for the restart,
the newest alone for the corrupt file.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_checkpoint_real_salt.py -v
"""

from __future__ import annotations

from pathlib import Path

import pytest

import saltlab
from held_job import HeldJob
from http_calls import search, wait_until
from salt_suite import NEWEST, SERIES
from salttap_process import SalttapRun, indexer_yaml, wait_following

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
# Far beyond the held job's life: the test ends it, its deadline never does.
MISSING_AFTER = 3600
SEARCH_TIMEOUT = 90   # until documents are searchable (a busy 2-core box)


pytestmark = pytest.mark.usefixtures("salttap_only")


def salttap_run(lab, salttap_bin: Path, url: str, tmp_path: Path, name: str) -> SalttapRun:
    """`salttap run` on the lab, its config in tmp_path and its state (spool, checkpoint) in tmp_path/state."""
    return SalttapRun.beside(lab, salttap_bin, tmp_path / "salttap.yaml", name, config_text=(
        f"correlator: {{missing_after_seconds: {MISSING_AFTER}}}\n"
        "checkpoint: {interval_seconds: 1}\n"
        # The checkpoint alone: the lab's job cache holds the earlier tests'
        # jobs, which a reconcile would hand to the correlator (and so to the
        # checkpoint) too. test_reconcile_real_salt.py has both at work.
        "reconcile: {enabled: false}\n"
        + indexer_yaml(url, tmp_path / "state" / "spool")))


def checkpoint_of(tmp_path: Path) -> Path:
    return tmp_path / "state" / "correlator.checkpoint"


def settled(url: str, jid: str):
    """The documents of jid once its job document says succeeded."""
    docs = search(url, "salt-jobs-*", {"term": {"jid": jid}})
    return docs if docs and docs[0].get("status") == "succeeded" else None


@pytest.mark.parametrize("salt_lab", SERIES, indirect=True, ids=lambda v: f"salt-{v}")
def test_a_job_open_across_a_restart_is_indexed_as_if_salttap_never_stopped(
        lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    run = salttap_run(lab, salttap_bin, url, tmp_path, "salttap-run-checkpoint")
    request.node._watchers = run.taps  # conftest attaches their diagnostics to a failure report
    held = HeldJob(tmp_path)
    try:
        first = run.start()
        first.wait_stderr(r"checkpoint: none at .*correlator\.checkpoint", timeout=5)
        wait_following(lab, url)

        jid = lab.salt_async(held.args())
        # open in salttap: its job document (status running) reached the engine
        running = wait_until(
            lambda: [d for d in search(url, "salt-jobs-*", {"term": {"jid": jid}}) if d.get("status") == "running"],
            SEARCH_TIMEOUT, f"job {jid} open (status running) in salt-jobs-*", run.diagnostics)[0]
        assert running["kind"] == "job" and running["fun"] == "cmd.run", running

        assert run.sigterm() == 0, run.diagnostics()
        first.wait_stderr(r"checkpoint: wrote 1 tracked jobs to .*correlator\.checkpoint", timeout=5)
        assert checkpoint_of(tmp_path).is_file(), checkpoint_of(tmp_path)

        second = run.start()
        second.wait_stderr(r"checkpoint: restored 1 open jobs from .*correlator\.checkpoint", timeout=5)
        # Only now may the job end: its returns reach the restarted salttap alone.
        held.release()

        docs = wait_until(lambda: settled(url, jid), SEARCH_TIMEOUT, f"job {jid} succeeded in salt-jobs-*",
                          lambda: f"{search(url, 'salt-jobs-*', {'term': {'jid': jid}})}\n{run.diagnostics()}")
        assert len(docs) == 1, docs  # one document for the jid: no orphan beside it
        job = docs[0]
        assert job["kind"] == "job", job
        assert job["fun"] == "cmd.run" and held.command in job["args_text"], job
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
        assert all(r["status"] == "succeeded" and r["fun"] == "cmd.run" for r in rets), rets
        assert not search(url, "salt-jobs-*", {"bool": {"filter": [{"term": {"jid": jid}},
                                                                   {"term": {"kind": "orphan"}}]}})

        assert run.wait_until(lambda: run.metric("salttap_correlator_checkpoint_restored_jobs_total"), 10,
                              "salttap_correlator_checkpoint_restored_jobs_total on /metrics") == 1
        assert run.sigterm() == 0, run.diagnostics()
    finally:
        held.release()  # no minion keeps the job waiting after a failure
        run.stop()


@pytest.mark.parametrize("salt_lab", [NEWEST], indirect=True, ids=lambda v: f"salt-{v}")
def test_a_corrupt_checkpoint_is_logged_and_ignored(lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    run = salttap_run(lab, salttap_bin, url, tmp_path, "salttap-run-corrupt-checkpoint")
    request.node._watchers = run.taps
    checkpoint = checkpoint_of(tmp_path)
    checkpoint.parent.mkdir(parents=True)
    garbage = b"STAPCKPT\x00\x00\x00\x01\x00\x00\x00\x10\xde\xad\xbe\xefnot the payload!"
    checkpoint.write_bytes(garbage)
    try:
        tap = run.start()
        tap.wait_stderr(r"WARN.*checkpoint: ignoring .*correlator\.checkpoint \(bad_crc: crc32 does not match\)",
                        timeout=5)
        assert (checkpoint.parent / "correlator.checkpoint.bad").read_bytes() == garbage
        wait_following(lab, url)
        jid = lab.salt_jid(["*", "test.ping"], t=10)

        job = wait_until(lambda: settled(url, jid), SEARCH_TIMEOUT, f"job {jid} succeeded", run.diagnostics)[0]
        assert job["kind"] == "job" and sorted(job["minions"]["succeeded"]) == MINIONS, job
        errors = run.wait_until(
            lambda: run.metric('salttap_correlator_checkpoint_restore_errors_total{reason="bad_crc"}'), 10,
            "the bad_crc restore error on /metrics")
        assert errors == 1
        # the next checkpoint is a good one again
        run.wait_until(lambda: checkpoint.is_file(), 30, "a new checkpoint written")
        assert run.sigterm() == 0, run.diagnostics()
    finally:
        run.stop()
