"""A small memory budget under a burst of real `--async` jobs: every job indexed with its true
verdict, late returns still land.

A lab of the newest Salt of its own (tests/harness/burst.py: a ghost minion that never answers,
a master and minions that do not lose returns to the load). `salttap run` with
`correlator.memory_budget_mb: 0.15` (157 KB: about 1,600 settled jobs of two minions at the
memory model's 97 bytes, far fewer than the burst) and a real OpenSearch node:

1. 2,000 jobs fired asynchronously with Salt's LocalClient from one process, in batches of
   100: pings of minion-a and minion-b by turns, every 100th a `test.retcode 3` (failed),
   every 100th (offset 50) a `test.echo` on minion-a and the ghost (missing at its 5 s
   deadline). One minion a job: the burst costs the lab half the returns.
   A batch goes out once the jobs still open are at most 20 (opened minus settled on
   /metrics): the open jobs, ~1 KB each, never fill the budget by themselves, so the budget
   takes settled jobs only, the oldest first, and no verdict is forced;
2. two jobs held open on both minions (held_job.py; cmd.run, a 3 s deadline) are fired last:
   their job documents say `missing`; then they are let go and their returns come late;
3. the engine agrees with the master's job cache, job by job (burst.Agreement: each of the
   2,002 jobs once with the cache's verdict, one return per minion with its status), the
   held jobs' documents list both minions late; /metrics: settled jobs left for the budget
   (salttap_correlator_budget_evicted_jobs_total{state="settled"} > 0), no open one did,
   the late returns counted, none for a job no longer known, the tracked jobs' bytes within
   the budget.

Every wait is on an outcome (metrics, documents, the cache), with hang guards.
Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_memory_budget_real_salt.py -v
"""

from __future__ import annotations

import json
import subprocess
import threading

import pytest

import saltlab
from burst import FIRE_ONE, Agreement, burst_lab, verdict
from held_job import HeldJob
from http_calls import search, wait_until
from salttap_process import SalttapRun, indexer_yaml, metric

# 2,000 real jobs take minutes on a loaded 2-core machine: a hang guard, not a measure
pytestmark = [pytest.mark.usefixtures("salttap_only"), pytest.mark.timeout(900)]

JOBS = 2000
BATCH = 100
OPEN_BEFORE_BATCH = 20  # a batch goes out once at most this many jobs are open
BUDGET_MB = 0.15
HELD_DEADLINE = 3       # cmd.run: the held jobs are missing at it
ECHO_DEADLINE = 5       # test.echo: the ghost's jobs are missing at it
MISSING_AFTER = 120     # every other job's deadline: they settle on their returns
GUARD = 180             # a hang guard on a busy 2-core machine, not a measure

# Runs in the Salt venv: argv[1] master config. Reads one JSON plan (a list of jobs,
# {tgt, fun, arg, tgt_type}) a line from stdin, fires it, prints "JID <i> <jid>" per job
# (i counted over all batches) and "BATCH <n>" after each.
_FIRE = r"""
import json, sys, time
import salt.client
""" + FIRE_ONE + r"""
client = salt.client.LocalClient(c_path=sys.argv[1])
i = 0
print("READY", flush=True)
for n, line in enumerate(sys.stdin):
    for job in json.loads(line):
        print(f"JID {i} {fire_one(client, job, i, 0.2)}", flush=True)
        i += 1
    print(f"BATCH {n}", flush=True)
"""


class Firer:
    """One LocalClient process; fire(plan) publishes a batch and returns its jids."""

    def __init__(self, lab: saltlab.SaltLab):
        self.log = open(lab.log_dir / "budget-fire.log", "a")
        self.proc = subprocess.Popen([str(lab.bin / "python"), "-c", _FIRE, str(lab.master_conf_dir / "master")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=lab.env, start_new_session=True, text=True)
        saltlab._register(self.proc.pid, "budget-fire")
        self.lines: list[str] = []
        self._expect("READY")

    def _expect(self, word: str) -> list[str]:
        got = []
        result: list = []

        def read():
            for line in self.proc.stdout:
                line = line.strip()
                self.lines.append(line)
                self.log.write(line + "\n")
                if line.startswith("JID "):
                    got.append(line.split()[2])
                if line.startswith(word) or line.startswith("FAILED"):
                    result.append(line)
                    return
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(GUARD)
        assert result and result[0].startswith(word), f"the LocalClient said {self.lines[-5:]}, not {word}"
        return got

    def fire(self, plan: list[dict]) -> list[str]:
        self.proc.stdin.write(json.dumps(plan) + "\n")
        self.proc.stdin.flush()
        jids = self._expect("BATCH")
        assert len(jids) == len(plan), (len(jids), len(plan), self.lines[-5:])
        return jids

    def stop(self) -> None:
        saltlab.stop_process_group(self.proc, term_timeout=5)
        self.log.close()


def job(i: int) -> dict:
    """The i-th job of the burst: a ping of one minion (each by turns), every 100th a job that
    fails (retcode 3), every 100th (offset 50) a job on minion-a and the ghost."""
    if i % 100 == 0:
        return {"tgt": "minion-b", "fun": "test.retcode", "arg": [3]}
    if i % 100 == 50:
        return {"tgt": ["minion-a", "ghost"], "tgt_type": "list", "fun": "test.echo", "arg": [f"budget-{i}"]}
    return {"tgt": f"minion-{'ab'[i % 2]}", "fun": "test.ping"}


@pytest.fixture(scope="module")
def budget_lab(request):
    yield from burst_lab(request)


def test_a_small_budget_keeps_every_verdict_and_late_returns(budget_lab, salttap_bin, opensearch, tmp_path,
                                                            request):
    lab = budget_lab
    request.node._saltlab = lab  # conftest adds its daemon logs to a failure report
    url = opensearch.url
    run = SalttapRun.beside(
        lab, salttap_bin, tmp_path / "salttap.yaml", "salttap-run-budget", config_text=(
            "correlator:\n"
            f"  deadlines: [{{fun: cmd.run, seconds: {HELD_DEADLINE}}}, {{fun: test.echo, seconds: {ECHO_DEADLINE}}},"
            f" {{fun: '*', seconds: {MISSING_AFTER}}}]\n"
            f"  memory_budget_mb: {BUDGET_MB}\n"
            "reconcile: {enabled: false}\n"
            + indexer_yaml(url, tmp_path / "spool", max_docs=1000)))
    request.node._watchers = run.taps
    held = [HeldJob(tmp_path), HeldJob(tmp_path)]
    firer = None
    try:
        run.start()
        firer = Firer(lab)
        counts = {}

        def open_jobs() -> float:
            text = run.metrics_text()
            if not text:
                return float("inf")
            opened = _sample(text, "salttap_correlator_jobs_opened_total")
            settled = _sample(text, "salttap_correlator_jobs_settled_total")
            counts.update(opened=opened, settled=settled)
            return opened - settled

        jids: list[str] = []
        for start in range(0, JOBS, BATCH):
            run.wait_until(lambda: open_jobs() <= OPEN_BEFORE_BATCH, GUARD,
                           f"at most {OPEN_BEFORE_BATCH} jobs open before job {start} ({counts})")
            jids += firer.fire([job(i) for i in range(start, start + BATCH)])
        assert len(set(jids)) == JOBS

        # The held jobs, last: missing at their deadline, then let go; their returns are late.
        run.wait_until(lambda: open_jobs() == 0, GUARD, f"every job of the burst settled ({counts})")
        held_jids = firer.fire([{"tgt": "minion-*", "fun": "cmd.run", "arg": [h.command]} for h in held])

        def held_docs(status: str, late: int):
            docs = search(url, "salt-jobs-*", {"terms": {"jid": held_jids}})
            ok = len(docs) == len(held_jids) and all(
                d["status"] == status and len(d["minions"].get("late", [])) == late for d in docs)
            return docs if ok else None
        wait_until(lambda: held_docs("missing", 0), GUARD, "the held jobs' documents: missing",
                   run.diagnostics)
        for h in held:
            h.release()
        docs = wait_until(lambda: held_docs("succeeded", 2), GUARD, "the held jobs' late returns in their documents",
                          run.diagnostics)
        for d in docs:
            assert sorted(d["minions"]["late"]) == ["minion-a", "minion-b"], d
            assert d.get("late_updates", 0) >= 1, d

        # Every job as the master's job cache tells it.
        truth = Agreement().wait(url, lab, jids + held_jids, GUARD, "the engine agreeing with the job cache",
                                 run.diagnostics)
        statuses = sorted({verdict(j)[0] for j in truth.values()})
        assert statuses == ["failed", "missing", "succeeded"], statuses  # each verdict occurs

        text = run.metrics_text()
        # 2,002 settled jobs of about 100 bytes do not fit 157 KB: the oldest left for the budget.
        assert _sample(text, 'salttap_correlator_budget_evicted_jobs_total{state="settled"}') > 0, text
        assert _sample(text, 'salttap_correlator_budget_evicted_jobs_total{state="open"}') == 0
        assert _sample(text, "salttap_correlator_late_returns_total") >= 2 * len(held)
        assert _sample(text, "salttap_correlator_late_unknown_returns_total") == 0
        assert _sample(text, "salttap_correlator_jobs_bytes") <= BUDGET_MB * 2**20
        assert _sample(text, "salttap_correlator_jobs_opened_total") == JOBS + len(held)
        alerts = search(url, "salt-alerts-*", {"term": {"alert": "evicted"}})
        assert alerts == [], alerts
        assert run.sigterm() == 0
    finally:
        for h in held:
            h.release()
        if firer:
            firer.stop()
        run.stop()


def _sample(text: str, sample: str) -> float:
    value = metric(text, sample)
    assert value is not None, f"{sample} absent from /metrics"
    return value
