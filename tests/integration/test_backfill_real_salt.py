"""`salttap backfill` against real Salt masters and a real OpenSearch 2.19.

Per Salt series (the newest 3006.x, 3007.x and 3008.x of SALTTAP_SALT_VERSIONS):

1. `salttap run` is up while one ping runs: that job's documents are live.
2. salttap stops; jobs run meanwhile: a succeeding ping, a failing state run,
   a `cmd.run` exiting 3, a ping with minion-b stopped.
3. `salttap backfill --since <the test's start>` reads the master's job cache
   into the engine: each job once, with its real verdict and its returns
   (minion-b `missing`); the live job's documents stay as the live stream
   wrote them (versions and sources unchanged).
4. A second backfill writes nothing (every document answered 409: already
   there) and changes no document.
5. The same master with `job_cache: False`: one WARN, nothing read, exit 3.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_backfill_real_salt.py -v
"""

from __future__ import annotations

import re
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import saltlab
from http_calls import hits
from indexed import snapshot
from salt_suite import SERIES
from saltlab import jid_micros
from salttap_process import SalttapRun, indexer_yaml

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
MISSING_AFTER = 6       # correlator.missing_after_seconds: every job's deadline
SEARCH_TIMEOUT = 90     # until live documents are searchable (a busy 2-core box)
BACKFILL_TIMEOUT = 180  # a hang guard for one backfill run, not a measure

pytestmark = [pytest.mark.parametrize("salt_lab", SERIES, indirect=True, ids=lambda v: f"salt-{v}"),
              pytest.mark.usefixtures("salttap_only")]


def jid_hits(url: str, index: str, jids: list[str]) -> list[dict]:
    """Every document of `index` for these jids, with _id, _version and _source."""
    return hits(url, index, {"terms": {"jid": jids}}, size=1000, version=True)


def run_backfill(salttap_bin: Path, config: Path, lab: saltlab.SaltLab, since: str,
                 master_config: Path | None = None) -> subprocess.CompletedProcess:
    argv = [str(salttap_bin), "backfill", "--config", str(config),
            "--master-config", str(master_config or lab.master_conf_dir / "master"),
            "--since", since, "--ship-timeout", "120"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=BACKFILL_TIMEOUT,
                          stdin=subprocess.DEVNULL)


def acknowledged(stderr: str) -> tuple[int, int]:
    """(written, already there) from the summary line."""
    m = re.search(r"the engine acknowledged \d+ documents: (\d+) written, (\d+) already there", stderr)
    assert m, stderr
    return int(m.group(1)), int(m.group(2))


def test_backfill_indexes_what_ran_while_salttap_was_down(lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    since = (datetime.now(timezone.utc) - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S")
    config = tmp_path / "salttap.yaml"
    config.write_text(
        f"correlator: {{missing_after_seconds: {MISSING_AFTER}}}\n"
        + indexer_yaml(url, tmp_path / "spool", states_index=True))
    restart_b = False
    try:
        # ---- 1. one job while salttap runs: its documents are the live ones
        run = SalttapRun.beside(lab, salttap_bin, config, "salttap-run-live", drain_seconds=5)
        request.node._watchers = run.taps
        try:
            run.start()
            live = lab.salt_jid(["*", "test.ping"], t=10)

            def live_settled():
                docs = jid_hits(url, "salt-jobs-*", [live])
                rets = jid_hits(url, "salt-returns-*", [live])
                return docs if docs and docs[0]["_source"]["status"] == "succeeded" and len(rets) == 2 else None
            run.wait_until(live_settled, SEARCH_TIMEOUT, f"the live job {live} settled in the engine")
            assert run.sigterm() == 0, run.diagnostics()
        finally:
            run.stop()
        live_docs = snapshot(url, [live])
        assert len(live_docs) == 3, live_docs  # the job and two returns
        live_job = next(src for (index, _), (_, src) in live_docs.items() if "-jobs-" in index)
        assert live_job["update"] == "settled", live_job

        # ---- 2. salttap is down: jobs run and the master keeps them in its job cache
        ping = lab.salt_jid(["*", "test.ping"], t=10)
        failed_state = lab.salt_jid(["*", "state.apply", "fail"], t=30)
        failed_cmd = lab.salt_jid(["*", "cmd.run", "echo out; exit 3"], t=30)
        lab.stop_minion("minion-b")
        restart_b = True
        missing = lab.salt_jid(["*", "test.ping"], t=3)
        jobs = [ping, failed_state, failed_cmd, missing]
        # Backfill calls minion-b missing once the missing job's deadline, from its jid, has passed.
        deadline = jid_micros(missing) / 1e6 + MISSING_AFTER + 1
        while time.time() < deadline:
            time.sleep(0.2)

        # ---- 3. backfill
        r = run_backfill(salttap_bin, config, lab, since)
        assert r.returncode == 0, f"backfill exited {r.returncode}\n{r.stderr}"
        assert re.search(r"noise", r.stderr), r.stderr  # the CLI's saltutil.find_job jobs
        written, _ = acknowledged(r.stderr)
        assert written > 0, r.stderr

        docs = {h["_source"]["jid"]: h for h in jid_hits(url, "salt-jobs-*", jobs)}
        assert sorted(docs) == sorted(jobs), docs
        assert len(jid_hits(url, "salt-jobs-*", jobs)) == len(jobs)  # one document a job
        want = {ping: "succeeded", failed_state: "failed", failed_cmd: "failed", missing: "missing"}
        for jid, status in want.items():
            src = docs[jid]["_source"]
            assert src["status"] == status, (jid, src)
            assert src["update"] == "final", src
            assert docs[jid]["_version"] == jid_micros(jid) * 4 + 3, docs[jid]
            assert sorted(src["minions"]["expected"]) == MINIONS, src
        assert docs[failed_state]["_source"]["states"]["failed"] == 4, docs[failed_state]
        assert {f["reason"] for f in docs[failed_cmd]["_source"]["failures"]} == {"retcode 3"}, docs[failed_cmd]
        assert docs[missing]["_source"]["minions"]["missing"] == ["minion-b"], docs[missing]

        rets = jid_hits(url, "salt-returns-*", jobs)
        by = {(h["_source"]["jid"], h["_source"]["minion"]): h for h in rets}
        assert len(rets) == len(by) == 2 * len(jobs), sorted(by)
        for jid, status in want.items():
            for m in MINIONS:
                h = by[(jid, m)]
                expect = "missing" if (jid, m) == (missing, "minion-b") else \
                    "failed" if jid in (failed_state, failed_cmd) else "succeeded"
                assert h["_source"]["status"] == expect, (jid, m, h)
                assert h["_version"] == (1 if expect == "missing" else 2), h
        assert by[(failed_cmd, "minion-a")]["_source"]["retcode"] == 3
        states = jid_hits(url, "salt-states-*", [failed_state])
        assert len(states) == 4 and all(s["_source"]["outcome"] == "failed" for s in states), states

        # the live job: still exactly as the live stream wrote it
        assert snapshot(url, [live]) == live_docs

        # ---- 4. again: nothing written, nothing changed
        before = snapshot(url, jobs + [live])
        r2 = run_backfill(salttap_bin, config, lab, since)
        assert r2.returncode == 0, f"second backfill exited {r2.returncode}\n{r2.stderr}"
        written2, already2 = acknowledged(r2.stderr)
        assert written2 == 0 and already2 > 0, r2.stderr
        assert snapshot(url, jobs + [live]) == before

        # ---- 5. a master that keeps no job cache: nothing to read
        no_cache = tmp_path / "master-no-job-cache"
        no_cache.write_text((lab.master_conf_dir / "master").read_text() + "\njob_cache: False\n")
        r3 = run_backfill(salttap_bin, config, lab, since, master_config=no_cache)
        assert r3.returncode == 3, r3.stderr
        assert "WARN backfill: nothing to read" in r3.stderr and "job_cache: False" in r3.stderr, r3.stderr
    finally:
        if restart_b:
            if not lab.minions["minion-b"].running():
                lab.start_minion("minion-b", wait=False)
            lab.wait_minions(["minion-b"])  # later tests need two minions
