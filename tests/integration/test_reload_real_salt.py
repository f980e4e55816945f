"""Reloading the config of a running `salttap run` (SIGHUP), against real Salt and a real OpenSearch 2.19.

salttap runs with a config; `salt --async '*' test.sleep N` is open in it (its job document,
status `running`, is in the engine). Before the reload a `test.version` job is indexed and a
`test.arg flavour=vanilla` job is indexed with its argument in clear and no risk. The config
is rewritten (test.version added to functions_blacklist, an audit rule making test.arg
critical, `flavour` a redacted key, and the spool directory changed, which needs a restart)
and salttap gets SIGHUP:

1. the log says the file was reloaded with the open job kept, and names indexer.spool as
   needing a restart; /metrics counts the reload (result ok) and its time;
2. the new rules apply: a `test.version` job gets no document (counted as skipped by the
   function filter) while a `test.ping` run after it does; a `test.arg flavour=vanilla` job
   is `critical` by the new rule and its argument is redacted;
3. the job open across the reload completes as it would have: one job document, kind `job`,
   both minions expected and succeeded, no orphan;
4. an invalid file (an unknown key) and SIGHUP: an ERROR with the file's path and the key,
   salttap_config_reloads_total{result="error"} 1, and the running config stays (test.version
   still skipped, test.ping still indexed); then SIGTERM, exit 0.

Nothing is timed: every step waits on a condition (a log line, a document, a metric).
Salt version: the newest of SALTTAP_SALT_VERSIONS.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_reload_real_salt.py -v
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

import saltlab
from conftest import NEWEST
from test_checkpoint_real_salt import salt_async, synced
from test_index_real_salt import call, metric, salt_jid, search, wait_until, _healthz, _no_events

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
# Long enough for the job to be open when the reload comes (the log line says how many
# jobs were open; the test checks it was this one) on a busy 2-core box.
SLEEP_SECONDS = 40
SEARCH_TIMEOUT = 90   # until documents are searchable (a busy 2-core box)
STOP_TIMEOUT = 60     # a hang guard after SIGTERM, not a measure
START_TIMEOUT = 60
REDACTED = "<redacted by salttap>"

pytestmark = [pytest.mark.usefixtures("salttap_only"),
              pytest.mark.parametrize("salt_lab", [NEWEST], indirect=True, ids=lambda v: f"salt-{v}")]


def config_text(url: str, state: Path, *, reloaded: bool, spool: str = "spool") -> str:
    """The config before (reloaded=False) and after the rewrite."""
    text = (
        "correlator: {missing_after_seconds: 300}\n"
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


class Run:
    """`salttap run` on the lab with its config in tmp_path; stopped (by PID) at the end."""

    def __init__(self, lab, salttap_bin: Path, tmp_path: Path, request):
        self.lab, self.bin, self.request = lab, salttap_bin, request
        self.config = tmp_path / "salttap.yaml"
        self.tap = None
        self.metrics = ""

    def start(self) -> saltlab.EventWatcher:
        port, = saltlab.free_ports(1)
        self.metrics = f"http://127.0.0.1:{port}"
        argv = [str(self.bin), "run", "--config", str(self.config),
                "--master-config", str(self.lab.master_conf_dir / "master"),
                "--metrics-listen", f"127.0.0.1:{port}", "--drain-seconds", "2"]
        self.tap = saltlab.EventWatcher(argv, name="salttap-run-reload", log_dir=self.lab.log_dir,
                                        parse=_no_events)
        self.request.node._watchers = [self.tap]  # conftest attaches its diagnostics to a failure report
        wait_until(lambda: self.tap.proc.poll() is None and _healthz(self.metrics), START_TIMEOUT,
                   "salttap /healthz (tap connected, index setup done)", self.tap.diagnostics)
        return self.tap

    def metric(self, name: str) -> float | None:
        status, text = call(f"{self.metrics}/metrics")
        return metric(text, name) if status == 200 else None

    def wait_metric(self, name: str, value: float, what: str) -> None:
        wait_until(lambda: self.metric(name) == value, 30, f"{name} == {value} on /metrics ({what})",
                   lambda: f"last: {self.metric(name)}\n{self.tap.diagnostics()}")

    def sighup(self) -> int:
        """Sends SIGHUP; the index of the next stderr line (for wait_stderr's since)."""
        since = len(self.tap.stderr_lines)
        self.tap.proc.send_signal(signal.SIGHUP)
        return since

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


def job_doc(url: str, jid: str, status: str = "succeeded", diag=lambda: "") -> dict:
    """The job document of `jid` once it has `status`."""
    def settled():
        docs = search(url, "salt-jobs-*", {"term": {"jid": jid}})
        return docs if docs and docs[0].get("status") == status else None
    docs = wait_until(settled, SEARCH_TIMEOUT, f"job {jid} {status} in salt-jobs-*",
                      lambda: f"{search(url, 'salt-jobs-*', {'term': {'jid': jid}})}\n{diag()}")
    assert len(docs) == 1, docs
    return docs[0]


def filtered_out(lab, url: str, run: Run, skipped_before: float) -> None:
    """A test.version job gets no document while a test.ping after it does."""
    version = salt_jid(lab, ["*", "test.version"], t=30)
    ping = salt_jid(lab, ["*", "test.ping"], t=30)
    wait_until(lambda: (run.metric('salttap_indexer_documents_skipped_total{reason="function_filter"}') or 0)
               > skipped_before, 30, "test.version counted as skipped by the function filter", run.tap.diagnostics)
    job_doc(url, ping, diag=run.tap.diagnostics)
    # Documents are shipped in the order they were built (in_flight: 1): the ping's job is
    # searchable, so a document of the test.version job before it would be too.
    assert search(url, "salt-jobs-*", {"term": {"jid": version}}) == []
    assert search(url, "salt-returns-*", {"term": {"jid": version}}) == []


def test_sighup_applies_the_new_rules_and_keeps_the_open_job_and_a_bad_file_changes_nothing(
        lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    state = tmp_path / "state"
    run = Run(lab, salttap_bin, tmp_path, request)
    run.config.write_text(config_text(url, state, reloaded=False))
    try:
        tap = run.start()
        synced(lab, url)

        # Before: test.version is indexed; test.arg is not risky and its argument is in clear.
        version = salt_jid(lab, ["*", "test.version"], t=30)
        assert job_doc(url, version, diag=tap.diagnostics)["fun"] == "test.version"
        before = job_doc(url, salt_jid(lab, ["*", "test.arg", "flavour=vanilla"], t=30), diag=tap.diagnostics)
        assert before["risk"]["level"] != "critical", before
        assert "vanilla" in before["args_text"], before

        jid = salt_async(lab, ["*", "test.sleep", str(SLEEP_SECONDS)])
        running = job_doc(url, jid, status="running", diag=tap.diagnostics)
        assert running["kind"] == "job" and running["fun"] == "test.sleep", running

        # The new config, and SIGHUP.
        skipped = run.metric('salttap_indexer_documents_skipped_total{reason="function_filter"}') or 0
        run.config.write_text(config_text(url, state, reloaded=True, spool="other-spool"))
        since = run.sighup()
        kept = tap.wait_stderr(r"reload: (\d+) open jobs kept", timeout=30, since=since)
        tap.wait_stderr(r"reload: changed in .*salttap\.yaml but needs a restart \(the running value is kept\): "
                        r"indexer\.spool$", timeout=30, since=since)
        tap.wait_stderr(rf"reload: reloaded {re.escape(str(run.config))}", timeout=30, since=since)
        # Not a race the test may lose silently: the job was open when the reload came.
        assert int(kept.group(1)) >= 1, (
            f"no job was open at the reload: the {SLEEP_SECONDS}s test.sleep had returned already; "
            f"the machine is too slow for this test\n{tap.diagnostics()}")
        assert not (state / "other-spool").exists(), "the spool stays where it was"
        run.wait_metric('salttap_config_reloads_total{result="ok"}', 1, "the reload")
        assert run.metric('salttap_config_reloads_total{result="error"}') == 0
        assert (run.metric("salttap_config_last_reload_timestamp_seconds") or 0) > 0

        # The new rules apply to what comes next.
        filtered_out(lab, url, run, skipped)
        after = job_doc(url, salt_jid(lab, ["*", "test.arg", "flavour=vanilla"], t=30), diag=tap.diagnostics)
        assert after["risk"]["level"] == "critical", after
        assert any(r.startswith("reload-rule") for r in after["risk"]["reasons"]), after
        assert "vanilla" not in after["args_text"] and REDACTED in after["args_text"], after

        # The job open across the reload completes as it would have.
        job = job_doc(url, jid, diag=tap.diagnostics)
        assert job["kind"] == "job" and job["fun"] == "test.sleep", job
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
        run.wait_metric('salttap_config_reloads_total{result="error"}', 1, "the refused reload")
        assert run.metric('salttap_config_reloads_total{result="ok"}') == 1
        skipped = run.metric('salttap_indexer_documents_skipped_total{reason="function_filter"}') or 0
        filtered_out(lab, url, run, skipped)

        run.sigterm()
    finally:
        run.stop()
