#!/usr/bin/env python3
"""Job browser benchmark: every page of `salttap ui` over a real OpenSearch node holding
--jobs indexed jobs (default 100,000) and their returns and alerts.

The documents are generated here, in salttap's shapes (docs/documents.md), and bulk-indexed
straight into date-suffixed `<prefix>-jobs-*`, `-returns-*` and `-alerts-*` indices typed
by salttap's own templates (`salttap setup` installs them first): --days days of jobs
ending now, --minions minions, 1 to 12 minions per job (a few on every minion), about 6 %
failed and 2 % missing, failed state runs with failed states, an alert per failed,
missing or risky job. Then `salttap ui` starts on a free port of 127.0.0.1 and each
request of REQUESTS is timed, one client, one request at a time, a new connection each (as
a browser's first visit): the API call behind each page, with the filters a user picks, and
the page's HTML. A request that asks for one job or one minion takes a different one each
time. Two figures per request:

  cold  --requests times, each right after the engine's request and query caches were
        emptied on every index (`POST <prefix>-*/_cache/clear?request=true&query=true`, not
        timed): what the first request of a new time window, or the first after the
        engine indexed something, costs. The shard request cache cannot answer, nor the
        node's query cache; the file system's cache and the engine's loaded structures
        (field data, global ordinals) stay warm, as on a running node
  warm  --warmup unmeasured requests, then --requests timed ones: repeated requests,
        answered where the engine can from its request cache (the daily indices that did
        not change since their last refresh)

While the requests are timed, --live-jobs-per-s new jobs a second (default 2, with their
returns and alerts) are indexed into today's indices, as a master keeps salttap busy: each
refresh then changes today's index, as beside a live master.

Every answer is checked against the data generated here (not only its HTTP status): the
jobs lists against the jobs that match their filter (every row a matching job with its
counts, newest first, no newer matching job left out, as many rows as the limit allows),
a job's answer against its returns, the minions' counts against the returns of the
window, the alerts against the alerts written, the page and the script byte for byte
against their sources. Jobs written while the requests run may or may not be visible yet
(the engine's refresh), so they are allowed either way. A wrong answer stops the benchmark.

Target: p95 < --target-ms (300) for every request, cold. Percentiles by nearest rank
(bench/lib/benchlib.py). Prints a markdown table; raw figures go to OUT/ui-<UTC time>.json.
"""
from __future__ import annotations

import argparse
import bisect
import datetime
import fnmatch
import http.client
import json
import random
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "lib"))
import benchlib  # noqa: E402
from benchlib import Engine, engine_call as call, percentile  # noqa: E402

FUNS = [("test.ping", 30), ("state.apply", 25), ("cmd.run", 20), ("grains.items", 8), ("pkg.upgrade", 5),
        ("state.highstate", 5), ("service.restart", 4), ("file.managed", 3)]
USERS = ["root", "alice", "bob", "carol", "deploy", "salt-api"]


def iso(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def day(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y.%m.%d")


def jid_of(t: float, n: int) -> str:
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return d.strftime("%Y%m%d%H%M%S") + f"{(d.microsecond + n) % 1000000:06d}"


def generate(args, now: float):
    """Yields (index, _id, source) for every job, return and alert."""
    rng = random.Random(args.seed)
    minions = [f"minion-{i:04d}" for i in range(args.minions)]
    flaky = set(rng.sample(minions, max(1, args.minions // 20)))
    funs, weights = zip(*FUNS)
    span = args.days * 86400.0
    for n in range(args.jobs):
        started = now - span + span * n / args.jobs + rng.random()
        jid = jid_of(started, n)
        fun = rng.choices(funs, weights)[0]
        user = rng.choice(USERS)
        if rng.random() < 0.02:
            targeted = minions
        else:
            targeted = rng.sample(minions, rng.randint(1, 12))
        tgt = "*" if targeted is minions else ",".join(targeted) if len(targeted) <= 3 else "G@role:web"
        succeeded, failed, missing, returns, failed_states = [], [], [], [], []
        for m in targeted:
            r = rng.random() * (4 if m in flaky else 1)
            status = "missing" if r > 0.98 * (4 if m in flaky else 1) - 0.02 else "failed" if r < 0.06 else "succeeded"
            if m in flaky and rng.random() < 0.2:
                status = "failed"
            (succeeded if status == "succeeded" else failed if status == "failed" else missing).append(m)
            ret = {"@timestamp": iso(started + rng.random() * 20), "job_started_at": iso(started), "jid": jid,
                   "minion": m, "fun": fun, "user": user, "tgt": tgt, "status": status, "master": "salt-01",
                   "salttap": {"doc": "returns", "version": "bench"}}
            if status != "missing":
                ret["retcode"] = 0 if status == "succeeded" else 2
                ret["success"] = status == "succeeded"
                ret["return_text"] = json.dumps({"result": status == "succeeded", "out": f"output of {fun} on {m}"})
            if status == "failed":
                ret["reason"] = "retcode 2" if not fun.startswith("state.") else "1 failed state"
                if fun.startswith("state."):
                    ret["failed_state_ids"] = ["deploy_app"]
                    failed_states.append({"minion": m, "id": "deploy_app", "name": "/srv/app",
                                          "function": "file.managed", "comment": "Source file not found"})
            if status == "missing":
                ret["reason"] = "no return before the deadline"
            returns.append(ret)
        status = "missing" if missing else "failed" if failed else "succeeded"
        risk = "critical" if fun == "cmd.run" and targeted is minions else "high" if fun == "pkg.upgrade" else \
            "medium" if fun.startswith("state.") else "none"
        job = {"@timestamp": iso(started), "jid": jid, "kind": "job", "fun": fun, "args_text": "[]", "user": user,
               "tgt": tgt, "tgt_type": "glob", "started_at": iso(started), "settled_at": iso(started + 30),
               "duration_ms": 30000.0, "status": status, "update": "final", "master": "salt-01",
               "minions": {"expected": targeted[:50], "succeeded": succeeded[:50], "failed": failed[:50],
                           "missing": missing[:50], "late": []},
               "counts": {"expected": len(targeted), "returned": len(targeted) - len(missing),
                          "succeeded": len(succeeded), "failed": len(failed), "missing": len(missing), "late": 0,
                          "pending": 0},
               "failed_states": failed_states[:50], "failed_state_ids": sorted({f["id"] for f in failed_states}),
               "risk": {"level": risk, "reasons": [] if risk == "none" else [f"{fun} rule"]},
               "salttap": {"doc": "jobs", "version": "bench"}}
        d = day(started)
        yield f"{args.prefix}-jobs-{d}", f"{jid}-salt-01", job
        for r in returns:
            yield f"{args.prefix}-returns-{d}", f"{jid}-{r['minion']}", r
        kinds = (["failed"] if failed else []) + (["missing"] if missing else []) + \
            (["risky"] if risk in ("high", "critical") else [])
        if kinds:
            yield f"{args.prefix}-alerts-{d}", jid, {
                "@timestamp": iso(started + 30), "alert": kinds[0], "kinds": kinds, "jid": jid, "kind": "job",
                "fun": fun, "user": user, "tgt": tgt, "status": status, "started_at": iso(started),
                "settled_at": iso(started + 30), "failed": failed[:50], "missing": missing[:50],
                "counts": job["counts"], "risk": job["risk"], "master": "salt-01",
                "salttap": {"doc": "alerts", "version": "bench"}}


RISKS = ["none", "low", "medium", "high", "critical"]
STATUSES = ("succeeded", "failed", "missing")
# A job written while the requests run is surely searchable this long after its bulk request
# was answered (the jobs index refreshes every 500 ms, the others every second).
VISIBLE_AFTER_S = 5.0


def parse_iso(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Job:
    __slots__ = ("jid", "started", "fun", "user", "status", "risk", "listed", "counts", "kinds", "written_at")

    def __init__(self, source: dict, minion_index: dict, written_at: tuple | None):
        self.jid, self.fun, self.user, self.status = source["jid"], source["fun"], source["user"], source["status"]
        self.started = parse_iso(source["started_at"])
        self.risk = source["risk"]["level"]
        lists = source["minions"]
        # The minions the engine can match: the job document's lists (each capped at 50).
        self.listed = tuple(sorted({minion_index[m] for k in ("expected", "succeeded", "failed", "missing", "late")
                                    for m in lists[k]}))
        c = source["counts"]
        self.counts = (c["expected"], c["returned"], c["succeeded"], c["failed"], c["missing"])
        self.kinds: tuple = ()
        self.written_at = written_at  # (bulk request sent, answered) epoch s; None: indexed before the requests


class Fleet:
    """Everything indexed, kept compact, to check the job browser's answers against."""

    def __init__(self, minions: int):
        self.minion_names = [f"minion-{i:04d}" for i in range(minions)]
        self.minion_index = {m: i for i, m in enumerate(self.minion_names)}
        self.jobs: dict[str, Job] = {}
        self.order: list[tuple[float, str]] = []  # (started, jid), oldest first
        # Per minion and status, the job_started of each base return (sorted); live ones apart.
        self.returns = [{s: array("d") for s in STATUSES} for _ in range(minions)]
        # Per minion, its live returns: (written_at, status, job_started).
        self.live_returns: list[list[tuple[tuple, str, float]]] = [[] for _ in range(minions)]
        self.alerts: list[tuple[float, str, tuple, tuple | None]] = []  # (@timestamp, jid, kinds, written_at)
        self.failed_state_jids: list[str] = []
        self.lock = threading.Lock()

    def add(self, index: str, source: dict, written_at: tuple | None) -> None:
        """written_at: None for the data indexed before the requests; else (when its bulk
        request was sent, when the engine answered it), epoch seconds."""
        kind = index.split("-")[1]
        if kind == "jobs":
            job = Job(source, self.minion_index, written_at)
            self.jobs[job.jid] = job
            if written_at is None:
                self.order.append((job.started, job.jid))  # sorted once loaded
            else:
                bisect.insort(self.order, (job.started, job.jid))
            if job.status == "failed" and source["failed_states"]:
                self.failed_state_jids.append(job.jid)
        elif kind == "returns":
            m, started = self.minion_index[source["minion"]], parse_iso(source["job_started_at"])
            if written_at is None:
                self.returns[m][source["status"]].append(started)
            else:
                self.live_returns[m].append((written_at, source["status"], started))
        elif kind == "alerts":
            kinds = tuple(source["kinds"])
            self.jobs[source["jid"]].kinds = kinds
            alert = (parse_iso(source["@timestamp"]), source["jid"], kinds, written_at)
            if written_at is None:
                self.alerts.append(alert)  # sorted once loaded
            else:
                bisect.insort(self.alerts, alert)

    def sort(self) -> None:
        self.order.sort()
        self.alerts.sort()
        for per_status in self.returns:
            for s in STATUSES:
                per_status[s] = array("d", sorted(per_status[s]))

    @staticmethod
    def surely_visible(written_at: tuple | None, asked: float) -> bool:
        return written_at is None or written_at[1] <= asked - VISIBLE_AFTER_S

    @staticmethod
    def maybe_visible(written_at: tuple | None, answered: float) -> bool:
        return written_at is None or written_at[0] <= answered

    def minion_counts(self, m: int, since: float | None, asked: float, answered: float) -> tuple[dict, dict]:
        """(lowest, highest) possible counts of minion m's returns whose job started at or after
        since: the live returns not surely visible yet count in the highest only."""
        base = {s: len(arr) - (bisect.bisect_left(arr, since) if since is not None else 0)
                for s, arr in self.returns[m].items()}
        lo, hi = dict(base), dict(base)
        for written_at, status, started in list(self.live_returns[m]):
            if (since is not None and started < since) or not self.maybe_visible(written_at, answered):
                continue
            hi[status] += 1
            if self.surely_visible(written_at, asked):
                lo[status] += 1
        return lo, hi


def load(engine_url: str, args, now: float, fleet: Fleet) -> dict:
    host, port = engine_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=300)
    counts: dict[str, int] = {}
    batch: list[str] = []

    def flush():
        body = "".join(batch).encode()
        conn.request("POST", "/_bulk?filter_path=errors,items.*.error", body, {"Content-Type": "application/x-ndjson"})
        answer = json.loads(conn.getresponse().read())
        if answer.get("errors"):
            raise SystemExit(f"bulk errors: {json.dumps(answer)[:2000]}")
        batch.clear()

    t0 = time.monotonic()
    for index, _id, source in generate(args, now):
        kind = index.split("-")[1]
        counts[kind] = counts.get(kind, 0) + 1
        fleet.add(index, source, None)
        batch.append(json.dumps({"index": {"_index": index, "_id": _id}}) + "\n" + json.dumps(source) + "\n")
        if len(batch) >= 5000:
            flush()
    if batch:
        flush()
    fleet.sort()
    ok, _ = call(f"{engine_url}/{args.prefix}-*/_refresh", "POST", timeout=600)
    if ok != 200:
        raise SystemExit(f"_refresh: HTTP {ok}")
    for kind in ("jobs", "returns", "alerts"):
        got = benchlib.count(engine_url, f"{args.prefix}-{kind}-*")
        if got != counts.get(kind, 0):
            raise SystemExit(f"the engine holds {got} {kind} documents, {counts.get(kind, 0)} were indexed")
    log(f"indexed {counts} in {time.monotonic() - t0:.0f} s")
    return counts


class LiveWriter(threading.Thread):
    """Indexes `rate` new jobs a second (with their returns and alerts) into today's indices
    until stopped; adds each to the fleet once the engine has answered its bulk request."""

    def __init__(self, engine_url: str, args, rate: float, fleet: Fleet):
        super().__init__(daemon=True)
        self.url, self.args, self.rate, self.fleet = engine_url, args, rate, fleet
        self.stop_flag = threading.Event()
        self.written = 0
        self.error: str | None = None

    def run(self) -> None:
        try:
            self.write_jobs()
        except Exception as e:  # noqa: BLE001 (reported by stop(): the benchmark fails)
            self.error = f"live writer: {e!r}"

    def post(self, body: bytes) -> dict:
        """One bulk request; the connection made again once if the engine closed it."""
        for attempt in (1, 2):
            try:
                self.conn.request("POST", "/_bulk?filter_path=errors", body, {"Content-Type": "application/x-ndjson"})
                return json.loads(self.conn.getresponse().read())
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def write_jobs(self) -> None:
        host, port = self.url.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        one = argparse.Namespace(**{**vars(self.args), "jobs": 1, "days": 1e-9})
        n = 0
        while self.rate > 0 and not self.stop_flag.wait(1 / self.rate):
            n += 1
            one.seed = self.args.seed + n
            docs = list(generate(one, time.time()))
            body = "".join(json.dumps({"index": {"_index": index, "_id": _id}}) + "\n" + json.dumps(source) + "\n"
                           for index, _id, source in docs)
            # Under the fleet's lock from before the request until the documents are in the fleet:
            # a check (which holds the lock) never sees in an answer a document the fleet lacks.
            with self.fleet.lock:
                sent = time.time()
                answer = self.post(body.encode())
                if answer.get("errors"):
                    self.error = f"live bulk errors: {answer}"
                    return
                for index, _, source in docs:
                    self.fleet.add(index, source, (sent, time.time()))
            self.written += 1

    def stop(self) -> None:
        self.stop_flag.set()
        self.join(timeout=60)
        if self.error:
            raise SystemExit(self.error)


def start_ui(salttap: Path, config: Path, log_path: Path):
    out = open(log_path, "w")
    proc = subprocess.Popen([str(salttap), "ui", "--listen", "127.0.0.1:0", "--config", str(config)],
                            stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"job browser is at http://127\.0\.0\.1:(\d+)/ui/", log_path.read_text())
        if found:
            return proc, int(found.group(1))
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"salttap ui did not start:\n{log_path.read_text()[-3000:]}")


# ---------------------------------------------------------------- checking the answers

class WrongAnswer(Exception):
    pass


def ui_source(name: str) -> bytes:
    """The file the binary embeds (<folder>/ui/<name>)."""
    found = [p for p in ROOT.glob(f"*/ui/{name}") if "build" not in p.parts]
    if len(found) != 1:
        raise SystemExit(f"expected one */ui/{name} in the tree, found {found}")
    return found[0].read_bytes()


def window_start(asked: float, days: float | None, floor_minute: bool) -> float | None:
    if days is None:
        return None
    since = asked - days * 86400
    return since - since % 60 if floor_minute else since


def check_jobs(fleet: Fleet, answer: dict, pred, limit: int, asked: float, answered: float) -> None:
    """Every row a job matching the filter, as indexed, newest first; no surely visible
    matching job newer than the last row left out; as many rows as there are, up to limit."""
    rows = answer["jobs"]
    if len(rows) > limit:
        raise WrongAnswer(f"{len(rows)} rows, limit {limit}")
    seen, prev = set(), float("inf")
    for row in rows:
        job = fleet.jobs.get(row["jid"])
        if job is None:
            raise WrongAnswer(f"row {row['jid']}: no such job was indexed")
        if not pred(job, asked - 1):  # the earliest window the server may have used
            raise WrongAnswer(f"row {row['jid']} does not match the filter")
        got = (row["status"], row["fun"], row["user"], row["risk"],
               (row["expected"], row["returned"], row["succeeded"], row["failed"], row["missing"]))
        want = (job.status, job.fun, job.user, job.risk, job.counts)
        if got != want:
            raise WrongAnswer(f"row {row['jid']}: {got}, indexed as {want}")
        started = parse_iso(row["started_at"])
        if abs(started - job.started) > 1e-3 or started > prev:
            raise WrongAnswer(f"row {row['jid']}: started_at {row['started_at']} out of order or not as indexed")
        prev = started
        seen.add(job.jid)
    oldest = prev if len(rows) == limit else float("-inf")
    for started, jid in reversed(fleet.order):
        if started <= oldest:
            break
        job = fleet.jobs[jid]
        if jid not in seen and fleet.surely_visible(job.written_at, asked) and pred(job, answered + 1):  # the latest window
            raise WrongAnswer(f"job {jid} (started {started:.3f}) matches but is not in the answer")


def check_job(fleet: Fleet, answer: dict, jid: str, failed_states: bool) -> None:
    job, row = fleet.jobs[jid], answer["job"]
    got = (row["jid"], row["status"], row["fun"], row["user"],
           (row["expected"], row["returned"], row["succeeded"], row["failed"], row["missing"]))
    if got != (jid, job.status, job.fun, job.user, job.counts):
        raise WrongAnswer(f"job {jid}: {got}")
    returns = answer["returns"]
    statuses = {s: sum(1 for r in returns if r["status"] == s) for s in STATUSES}
    if answer["returns_total"] != job.counts[0] or len(returns) != job.counts[0] or \
            (statuses["succeeded"], statuses["failed"], statuses["missing"]) != job.counts[2:]:
        raise WrongAnswer(f"job {jid}: {answer['returns_total']} returns {statuses}, indexed {job.counts}")
    if len({r["minion"] for r in returns}) != len(returns):
        raise WrongAnswer(f"job {jid}: a minion twice among its returns")
    if failed_states and not row.get("failed_states"):
        raise WrongAnswer(f"job {jid}: a failed state run without its failed states")


def minion_window_counts(fleet: Fleet, m: int, days: float | None, asked: float, answered: float):
    """[(lowest, highest)] for each window start the server may have used (its clock read
    between asked and answered; the window starts at its whole minute)."""
    starts = {window_start(asked, days, True), window_start(answered, days, True)}
    return [fleet.minion_counts(m, since, asked, answered) for since in starts]


def within(row: dict, bounds) -> bool:
    for lo, hi in bounds:
        if all(lo[s] <= row[s] <= hi[s] for s in STATUSES) and \
                sum(lo.values()) <= row["jobs"] <= sum(hi.values()):
            return True
    return False


def check_minions(fleet: Fleet, answer: dict, days: float | None, asked: float, answered: float) -> None:
    rows = answer["minions"]
    named = {}
    prev = (float("inf"), float("inf"))
    for row in rows:
        m = fleet.minion_index.get(row["minion"])
        if m is None or m in named:
            raise WrongAnswer(f"minion {row['minion']}: unknown or listed twice")
        named[m] = row
        order = (row["failed"] + row["missing"], row["jobs"])  # the most failed or missing first, then most jobs
        if order > prev:
            raise WrongAnswer(f"minion {row['minion']}: not in the order of the most failed or missing returns")
        prev = order
    for m in range(len(fleet.minion_names)):
        bounds = minion_window_counts(fleet, m, days, asked, answered)
        if m in named:
            if not within(named[m], bounds):
                raise WrongAnswer(f"minion {fleet.minion_names[m]}: {named[m]}, indexed between {bounds}")
        elif all(sum(lo.values()) > 0 for lo, _ in bounds):
            raise WrongAnswer(f"minion {fleet.minion_names[m]} has returns in the window but is not listed")


def check_minion(fleet: Fleet, answer: dict, minion: str, days: float, asked: float, answered: float) -> None:
    m = fleet.minion_index[minion]
    bounds = minion_window_counts(fleet, m, days, asked, answered)
    row = answer["minion"]
    if row["minion"] != minion or not within(row, bounds):
        raise WrongAnswer(f"minion {minion}: {row}, indexed between {bounds}")
    rows = answer["returns"]
    most = min(100, max(sum(hi.values()) for _, hi in bounds))
    least = min(100, min(sum(lo.values()) for lo, _ in bounds))
    if not least <= len(rows) <= most:
        raise WrongAnswer(f"minion {minion}: {len(rows)} returns listed, expected {least} to {most}")
    prev = float("inf")
    for r in rows:
        started = parse_iso(r["job_started_at"])
        arr = fleet.returns[m][r["status"]]
        i = bisect.bisect_left(arr, started - 1e-3)
        found = i < len(arr) and abs(arr[i] - started) <= 1e-3
        found = found or any(st == r["status"] and abs(js - started) <= 1e-3 for _, st, js in fleet.live_returns[m])
        if not found or started > prev + 1e-3:
            raise WrongAnswer(f"minion {minion}: return of {r['jid']} ({r['status']}) not as indexed or out of order")
        prev = started


def check_alerts(fleet: Fleet, answer: dict, kind: str | None, days: float | None, limit: int,
                 asked: float, answered: float) -> None:
    rows = answer["alerts"]
    if len(rows) > limit:
        raise WrongAnswer(f"{len(rows)} alerts, limit {limit}")
    lo_since, hi_since = window_start(asked, days, False), window_start(answered, days, False)
    seen, prev = set(), float("inf")
    for row in rows:
        job = fleet.jobs.get(row["jid"])
        ts = parse_iso(row["@timestamp"])
        if job is None or tuple(row["kinds"]) != job.kinds or (kind and kind not in job.kinds):
            raise WrongAnswer(f"alert {row['jid']}: {row['kinds']}, indexed as {job.kinds if job else None}")
        if ts > prev or (lo_since is not None and ts < lo_since - 1):
            raise WrongAnswer(f"alert {row['jid']}: out of order or outside the window")
        prev = ts
        seen.add(row["jid"])
    oldest = prev if len(rows) == limit else float("-inf")
    for ts, jid, kinds, written_at in reversed(fleet.alerts):
        if ts <= oldest or (hi_since is not None and ts < hi_since + 1):
            break
        if jid not in seen and (not kind or kind in kinds) and fleet.surely_visible(written_at, asked):
            raise WrongAnswer(f"alert {jid} ({kinds}) belongs in the answer but is not there")


# ---------------------------------------------------------------- the requests

def job_filter(status=None, fun=None, user=None, minion=None, risk_at_least=None, days=None):
    """pred(job, t): whether the job matches, its window (days) counted back from t."""
    def pred(job: Job, t: float) -> bool:
        return (status is None or job.status == status) and (fun is None or fnmatch.fnmatchcase(job.fun, fun)) and \
            (user is None or job.user == user) and (minion is None or minion in job.listed) and \
            (risk_at_least is None or RISKS.index(job.risk) >= RISKS.index(risk_at_least)) and \
            (days is None or job.started >= t - days * 86400)
    return pred


def requests_of(fleet: Fleet, rng: random.Random, page: bytes, script: bytes) -> dict:
    """name -> a function giving (path, check(answer bytes, asked, answered))."""
    def api(path, check):
        return path, lambda body, asked, answered: check(json.loads(body), asked, answered)

    def same(expected: bytes):
        def check(body, asked, answered):
            if body != expected:
                raise WrongAnswer(f"{len(body)} bytes, not the {len(expected)} of the source")
        return check

    def jobs(query, limit=100, **filters):
        pred = job_filter(**filters)
        return lambda: api(f"/ui/api/jobs{query}", lambda a, t0, t1: check_jobs(fleet, a, pred, limit, t0, t1))

    def jobs_of_minion():
        m = rng.randrange(len(fleet.minion_names))
        pred = job_filter(minion=m)
        return api(f"/ui/api/jobs?minion={fleet.minion_names[m]}",
                   lambda a, t0, t1: check_jobs(fleet, a, pred, 100, t0, t1))

    def one_job(jids, failed_states):
        jid = rng.choice(jids)
        return api(f"/ui/api/jobs/{jid}", lambda a, t0, t1: check_job(fleet, a, jid, failed_states))

    def one_minion():
        minion = rng.choice(fleet.minion_names)
        return api(f"/ui/api/minions/{urllib.parse.quote(minion)}",
                   lambda a, t0, t1: check_minion(fleet, a, minion, 7, t0, t1))

    base_jids = [jid for jid, j in fleet.jobs.items() if j.written_at is None]
    return {
        "jobs list: page": lambda: ("/ui/", same(page)),
        "jobs list: api, no filter (100 newest)": jobs(""),
        "jobs list: api, status=failed": jobs("?status=failed", status="failed"),
        "jobs list: api, fun=state.* since=1d": jobs("?fun=state.*&since=1d", fun="state.*", days=1),
        "jobs list: api, minion=<one>": jobs_of_minion,
        "jobs list: api, user=alice status=failed since=7d":
            jobs("?user=alice&status=failed&since=7d", user="alice", status="failed", days=7),
        "jobs list: api, risk=high limit=1000": jobs("?risk=high&limit=1000", 1000, risk_at_least="high"),
        "job: page": lambda: (f"/ui/job/{rng.choice(base_jids)}", same(page)),
        "job: api, any job": lambda: one_job(base_jids, False),
        "job: api, a failed state run": lambda: one_job(fleet.failed_state_jids, True),
        "minions: page": lambda: ("/ui/minions", same(page)),
        "minions: api, 7d": lambda: api("/ui/api/minions", lambda a, t0, t1: check_minions(fleet, a, 7, t0, t1)),
        "minions: api, 1d": lambda: api("/ui/api/minions?since=1d",
                                        lambda a, t0, t1: check_minions(fleet, a, 1, t0, t1)),
        "minion: page": lambda: (f"/ui/minion/{rng.choice(fleet.minion_names)}", same(page)),
        "minion: api, 7d": one_minion,
        "alerts: page": lambda: ("/ui/alerts", same(page)),
        "alerts: api, 7d": lambda: api("/ui/api/alerts",
                                       lambda a, t0, t1: check_alerts(fleet, a, None, 7, 100, t0, t1)),
        "alerts: api, kind=risky since=all": lambda: api(
            "/ui/api/alerts?kind=risky&since=all", lambda a, t0, t1: check_alerts(fleet, a, "risky", None, 100, t0, t1)),
        "asset: app.js": lambda: ("/ui/static/app.js", same(script)),
    }


def timed_get(port: int, path: str) -> tuple[float, int, bytes, float, float]:
    """(seconds, status, body, asked at, answered at); the times in epoch seconds."""
    asked = time.time()
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    elapsed = time.perf_counter() - t0
    conn.close()
    return elapsed, r.status, body, asked, time.time()


def measure(fleet: Fleet, port: int, next_request, n: int, before=None) -> tuple[list[float], list[int]]:
    """n timed requests, each answer checked; before(): untimed, ahead of each."""
    times, sizes = [], []
    for _ in range(n):
        path, check = next_request()
        if before:
            before()
        elapsed, status, body, asked, answered = timed_get(port, path)
        if status != 200:
            raise SystemExit(f"{path}: HTTP {status}: {body[:500]!r}")
        try:
            with fleet.lock:  # the live writer's documents as they were when the answer came
                check(body, asked, answered)
        except WrongAnswer as e:
            raise SystemExit(f"{path}: wrong answer: {e}")
        times.append(elapsed * 1000)
        sizes.append(len(body))
    return times, sizes


def stats(times: list[float]) -> dict:
    return {"p50_ms": percentile(times, 50), "p95_ms": percentile(times, 95), "max_ms": max(times), "n": len(times)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--salttap", type=Path, default=ROOT / "build" / "dev" / "salttap")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "bench-ui")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench-results")
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--minions", type=int, default=1000)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--requests", type=int, default=100, help="timed requests per row, cold and warm each")
    ap.add_argument("--warmup", type=int, default=10, help="unmeasured requests before the warm ones")
    ap.add_argument("--target-ms", type=float, default=300)
    ap.add_argument("--heap", default="2g", help="the engine's JVM heap")
    ap.add_argument("--live-jobs-per-s", type=float, default=2.0,
                    help="jobs indexed a second into today's indices while requests are timed (0: none)")
    ap.add_argument("--prefix", default="uibench")
    ap.add_argument("--seed", type=int, default=20261203)
    args = ap.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    page, script = ui_source("index.html"), ui_source("app.js")
    fleet = Fleet(args.minions)
    engine = Engine("opensearch", args.work / "engine", heap=args.heap)
    engine.start()
    ui = None
    loads = {"start": benchlib.loadavg()}
    try:
        config = args.work / "salttap.yaml"
        config.write_text("indexer:\n"
                          f"  hosts: [\"{engine.url}\"]\n"
                          f"  index_prefix: {args.prefix}\n"
                          f"  spool: {{dir: {args.work / 'spool'}}}\n")
        benchlib.delete_indices(engine.url, f"{args.prefix}-*")
        setup = subprocess.run([str(args.salttap), "setup", "--config", str(config)], capture_output=True, text=True,
                               timeout=120)
        if setup.returncode != 0:
            raise SystemExit(f"salttap setup failed:\n{setup.stderr[-3000:]}")
        counts = load(engine.url, args, time.time(), fleet)
        ui, port = start_ui(args.salttap, config, args.work / "ui.log")
        live = LiveWriter(engine.url, args, args.live_jobs_per_s, fleet)
        live.start()
        rng = random.Random(args.seed)

        def clear_caches():  # the engine's request and query caches emptied, on every index of the benchmark
            status, _ = call(f"{engine.url}/{args.prefix}-*/_cache/clear?request=true&query=true", "POST")
            if status != 200:
                raise SystemExit(f"_cache/clear: HTTP {status}")

        rows = []
        loads["timed"] = benchlib.loadavg()
        log(f"timing {args.requests} cold and {args.requests} warm requests per row; {benchlib.load_text()}")
        for name, next_request in requests_of(fleet, rng, page, script).items():
            load_row = benchlib.loadavg()
            cold, _ = measure(fleet, port, next_request, args.requests, clear_caches)
            measure(fleet, port, next_request, args.warmup)
            warm, sizes = measure(fleet, port, next_request, args.requests)
            rows.append({"request": name, "cold": stats(cold), "warm": stats(warm),
                         "bytes": int(benchlib.median(sizes)), "load": load_row[0]})
            log(f"{name}: cold p50 {rows[-1]['cold']['p50_ms']:.1f} p95 {rows[-1]['cold']['p95_ms']:.1f} ms, "
                f"warm p50 {rows[-1]['warm']['p50_ms']:.1f} p95 {rows[-1]['warm']['p95_ms']:.1f} ms; "
                f"load {load_row[0]:.1f}; every answer checked")
        live.stop()
        counts["live_jobs"] = live.written
        loads["end"] = benchlib.loadavg()
    finally:
        if ui:
            ui.terminate()
            ui.wait(timeout=15)
        engine.stop()

    ok = all(r["cold"]["p95_ms"] < args.target_ms for r in rows)
    print(f"\n{counts.get('jobs', 0):,} jobs, {counts.get('returns', 0):,} returns, "
          f"{counts.get('alerts', 0):,} alerts over {args.days} days, {args.minions:,} minions; "
          f"{counts.get('live_jobs', 0):,} jobs indexed meanwhile ({args.live_jobs_per_s:g}/s); "
          f"{args.requests} cold and {args.requests} warm timed requests per row, one at a time, every answer "
          f"checked against the data; the machine's 1-minute load {loads['timed'][0]:.1f} when the timing began, "
          f"{loads['end'][0]:.1f} at its end\n")
    print(f"| request | cold p50 ms | cold p95 ms | cold max ms | warm p50 ms | warm p95 ms | answer bytes | load | "
          f"cold p95 < {args.target_ms:g} ms | warm p95 < {args.target_ms:g} ms |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|---|---|")
    for r in rows:
        c, w = r["cold"], r["warm"]
        print(f"| {r['request']} | {c['p50_ms']:.1f} | {c['p95_ms']:.1f} | {c['max_ms']:.1f} | {w['p50_ms']:.1f} | "
              f"{w['p95_ms']:.1f} | {r['bytes']:,} | {r['load']:.1f} | "
              f"{'PASS' if c['p95_ms'] < args.target_ms else 'FAIL'} | "
              f"{'PASS' if w['p95_ms'] < args.target_ms else 'FAIL'} |")
    out = benchlib.results_file(args.out, "ui")
    out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "counts": counts, "loads": loads,
                               "rows": rows, "pass": ok}, indent=2))
    print(f"\nraw figures: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0 if ok else 1


log = benchlib.logger("ui-bench")

if __name__ == "__main__":
    sys.exit(main())
