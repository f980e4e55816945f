"""Reloading the config of a running `salttap run` (SIGHUP), against real Salt and a real OpenSearch 2.19.

salttap runs with a config; a job held open on both minions until the test lets it end
(held_job.py) is open in it (its job document, status `running`, is in the engine). Before the reload a `test.version` job is indexed and a
`test.arg flavour=vanilla` job is indexed with its argument in clear and no risk. The config
is rewritten (test.version added to functions_blacklist, an audit rule making test.arg
critical, `flavour` a redacted key, and the spool directory changed, which needs a restart)
and salttap gets SIGHUP:

1. the log says the file was reloaded with the open job kept, and names indexer.spool as
   needing a restart; /metrics counts the reload (result ok) and its time;
2. the new rules apply: a `test.version` job gets no document (counted as skipped by the
   function filter) while a `test.ping` run after it does; a `test.arg flavour=vanilla` job
   is `critical` by the new rule and its argument is redacted;
3. the job open across the reload (it was open then by construction: the test lets it end
   only after the reload) completes as it would have: one job document, kind `job`, both
   minions expected and succeeded, no orphan;
4. an invalid file (an unknown key) and SIGHUP: an ERROR with the file's path and the key,
   salttap_config_reloads_total{result="error"} 1, and the running config stays (test.version
   still skipped, test.ping still indexed); then SIGTERM, exit 0.

Nothing is timed: every step waits on a condition (a log line, a document, a metric).
Salt version: the newest of SALTTAP_SALT_VERSIONS.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_reload_real_salt.py -v
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import saltlab
from held_job import HeldJob
from http_calls import search, wait_until
from salt_suite import NEWEST
from salttap_process import SalttapRun, wait_following

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
# Far beyond the held job's life: the test ends it, its deadline never does.
MISSING_AFTER = 3600
SEARCH_TIMEOUT = 90   # until documents are searchable (a busy 2-core box)
REDACTED = "<redacted by salttap>"

pytestmark = [pytest.mark.usefixtures("salttap_only"),
              pytest.mark.parametrize("salt_lab", [NEWEST], indirect=True, ids=lambda v: f"salt-{v}")]


def config_text(url: str, state: Path, *, reloaded: bool, spool: str = "spool") -> str:
    """The config before (reloaded=False) and after the rewrite."""
    text = (
        f"correlator: {{missing_after_seconds: {MISSING_AFTER}}}\n"
        # The live bus alone: the lab's job cache holds the earlier tests' jobs.
        "reconcile: {enabled: false}\n"
        "indexer:\n"
        f"  hosts: [\"{url}\"]\n"
        f"  spool: {{dir: {state / spool}}}\n"
        # One request at a time: documents reach the engine in the order they were built.
        "  bulk: {max_docs: 200, max_wait_ms: 200, in_flight: 1, backoff_initial_ms: 200, backoff_max_ms: 2000}\n")
    if reloaded:
        text += (
            "  functions_blacklist: [saltutil.find_job, saltutil.running, test.version]\n"
            "audit:\n"
            "  rules: [{name: reload-rule, level: critical, reason: added by a reload, funs: [test.arg]}]\n"
            "redaction:\n"
            "  key_patterns: [\"passw(or)?d\", secret, token, flavour]\n")
    return text


def wait_metric_is(run: SalttapRun, name: str, value: float, what: str) -> None:
    run.wait_until(lambda: run.metric(name) == value, 30, f"{name} == {value} on /metrics ({what})")


def job_doc(url: str, jid: str, status: str = "succeeded", diag=lambda: "") -> dict:
    """The job document of `jid` once it has `status`."""
    def settled():
        docs = search(url, "salt-jobs-*", {"term": {"jid": jid}})
        return docs if docs and docs[0].get("status") == status else None
    docs = wait_until(settled, SEARCH_TIMEOUT, f"job {jid} {status} in salt-jobs-*",
                      lambda: f"{search(url, 'salt-jobs-*', {'term': {'jid': jid}})}\n{diag()}")
    assert len(docs) == 1, docs
    return docs[0]


def filtered_out(lab, url: str, run: SalttapRun, skipped_before: float) -> None:
    """A test.version job gets no document while a test.ping after it does."""
    version = lab.salt_jid(["*", "test.version"], t=30)
    ping = lab.salt_jid(["*", "test.ping"], t=30)
    run.wait_until(lambda: (run.metric('salttap_indexer_documents_skipped_total{reason="function_filter"}') or 0)
                   > skipped_before, 30, "test.version counted as skipped by the function filter")
    job_doc(url, ping, diag=run.diagnostics)
    # Documents are shipped in the order they were built (in_flight: 1): the ping's job is
    # searchable, so a document of the test.version job before it would be too.
    assert search(url, "salt-jobs-*", {"term": {"jid": version}}) == []
    assert search(url, "salt-returns-*", {"term": {"jid": version}}) == []


def test_sighup_applies_the_new_rules_and_keeps_the_open_job_and_a_bad_file_changes_nothing(
        lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    state = tmp_path / "state"
    run = SalttapRun.beside(lab, salttap_bin, tmp_path / "salttap.yaml", "salttap-run-reload",
                            config_text=config_text(url, state, reloaded=False))
    request.node._watchers = run.taps  # conftest attaches their diagnostics to a failure report
    held = HeldJob(tmp_path)
    try:
        tap = run.start()
        wait_following(lab, url)

        # Before: test.version is indexed; test.arg is not risky and its argument is in clear.
        version = lab.salt_jid(["*", "test.version"], t=30)
        assert job_doc(url, version, diag=run.diagnostics)["fun"] == "test.version"
        before = job_doc(url, lab.salt_jid(["*", "test.arg", "flavour=vanilla"], t=30), diag=run.diagnostics)
        assert before["risk"]["level"] != "critical", before
        assert "vanilla" in before["args_text"], before

        jid = lab.salt_async(held.args())
        running = job_doc(url, jid, status="running", diag=run.diagnostics)
        assert running["kind"] == "job" and running["fun"] == "cmd.run", running

        # The new config, and SIGHUP.
        skipped = run.metric('salttap_indexer_documents_skipped_total{reason="function_filter"}') or 0
        run.config.write_text(config_text(url, state, reloaded=True, spool="other-spool"))
        since = run.sighup()
        kept = tap.wait_stderr(r"reload: (\d+) open jobs kept", timeout=30, since=since)
        tap.wait_stderr(r"reload: changed in .*salttap\.yaml but needs a restart \(the running value is kept\): "
                        r"indexer\.spool$", timeout=30, since=since)
        tap.wait_stderr(rf"reload: reloaded {re.escape(str(run.config))}", timeout=30, since=since)
        # The held job was open when the reload came, and salttap says it kept it.
        assert int(kept.group(1)) >= 1, tap.diagnostics()
        assert not (state / "other-spool").exists(), "the spool stays where it was"
        wait_metric_is(run, 'salttap_config_reloads_total{result="ok"}', 1, "the reload")
        assert run.metric('salttap_config_reloads_total{result="error"}') == 0
        assert (run.metric("salttap_config_last_reload_timestamp_seconds") or 0) > 0

        # The new rules apply to what comes next.
        filtered_out(lab, url, run, skipped)
        after = job_doc(url, lab.salt_jid(["*", "test.arg", "flavour=vanilla"], t=30), diag=run.diagnostics)
        assert after["risk"]["level"] == "critical", after
        assert any(r.startswith("reload-rule") for r in after["risk"]["reasons"]), after
        assert "vanilla" not in after["args_text"] and REDACTED in after["args_text"], after

        # The job open across the reload, let go now, completes as it would have.
        held.release()
        job = job_doc(url, jid, diag=run.diagnostics)
        assert job["kind"] == "job" and job["fun"] == "cmd.run", job
        assert job["user"] == running["user"] and job["tgt"] == "*", job
        assert sorted(job["minions"]["expected"]) == MINIONS, job
        assert sorted(job["minions"]["succeeded"]) == MINIONS, job
        assert job["counts"]["missing"] == 0 and job["counts"]["failed"] == 0, job
        rets = wait_until(lambda: (lambda d: d if len(d) >= len(MINIONS) else None)(
            search(url, "salt-returns-*", {"term": {"jid": jid}})), SEARCH_TIMEOUT, f"both returns of {jid}")
        assert sorted(r["minion"] for r in rets) == MINIONS and all(r["status"] == "succeeded" for r in rets), rets
        assert not search(url, "salt-jobs-*", {"bool": {"filter": [{"term": {"jid": jid}},
                                                                   {"term": {"kind": "orphan"}}]}})

        # An invalid file: the error is logged with the path and counted; the running config stays.
        run.config.write_text(config_text(url, state, reloaded=True) + "colour: blue\n")
        since = run.sighup()
        tap.wait_stderr(rf"ERROR.*reload: not applied, the running config stays: {re.escape(str(run.config))}: "
                        r".*colour", timeout=30, since=since)
        wait_metric_is(run, 'salttap_config_reloads_total{result="error"}', 1, "the refused reload")
        assert run.metric('salttap_config_reloads_total{result="ok"}') == 1
        skipped = run.metric('salttap_indexer_documents_skipped_total{reason="function_filter"}') or 0
        filtered_out(lab, url, run, skipped)

        assert run.sigterm() == 0, run.diagnostics()
    finally:
        held.release()  # no minion keeps the job waiting after a failure
        run.stop()
