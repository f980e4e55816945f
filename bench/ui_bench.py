#!/usr/bin/env python3
"""Job browser benchmark: every page of `salttap ui` over a real OpenSearch node holding
--jobs indexed jobs (default 100,000) and their returns and alerts.

The documents are generated here, in salttap's shapes (docs/documents.md), and bulk-indexed
straight into date-suffixed `<prefix>-jobs-*`, `-returns-*` and `-alerts-*` indices typed
by salttap's own templates (`salttap setup` installs them first): --days days of jobs
ending now, --minions minions, 1 to 12 minions per job (a few on every minion), about 6 %
failed and 2 % missing, failed state runs with failed states, an alert per failed,
missing or risky job. Then `salttap ui` starts on a free port of 127.0.0.1, and each
request of REQUESTS is timed --requests times after --warmup unmeasured ones (one client,
one request at a time, a new connection each, as a browser's first visit): the API call
behind each page, with the filters a user picks, and the page's HTML. A request that asks
for one job or one minion takes a different one each time.

While the requests are timed, --live-jobs-per-s new jobs a second (default 2, with their
returns and alerts) are indexed into today's indices, as a master keeps salttap busy: each
refresh then changes today's index, so the engine's request cache can only serve what a
real deployment's would (the days that no longer change), never a frozen index.

Target: p95 < --target-ms (300) for every request. Prints a markdown table (p50, p95, max,
mean, answer size); raw figures go to OUT/ui-<UTC time>.json.
"""
from __future__ import annotations

import argparse
import datetime
import http.client
import json
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "harness"))
from engine import Engine  # noqa: E402
from http_calls import call  # noqa: E402

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


def load(engine_url: str, args, now: float) -> dict:
    host, port = engine_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=300)
    counts: dict[str, int] = {}
    sample = {"jids": [], "failed_jids": [], "minions": set()}
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
        if kind == "jobs":
            sample["jids"].append(source["jid"])
            if source["status"] == "failed" and source["failed_states"]:
                sample["failed_jids"].append(source["jid"])
        elif kind == "returns":
            sample["minions"].add(source["minion"])
        batch.append(json.dumps({"index": {"_index": index, "_id": _id}}) + "\n" + json.dumps(source) + "\n")
        if len(batch) >= 5000:
            flush()
    if batch:
        flush()
    ok, _ = call(f"{engine_url}/{args.prefix}-*/_refresh", "POST", timeout=600)
    assert ok == 200
    for kind in ("jobs", "returns", "alerts"):
        status, got = call(f"{engine_url}/{args.prefix}-{kind}-*/_count")
        assert status == 200 and got["count"] == counts.get(kind, 0), (kind, got, counts)
    print(f"ui-bench: indexed {counts} in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    sample["minions"] = sorted(sample["minions"])
    return {"counts": counts, **sample}


class LiveWriter(threading.Thread):
    """Indexes `rate` new jobs a second (with their returns and alerts) into today's indices
    until stopped; counts what it wrote."""

    def __init__(self, engine_url: str, args, rate: float):
        super().__init__(daemon=True)
        self.url, self.args, self.rate = engine_url, args, rate
        self.stop_flag = threading.Event()
        self.written = 0
        self.error: str | None = None

    def run(self) -> None:
        host, port = self.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        one = argparse.Namespace(**{**vars(self.args), "jobs": 1, "days": 1e-9})
        n = 0
        while self.rate > 0 and not self.stop_flag.wait(1 / self.rate):
            n += 1
            one.seed = self.args.seed + n
            body = "".join(json.dumps({"index": {"_index": index, "_id": _id}}) + "\n" + json.dumps(source) + "\n"
                           for index, _id, source in generate(one, time.time()))
            conn.request("POST", "/_bulk?filter_path=errors", body.encode(), {"Content-Type": "application/x-ndjson"})
            answer = json.loads(conn.getresponse().read())
            if answer.get("errors"):
                self.error = f"live bulk errors: {answer}"
                return
            self.written += 1

    def stop(self) -> None:
        self.stop_flag.set()
        self.join(timeout=60)
        if self.error:
            raise SystemExit(self.error)


def start_ui(salttap: Path, config: Path, log: Path):
    out = open(log, "w")
    proc = subprocess.Popen([str(salttap), "ui", "--listen", "127.0.0.1:0", "--config", str(config)],
                            stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"job browser is at http://127\.0\.0\.1:(\d+)/ui/", log.read_text())
        if found:
            return proc, int(found.group(1))
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"salttap ui did not start:\n{log.read_text()[-3000:]}")


def requests_of(sample: dict, rng: random.Random) -> dict:
    """name -> a function giving the next path to ask."""
    one = lambda items: lambda: rng.choice(items)  # noqa: E731
    jid, failed, minion = one(sample["jids"]), one(sample["failed_jids"]), one(sample["minions"])
    return {
        "jobs list: page": lambda: "/ui/",
        "jobs list: api, no filter (100 newest)": lambda: "/ui/api/jobs",
        "jobs list: api, status=failed": lambda: "/ui/api/jobs?status=failed",
        "jobs list: api, fun=state.* since=1d": lambda: "/ui/api/jobs?fun=state.*&since=1d",
        "jobs list: api, minion=<one>": lambda: f"/ui/api/jobs?minion={minion()}",
        "jobs list: api, user=alice status=failed since=7d": lambda: "/ui/api/jobs?user=alice&status=failed&since=7d",
        "jobs list: api, risk=high limit=1000": lambda: "/ui/api/jobs?risk=high&limit=1000",
        "job: page": lambda: f"/ui/job/{jid()}",
        "job: api, any job": lambda: f"/ui/api/jobs/{jid()}",
        "job: api, a failed state run": lambda: f"/ui/api/jobs/{failed()}",
        "minions: page": lambda: "/ui/minions",
        "minions: api, 7d": lambda: "/ui/api/minions",
        "minions: api, 1d": lambda: "/ui/api/minions?since=1d",
        "minion: page": lambda: f"/ui/minion/{minion()}",
        "minion: api, 7d": lambda: f"/ui/api/minions/{minion()}",
        "alerts: page": lambda: "/ui/alerts",
        "alerts: api, 7d": lambda: "/ui/api/alerts",
        "alerts: api, kind=risky since=all": lambda: "/ui/api/alerts?kind=risky&since=all",
        "asset: app.js": lambda: "/ui/static/app.js",
    }


def timed_get(port: int, path: str) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    elapsed = time.perf_counter() - t0
    conn.close()
    return elapsed, r.status, len(body)


def percentile(values: list[float], p: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--salttap", type=Path, default=ROOT / "build" / "dev" / "salttap")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "bench-ui")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench-results")
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--minions", type=int, default=1000)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--requests", type=int, default=100, help="timed requests per row")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--target-ms", type=float, default=300)
    ap.add_argument("--heap", default="2g", help="the engine's JVM heap")
    ap.add_argument("--live-jobs-per-s", type=float, default=2.0,
                    help="jobs indexed a second into today's indices while requests are timed (0: none)")
    ap.add_argument("--prefix", default="uibench")
    ap.add_argument("--seed", type=int, default=20261203)
    args = ap.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    engine = Engine("opensearch", args.work / "engine", heap=args.heap)
    engine.start()
    ui = None
    try:
        config = args.work / "salttap.yaml"
        config.write_text("indexer:\n"
                          f"  hosts: [\"{engine.url}\"]\n"
                          f"  index_prefix: {args.prefix}\n"
                          f"  spool: {{dir: {args.work / 'spool'}}}\n")
        call(f"{engine.url}/{args.prefix}-*", "DELETE")
        setup = subprocess.run([str(args.salttap), "setup", "--config", str(config)], capture_output=True, text=True,
                               timeout=120)
        if setup.returncode != 0:
            raise SystemExit(f"salttap setup failed:\n{setup.stderr[-3000:]}")
        now = time.time()
        sample = load(engine.url, args, now)
        ui, port = start_ui(args.salttap, config, args.work / "ui.log")
        live = LiveWriter(engine.url, args, args.live_jobs_per_s)
        live.start()
        rng = random.Random(args.seed)
        rows = []
        for name, next_path in requests_of(sample, rng).items():
            for _ in range(args.warmup):
                timed_get(port, next_path())
            times, sizes = [], []
            for _ in range(args.requests):
                path = next_path()
                elapsed, status, size = timed_get(port, path)
                if status != 200:
                    raise SystemExit(f"{path}: HTTP {status}")
                times.append(elapsed * 1000)
                sizes.append(size)
            rows.append({"request": name, "p50_ms": percentile(times, 0.5), "p95_ms": percentile(times, 0.95),
                         "max_ms": max(times), "mean_ms": statistics.fmean(times),
                         "bytes": int(statistics.median(sizes)), "n": len(times)})
            print(f"ui-bench: {name}: p50 {rows[-1]['p50_ms']:.1f} ms, p95 {rows[-1]['p95_ms']:.1f} ms",
                  file=sys.stderr)
        live.stop()
        sample["counts"]["live_jobs"] = live.written
    finally:
        if ui:
            ui.terminate()
            ui.wait(timeout=15)
        engine.stop()

    ok = all(r["p95_ms"] < args.target_ms for r in rows)
    print(f"\n{sample['counts'].get('jobs', 0):,} jobs, {sample['counts'].get('returns', 0):,} returns, "
          f"{sample['counts'].get('alerts', 0):,} alerts over {args.days} days, {args.minions:,} minions; "
          f"{sample['counts'].get('live_jobs', 0):,} jobs indexed meanwhile ({args.live_jobs_per_s:g}/s); "
          f"{args.requests} timed requests per row, one at a time\n")
    print("| request | p50 ms | p95 ms | max ms | answer bytes | p95 < %g ms |" % args.target_ms)
    print("|---|--:|--:|--:|--:|---|")
    for r in rows:
        print(f"| {r['request']} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['max_ms']:.1f} | {r['bytes']:,} | "
              f"{'PASS' if r['p95_ms'] < args.target_ms else 'FAIL'} |")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out / f"ui-{stamp}.json"
    out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "counts": sample["counts"],
                               "rows": rows, "pass": ok}, indent=2))
    print(f"\nraw figures: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
