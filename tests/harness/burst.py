"""Bursts of real Salt jobs and the truth of the master's job cache, for the
restart and multi-master tests.

- Burst: fires a list of jobs asynchronously with Salt's own LocalClient, from
  the lab's Salt virtualenv (one process for the whole burst), one job every
  `interval` seconds, and reports each jid as it is published. A publish the
  master refuses (it is restarting) is tried again until it goes through, so
  a burst outlives a master restart.
- cache_truth: what the master's job cache says of each job (its function,
  expected minions and each minion's return: succeeded or failed), read with
  Salt's own payload module; the verdict salttap must index for it.
- Engine helpers: every job and return document of a set of jids; Agreement,
  whether the engine holds every job of the cache once with its verdict.
- burst_lab: a lab of its own for a burst (a ghost minion that never answers,
  a master and minions configured not to lose returns to the load).
- salttap_run: a `salttap run` beside a lab, configured for bursts (checkpoint and
  reconcile state every second, quick batches and retries).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import saltlab
from http_calls import hits, wait_until
from salt_suite import INSTALL_ERRORS, NEWEST
from salttap_process import SalttapRun, indexer_yaml

NOISE = {"saltutil.find_job", "saltutil.running"}

# A burst on a loaded 2-core machine: the master may answer a return in seconds, not
# milliseconds. The lab's minions give up a return after 3 tries of 1-2 s (they
# start fast); these wait longer, so no return is lost to the load, and run jobs in
# threads: a process per job costs more than the jobs themselves.
BURST_MASTER = {"worker_threads": 4}
BURST_MINION = {"return_retry_timer": 10, "return_retry_timer_max": 20, "return_retry_tries": 5,
                "multiprocessing": False}

# The jobs bursts are made of (one plan entry each): the outcomes the cache and
# the engine must agree on.
def failing_state() -> dict:
    """A state run that fails on minion-a."""
    return {"tgt": ["minion-a"], "tgt_type": "list", "fun": "state.apply", "arg": ["fail"]}


def ping_with_ghost() -> dict:
    """A ping of minion-a and of the ghost, which never answers: the job settles missing."""
    return {"tgt": ["minion-a", "ghost"], "tgt_type": "list", "fun": "test.ping"}


def ping(k: int) -> dict:
    """The k-th ping: on both minions for odd k, else on minion-a or minion-b by turns."""
    if k % 2:
        return {"tgt": "minion-*", "fun": "test.ping"}
    return {"tgt": f"minion-{'ab'[k % 4 // 2]}", "fun": "test.ping"}


def mixed_plan(n: int, period: int, at: dict[int, Callable[[], dict]]) -> list[dict]:
    """n jobs in rounds of `period`: at place k of a round the job at[k] makes, ping(k) elsewhere."""
    return [at[i % period]() if i % period in at else ping(i % period) for i in range(n)]


# Python for the Salt venv (with json, sys, time imported): fire_one publishes one job of a
# plan ({tgt, fun, arg, tgt_type, jid?}) with Salt's LocalClient, trying again every `pause`
# seconds while the master refuses or is away ("RETRY <i> <why>"), and gives up after 120 s
# ("FAILED <i> <why>", exit 1).
FIRE_ONE = r"""
def fire_one(client, job, i, pause):
    deadline = time.monotonic() + 120
    while True:
        try:
            jid = client.cmd_async(job["tgt"], job["fun"], job.get("arg", []), tgt_type=job.get("tgt_type", "glob"),
                                   jid=job.get("jid", ""))
        except Exception as e:  # the master is away: try again
            jid, err = 0, repr(e)
        else:
            err = "refused"
        if jid:
            return jid
        if time.monotonic() > deadline:
            print(f"FAILED {i} {err}", flush=True)
            sys.exit(1)
        print(f"RETRY {i} {err}", flush=True)
        time.sleep(pause)
"""

# Runs in the Salt venv: argv[1] master config, argv[2] the plan (JSON list of
# {tgt, fun, arg, tgt_type, jid?}), argv[3] seconds between two publishes.
_FIRE = r"""
import json, sys, time
import salt.client
""" + FIRE_ONE + r"""
client = salt.client.LocalClient(c_path=sys.argv[1])
plan = json.loads(sys.argv[2])
interval = float(sys.argv[3])
for i, job in enumerate(plan):
    print(f"JID {i} {fire_one(client, job, i, 0.5)}", flush=True)
    time.sleep(interval)
print("DONE", flush=True)
"""

# Runs in the Salt venv: argv[1] the master's jobs directory. Prints one JSON
# object: {jid: {fun, minions, returns: {minion: {failed, retcode}}}} of every
# job published by the master (runner, wheel and minion-return jobs left out).
_TRUTH = r"""
import json, os, sys
import salt.payload

def load(path):
    with open(path, "rb") as f:
        return salt.payload.load(f)

def failed(ret):
    if not isinstance(ret, dict) or "return" not in ret:
        return False, None
    code = ret.get("retcode")
    bad = ret.get("success") is False or (isinstance(code, int) and code != 0)
    value = ret.get("return")
    if isinstance(value, dict):
        for v in value.values():
            if isinstance(v, dict) and v.get("result") is False:
                bad = True
    return bad, code

out = {}
root = sys.argv[1]
for bucket in os.listdir(root):
    for name in os.listdir(os.path.join(root, bucket)):
        d = os.path.join(root, bucket, name)
        try:
            jid = open(os.path.join(d, "jid")).read().strip()
            ld = load(os.path.join(d, ".load.p"))
        except (OSError, ValueError):
            continue
        fun = ld.get("fun")
        if not isinstance(fun, str) or fun.startswith(("runner.", "wheel.")) or "tgt" not in ld:
            continue
        minions = set()
        for f in os.listdir(d):
            if f == ".minions.p" or (f.startswith(".minions.") and f.endswith(".p")):
                got = load(os.path.join(d, f))
                minions.update(got if isinstance(got, list) else got.get("minions", []))
        rets = {}
        for m in os.listdir(d):
            p = os.path.join(d, m, "return.p")
            if os.path.isfile(p):
                bad, code = failed(load(p))
                rets[m] = {"failed": bad, "retcode": code}
        out[jid] = {"fun": fun, "minions": sorted(minions), "returns": rets, "tgt": ld.get("tgt"),
                    "tgt_type": ld.get("tgt_type")}
print(json.dumps(out))
"""


class Burst:
    """A burst of jobs fired in the background; .jids fills as they go out."""

    def __init__(self, lab: saltlab.SaltLab, plan: list[dict], interval: float, name: str = "burst"):
        self.lab, self.plan = lab, plan
        self.jids: dict[int, str] = {}
        self.retries = 0
        self.lines: list[str] = []
        self.done = False
        self._cond = threading.Condition()
        argv = [str(lab.bin / "python"), "-c", _FIRE, str(lab.master_conf_dir / "master"), json.dumps(plan),
                str(interval)]
        self._log = open(lab.log_dir / f"{name}.log", "a")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self._log, env=lab.env, start_new_session=True, text=True)
        saltlab._register(self.proc.pid, name)
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"{name}-out")
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            line = line.strip()
            self._log.write(line + "\n")
            self._log.flush()
            with self._cond:
                self.lines.append(line)
                parts = line.split()
                if parts[:1] == ["JID"]:
                    self.jids[int(parts[1])] = parts[2]
                elif parts[:1] == ["RETRY"]:
                    self.retries += 1
                elif parts[:1] == ["DONE"]:
                    self.done = True
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_fired(self, n: int, timeout: float = 180) -> None:
        """Until at least n jobs went out (or the burst ended: check .done / .jids)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.jids) < n and not self.done:
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"{len(self.jids)} of {n} jobs fired; last lines: {self.lines[-10:]}")
                self._cond.wait(min(left, 0.5))

    def wait_done(self, timeout: float = 300) -> list[str]:
        self.wait_fired(len(self.plan), timeout)
        rc = self.proc.wait(timeout=60)
        assert rc == 0 and len(self.jids) == len(self.plan), f"burst exit {rc}: {self.lines[-10:]}"
        return [self.jids[i] for i in range(len(self.plan))]

    def stop(self) -> None:
        saltlab.stop_process_group(self.proc, term_timeout=5)
        self._reader.join(timeout=5)
        self._log.close()


def cache_truth(lab: saltlab.SaltLab) -> dict[str, dict]:
    """Every published job of the lab's job cache, as the cache tells it."""
    jobs = Path(lab.master_opts["cachedir"]) / "jobs"
    r = lab.run([str(lab.bin / "python"), "-c", _TRUTH, str(jobs)], timeout=120)
    return {jid: job for jid, job in json.loads(r.stdout).items() if job["fun"] not in NOISE}


def verdict(job: dict) -> tuple[str, dict[str, str]]:
    """The job's status and each expected (or returning) minion's, from the cache."""
    per = {}
    for m in set(job["minions"]) | set(job["returns"]):
        ret = job["returns"].get(m)
        per[m] = "missing" if ret is None else ("failed" if ret["failed"] else "succeeded")
    values = set(per.values())
    status = "failed" if "failed" in values else "missing" if "missing" in values else "succeeded"
    return status, per


def engine_view(url: str, jids: list[str], master: str | None = None) -> tuple[dict, dict]:
    """(jid -> [job _source, ...], (jid, minion) -> [return _source, ...]) of these jids
    (of one master's documents when `master` is given)."""
    query: dict = {"bool": {"filter": [{"terms": {"jid": jids}}]}}
    if master is not None:
        query["bool"]["filter"].append({"term": {"master": master}})
    jobs: dict[str, list] = {}
    for h in hits(url, "salt-jobs-*", query):
        jobs.setdefault(h["_source"]["jid"], []).append(h["_source"])
    rets: dict[tuple, list] = {}
    for h in hits(url, "salt-returns-*", query):
        rets.setdefault((h["_source"]["jid"], h["_source"]["minion"]), []).append(h["_source"])
    return jobs, rets


def mismatches(url: str, truth: dict[str, dict], master: str | None = None) -> list[str]:
    """What the engine says otherwise than the job cache, job by job: [] when every
    job is there exactly once with the cache's verdict and one return per minion."""
    jobs, rets = engine_view(url, list(truth), master)
    bad = []
    for jid, job in truth.items():
        status, per = verdict(job)
        docs = jobs.get(jid, [])
        if len(docs) != 1:
            bad.append(f"{jid} {job['fun']}: {len(docs)} job documents")
            continue
        doc = docs[0]
        if doc["status"] != status or doc["kind"] != "job":
            bad.append(f"{jid} {job['fun']}: {doc['kind']} {doc['status']}, the cache says {status} "
                       f"({per}; engine counts {doc.get('counts')})")
        for m, want in per.items():
            got = rets.get((jid, m), [])
            if len(got) != 1 or got[0]["status"] != want:
                bad.append(f"{jid} {m}: returns {[g['status'] for g in got]}, the cache says {want}")
    return bad


class Agreement:
    """Whether the engine agrees with the job cache: called, None while it does not
    (`last` then says how, job by job), else the cache's truth."""

    def __init__(self) -> None:
        self.last: list[str] = []

    def __call__(self, url: str, lab: saltlab.SaltLab, jids: list[str] | None = None) -> dict | None:
        """Every job of the cache, or of `jids` (each must be in the cache)."""
        truth = cache_truth(lab)
        if jids is not None:
            missing = [j for j in jids if j not in truth]
            assert not missing, f"jobs fired but not in the cache: {missing[:5]}"
            truth = {j: truth[j] for j in jids}
        self.last = mismatches(url, truth)
        return None if self.last else truth

    def wait(self, url: str, lab: saltlab.SaltLab, jids: list[str] | None, timeout: float, what: str,
             diagnostics: Callable[[], str]) -> dict:
        """The cache's truth once the engine agrees; fails after `timeout` with the disagreement."""
        return wait_until(lambda: self(url, lab, jids), timeout, what,
                          lambda: "\n".join(self.last[:30]) + "\n" + diagnostics())


def burst_lab(request) -> Iterator[saltlab.SaltLab]:
    """The body of a module fixture: a lab of the newest Salt of its own, started with
    BURST_MASTER and BURST_MINION and an accepted key for `ghost`, a minion that never
    runs (a job targeting it has a minion missing); stopped at the end, and removed
    unless a test failed or SALTTAP_KEEP_LAB is set."""
    if NEWEST in INSTALL_ERRORS:
        pytest.fail(INSTALL_ERRORS[NEWEST], pytrace=False)
    lab = saltlab.SaltLab(NEWEST, master_extra=BURST_MASTER, minion_extra=BURST_MINION)
    failed_before = request.session.testsfailed
    try:
        lab.start()
        keys = lab.master_root / "pki" / "minions"
        shutil.copy(keys / "minion-a", keys / "ghost")
        yield lab
    finally:
        lab.stop()
        if request.session.testsfailed == failed_before and not os.environ.get("SALTTAP_KEEP_LAB"):
            lab.cleanup()


def salttap_run(lab: saltlab.SaltLab, salttap_bin: Path, url: str, state_dir: Path, name: str,
                master_id: str | None = None, missing_after: int = 15,
                deadlines: dict[str, int] | None = None, fleet_id: str | None = None,
                extra: str = "") -> SalttapRun:
    """`salttap run` beside the lab, its config and state in `state_dir` (not started). Every
    job's deadline is `missing_after`, but the functions (globs) `deadlines` names. `extra`:
    more top-level config (YAML lines)."""
    own = "".join(f"{{fun: '{fun}', seconds: {seconds}}}, " for fun, seconds in (deadlines or {}).items())
    correlator = (f"{{deadlines: [{own}{{fun: '*', seconds: {missing_after}}}]}}" if deadlines
                  else f"{{missing_after_seconds: {missing_after}}}")
    return SalttapRun.beside(
        lab, salttap_bin, state_dir / "salttap.yaml", name, config_text=(
            (f"master_id: {master_id}\n" if master_id else "")
            + (f"fleet_id: {fleet_id}\n" if fleet_id else "")
            + extra
            + f"correlator: {correlator}\n"
            "checkpoint: {interval_seconds: 1}\n"
            "reconcile: {state_interval_seconds: 1}\n"
            + indexer_yaml(url, state_dir / "spool", max_docs=500)))
