"""One minion of two masters (hot multi-master), a salttap per master in one fleet, against
the newest Salt of SALTTAP_SALT_VERSIONS and a real OpenSearch 2.19 (docs/masters.md).

One lab for the module: masters m1 and m2 (SaltLab, the same master key, as Salt's
multi-master setup asks), and minion-mm with `master: [127.0.0.1:<m1>, 127.0.0.1:<m2>]`,
its key accepted on both. A `salttap run` beside each master (`master_id` m1 / m2,
`fleet_id: f1`), both posting alerts to one webhook receiver, their engine reached
through a TCP relay the test can stop.

- `test.ping` published on m1: m2's salttap indexes the return as an orphan job; the
  merged view (`salttap jobs show`, its printed table) is one job, minion-mm succeeded,
  seen by m1 and m2, published by m1; `salttap jobs` lists it once.
- `cmd.run 'exit 3'` published on m1 fails on minion-mm: m1 alerts the failed job and m2
  alerts the failed orphan job (every master gets the return from Salt 3005 on). With
  `alerts.dedupe: engine` exactly one webhook delivery, m1's (the orphan's alert waits),
  and m2 counts a duplicate; with the relay stopped (the engine away) both deliver
  (fail-open); with `dedupe: none` both deliver: what salttap did before dedupe.

Run:  SALTTAP_BIN=$PWD/build/dev/salttap .cache/venv/tools/bin/python -m pytest \
          tests/integration/test_multimaster_real_salt.py -v
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

import saltlab
from http_calls import free_port, hits, wait_until
from salt_suite import INSTALL_ERRORS, NEWEST
from salttap_process import SalttapRun, indexer_yaml, metric
from test_jobs_real_salt import HookReceiver

SETTLE_TIMEOUT = 120  # a hang guard on a busy 2-core machine, not a measure
FLEET = "f1"

pytestmark = pytest.mark.usefixtures("salttap_only")


class Relay:
    """A TCP relay on 127.0.0.1 to the engine: stop() closes the port and every connection
    (the engine is away for whoever used it), start() opens the same port again."""

    def __init__(self, upstream_port: int):
        self.upstream = upstream_port
        self.port = free_port()
        self.server: socket.socket | None = None
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Relay":
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(64)
        self.server = s
        threading.Thread(target=self._accept, args=(s,), daemon=True, name="relay").start()
        return self

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream), timeout=10)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns += [client, up]
            for a, b in ((client, up), (up, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True, name="relay-pipe").start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self) -> None:
        if self.server:
            self.server.close()
            self.server = None
        with self.lock:
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
            self.conns = []


@pytest.fixture(scope="module")
def mm_lab(request):
    """m2 (no minion of its own), then m1 with minion-mm of both, m2's master key on m1."""
    if NEWEST in INSTALL_ERRORS:
        pytest.fail(INSTALL_ERRORS[NEWEST], pytrace=False)
    m2 = saltlab.SaltLab(NEWEST, minions=(), master_extra={"id": "m2"})
    m1 = saltlab.SaltLab(NEWEST, minions=("minion-mm",), master_extra={"id": "m1"})
    # Both masters in the minion's config; its publish port left to each master's
    # answer (a publish_port other than Salt's default would be used for both).
    opts = m1.minion_opts["minion-mm"]
    opts["master"] = [f"127.0.0.1:{m1.ports['ret_port']}", f"127.0.0.1:{m2.ports['ret_port']}"]
    opts["publish_port"] = 4506
    (m1.minion_conf_dir("minion-mm") / "minion").write_text(saltlab._yaml(opts))
    failed_before = request.session.testsfailed
    try:
        m2.start()
        # One master key for both, as Salt's multi-master setup asks: the minion keeps one
        # minion_master.pub.
        (m1.master_root / "pki").mkdir(parents=True, exist_ok=True)
        for name in ("master.pem", "master.pub"):
            shutil.copy2(m2.master_root / "pki" / name, m1.master_root / "pki" / name)
        m1.start()
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while True:  # until m2 reaches minion-mm too (its key accepted there, its publish connection up)
            r = m2.salt(["minion-mm", "test.ping", "--out=json", "--static", "-t", "10"], check=False)
            try:
                if json.loads(r.stdout or "{}").get("minion-mm") is True:
                    break
            except ValueError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"m2 does not reach minion-mm: {r.stdout!r} {r.stderr[-500:]!r}\n"
                            + m1.logs() + m2.logs(), pytrace=False)
        yield m1, m2
    finally:
        m1.stop()
        m2.stop()
        if request.session.testsfailed == failed_before and not os.environ.get("SALTTAP_KEEP_LAB"):
            m1.cleanup()
            m2.cleanup()


def run_config(engine_url: str, state, hook_url: str, master: str, dedupe: str) -> str:
    return (f"master_id: {master}\n"
            f"fleet_id: {FLEET}\n"
            # An orphan job settles 3 s after its last return; its alert waits 2 s more with dedupe.
            "correlator: {missing_after_seconds: 30, orphan_settle_seconds: 3}\n"
            f"alerts: {{dedupe: {dedupe}, dedupe_orphan_delay_seconds: 2,"
            f" webhook: {{url: \"{hook_url}\", backoff_initial_ms: 200}}}}\n"
            "checkpoint: {interval_seconds: 1}\n"
            + indexer_yaml(engine_url, state / "spool", max_docs=500))


def salttap_cli(salttap_bin, config, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(salttap_bin), *args, "--config", str(config)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env=dict(os.environ, NO_COLOR="1"))


def test_one_job_across_two_masters_and_its_alert_delivered_once(mm_lab, salttap_bin, opensearch, tmp_path,
                                                                 request):
    m1, m2 = mm_lab
    request.node._saltlab = m1
    url = opensearch.url
    relay = Relay(int(url.rsplit(":", 1)[1])).start()
    hook = HookReceiver(fail_first=0)
    history = tmp_path / "history.yaml"
    history.write_text(indexer_yaml(url, tmp_path / "history-spool"))
    runs: list[SalttapRun] = []

    def start(dedupe: str) -> list[SalttapRun]:
        started = []
        for lab, master in ((m1, "m1"), (m2, "m2")):
            state = tmp_path / f"{master}-{dedupe}"
            r = SalttapRun.beside(lab, salttap_bin, state / "salttap.yaml", f"salttap-{master}-{dedupe}",
                                  config_text=run_config(relay.url, state, hook.url, master, dedupe))
            runs.append(r)
            r.start()
            started.append(r)
        request.node._watchers = [t for r in runs for t in r.taps]
        return started

    def failing_job() -> str:
        return m1.salt_jid(["minion-mm", "cmd.run", "exit 3"], t=30)

    try:
        pair = start("engine")

        # ---- the merged view: a ping from m1, an orphan on m2
        ping = m1.salt_jid(["minion-mm", "test.ping"], t=30)

        def both_indexed():
            jobs = {h["_source"]["master"]: h["_source"] for h in hits(url, "salt-jobs-*", {"term": {"jid": ping}})}
            done = set(jobs) == {"m1", "m2"} and all(j["status"] != "running" for j in jobs.values())
            return jobs if done else None
        jobs = wait_until(both_indexed, SETTLE_TIMEOUT, f"{ping} indexed by both salttaps",
                          lambda: "\n".join(r.diagnostics() for r in pair))
        assert jobs["m1"]["kind"] == "job" and jobs["m2"]["kind"] == "orphan", jobs
        assert jobs["m1"]["fleet"] == jobs["m2"]["fleet"] == FLEET
        wait_until(lambda: len(hits(url, "salt-returns-*", {"term": {"jid": ping}})) == 2, SETTLE_TIMEOUT,
                   f"both returns of {ping}")
        shown = salttap_cli(salttap_bin, history, "jobs", "show", ping)
        print(shown.stdout)
        assert shown.returncode == 0, shown.stderr
        assert "same jid" not in shown.stdout + shown.stderr, shown.stdout + shown.stderr
        lines = shown.stdout.splitlines()
        assert "seen by   m1, m2" in lines, shown.stdout
        assert "publisher m1" in lines, shown.stdout
        assert "user      root" in lines, shown.stdout
        assert "minions   1/1 ok, 0 failed, 0 missing" in lines, shown.stdout
        rows = [line.split() for line in lines if line.startswith("minion-mm")]
        assert rows == [["minion-mm", "succeeded", "0", "m1,", "m2", "true"]], shown.stdout
        listed = [json.loads(line) for line in salttap_cli(salttap_bin, history, "jobs", "--fun", "test.ping",
                                                           "--format", "json").stdout.splitlines()]
        assert [(j["jid"], j["seen_by"], j["publisher"]) for j in listed if j["jid"] == ping] == \
            [(ping, ["m1", "m2"], "m1")], listed

        # ---- dedupe: engine: one delivery, m1's; m2 counts a duplicate
        failed = failing_job()
        pair[1].tap.wait_stderr(rf"alert failed job {failed}: another salttap of fleet {FLEET} delivered it",
                                timeout=SETTLE_TIMEOUT)
        posts = hook.for_jid(failed)
        assert [(p["json"]["master"], p["json"]["kind"]) for p in posts] == [("m1", "job")], posts
        # /metrics is refreshed between batches: waited for, then exact.
        pair[0].wait_metric('salttap_alerting_dedupe_total{result="claimed"}', 1, timeout=60)
        text = pair[1].wait_metric('salttap_alerting_dedupe_total{result="duplicate"}', 1, timeout=60)
        assert metric(text, 'salttap_alerting_dedupe_total{result="duplicate"}') == 1, text
        claim = wait_until(lambda: hits(url, "salt-alerts-*", {"term": {"salttap.doc": "alert_claims"}}),
                           30, "the claim document")
        assert f"{FLEET}/job/{failed}" in [h["_id"] for h in claim], claim

        # ---- the engine away: both deliver (fail-open)
        relay.stop()
        failed_away = failing_job()
        hook.wait(lambda: len(hook.for_jid(failed_away)) == 2, SETTLE_TIMEOUT,
                  f"both alerts of {failed_away} with the engine away")
        assert sorted(p["json"]["master"] for p in hook.for_jid(failed_away)) == ["m1", "m2"]
        for r in pair:
            r.wait_metric('salttap_alerting_dedupe_total{result="failed_open"}', 1, timeout=60)
        relay.start()
        for r in pair:
            assert r.sigterm() == 0

        # ---- dedupe: none (the default): every salttap delivers, the orphan's too
        pair = start("none")
        failed_none = failing_job()
        hook.wait(lambda: len(hook.for_jid(failed_none)) == 2, SETTLE_TIMEOUT,
                  f"both alerts of {failed_none} without dedupe")
        got = sorted((p["json"]["master"], p["json"]["kind"]) for p in hook.for_jid(failed_none))
        assert got == [("m1", "job"), ("m2", "orphan")], got
        for r in pair:
            assert r.sigterm() == 0
    finally:
        for r in runs:
            r.stop()
        relay.stop()
        hook.close()
