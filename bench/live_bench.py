#!/usr/bin/env python3
"""salttap beside a live master: how soon a job is searchable, and what the master pays.

    bench/run-live-bench [--jobs 100] [--pings 30] [--rounds 3] [--salt 3008.5]

A real salt-master with two minions (tests/harness/saltlab.py), a real
OpenSearch node (tests/engines) and `salttap run` on the master's bus.

1. Latency, bus to searchable: --jobs `test.ping` jobs, fired --interval apart
   through Salt's LocalClient; for each, from the moment the correlator settled
   it (the job document's `settled_at`) to the moment a search finds the
   settled document, with no forced refresh (the engine's own 1 s refresh). The
   engine is polled every --poll seconds (that resolution is in the figures).
   Conditions, each with a fresh `salttap run`:
   - `defaults`: salttap's default settings;
   - `defaults, during a backfill`: the same while `run` reconciles at its start
     (a fresh state directory) the --backfill-jobs earlier jobs that Salt's
     local_cache holds: the backfill of a first start or of a long downtime;
   - `jobs index at the engine's refresh`: `jobs_refresh_interval: null`, the
     jobs index refreshed every second as the engine's default, not salttap's
     500 ms; into indices of their own created with it;
   - `refresh_interval 250ms` (--low-refresh): the documented low-latency
     setting, into indices of their own created with it.
2. Master impact: the round trip of `test.ping` on both minions (LocalClient.cmd,
   --pings calls) with no salttap, with `salttap run` attached, attached during a
   backfill, and attached with the engine down (its spool growing).
Before any measurement the engine is warmed on salttap's own traffic (a `run`
reconciling the job cache into indices deleted after): a cold JVM spends half
its CPU compiling. By default the engine is pinned to the last CPU and the
master, minions and salttap to the others, as an engine on a host of its own
(--engine-cpu -1: everything shares every CPU).
Rounds rotate the order of the conditions; medians and ratios per condition.
Raw figures in build/bench-results/live-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "lib"))
import benchlib  # noqa: E402
import saltlab  # noqa: E402
from benchlib import Engine, median, percentile as pct, tree_cpu, tree_pids, tree_rss  # noqa: E402

PREFIX = "bench"

# Runs in the Salt venv: `fire N INTERVAL` (async jobs, a jid per line) or `ping N`
# (synchronous round trips, seconds per line).
DRIVER = r"""
import json, sys, time
import salt.client
client = salt.client.LocalClient(c_path=sys.argv[1])
mode, n = sys.argv[2], int(sys.argv[3])
for i in range(n):
    if mode == "fire":
        t0 = time.monotonic()
        print(json.dumps({"jid": client.run_job("*", "test.ping")["jid"]}), flush=True)
        time.sleep(max(0.0, float(sys.argv[4]) - (time.monotonic() - t0)))
    else:
        t0 = time.perf_counter()
        got = client.cmd("*", "test.ping", timeout=30)
        took = time.perf_counter() - t0
        if len(got) != int(sys.argv[4]):
            raise SystemExit(f"test.ping answered by {sorted(got)}")
        print(json.dumps({"seconds": took}), flush=True)
"""

# Writes earlier jobs into the master's job cache, as bench/jobcache_bench.py does.
WRITE = r"""
import sys, salt.config, salt.loader
opts = salt.config.master_config(sys.argv[1])
lc = salt.loader.returners(opts, {}, whitelist=["local_cache"])
for i in range(int(sys.argv[2])):
    jid = lc["local_cache.prep_jid"](False)
    lc["local_cache.save_load"](jid, {"jid": jid, "fun": "test.ping", "arg": [], "tgt": "*", "tgt_type": "glob",
                                      "user": "root"}, minions=["minion-a", "minion-b"])
    for m in ("minion-a", "minion-b"):
        lc["local_cache.returner"]({"jid": jid, "id": m, "fun": "test.ping", "fun_args": [], "retcode": 0,
                                    "success": True, "return": True})
"""


# A bus subscriber that connects, then is stopped with SIGSTOP by the bench:
# what a salttap that stalled would be to the master.
# With `read`, it keeps reading instead: the control, a reader that keeps up.
SUBSCRIBER = r"""
import sys, salt.config, salt.utils.event
opts = salt.config.master_config(sys.argv[1])
bus = salt.utils.event.get_master_event(opts, opts["sock_dir"], listen=True)
bus.get_event(wait=1, full=True)  # connected and subscribed
print("subscribed", flush=True)
if sys.argv[2] == "read":
    while True:
        bus.get_event(wait=1, full=True)
sys.stdin.read()
"""

# Fires `count` events of `size` bytes onto the master's bus, `rate` a second.
LOAD = r"""
import sys, time, salt.config, salt.utils.event
opts = salt.config.master_config(sys.argv[1])
count, size, rate = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
bus = salt.utils.event.get_master_event(opts, opts["sock_dir"], listen=False)
t0 = time.monotonic()
for i in range(count):
    bus.fire_event({"pad": "x" * size, "i": i}, "bench/stall/load")
    time.sleep(max(0.0, t0 + (i + 1) / rate - time.monotonic()))
print("fired", count, flush=True)
"""


log = benchlib.logger("live-bench")


def search(url: str, body: dict, prefix: str = PREFIX) -> dict:
    req = urllib.request.Request(f"{url}/{prefix}-jobs-*/_search?ignore_unavailable=true&allow_no_indices=true",
                                 data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        if e.code != 503:  # 503: a new index whose shard is not allocated yet
            raise
        return {"hits": {"hits": []}}


def parse_time(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Salttap:
    """`salttap run` on the lab's master, stopped by PID."""

    def __init__(self, binary: str, lab: saltlab.SaltLab, work: Path, hosts: list[str], extra_bulk: str = "",
                 reconcile: bool = False, prefix: str = PREFIX, extra_indexer: str = ""):
        work.mkdir(parents=True, exist_ok=True)
        self.config = work / "salttap.yaml"
        bulk = f"\n  bulk: {{{extra_bulk}}}" if extra_bulk else ""
        self.config.write_text(f"master_id: live-bench\nreconcile: {{enabled: {str(reconcile).lower()}}}\nindexer:\n"
                               f"  hosts: {json.dumps(hosts)}\n  index_prefix: {prefix}\n"
                               f"  spool: {{dir: {work / 'spool'}}}{bulk}\n{extra_indexer}")
        # Every job document stamped at each stage (indexer/latency_trace.h).
        self.trace = work / "latency-trace.tsv"
        env = dict(os.environ, SALTTAP_LATENCY_TRACE=str(self.trace))
        self.proc = subprocess.Popen([binary, "run", "--config", str(self.config), "--master-config",
                                      str(lab.master_conf_dir / "master")],
                                     stdout=subprocess.DEVNULL, stderr=open(work / "salttap.log", "wb"), env=env)
        self.log = work / "salttap.log"
        deadline = time.monotonic() + 60
        while "tap: connected" not in self.log.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"salttap run did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.1)

    def reconcile_done_at(self) -> float | None:
        """When its reconcile had read the whole job cache (epoch seconds, from its log line), or None."""
        for line in self.log.read_text(errors="replace").splitlines():
            if "reconcile: pass done" in line:
                return parse_time(line.split()[0])
        return None

    def stages(self) -> dict[str, dict[str, float]]:
        """Per job document id, when its settled version (version % 4 == 1) reached each stage (epoch s)."""
        out: dict[str, dict[str, float]] = {}
        if not self.trace.exists():
            return out
        for line in self.trace.read_text(errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) != 4 or not parts[2].isdigit() or int(parts[2]) % 4 != 1:
                continue
            stage, doc_id, _, micros = parts
            out.setdefault(doc_id, {}).setdefault(stage, int(micros) / 1e6)  # the first time at that stage
        return out

    def stop(self) -> None:
        benchlib.stop(self.proc, 60)


def fire_and_measure(lab: saltlab.SaltLab, url: str, jobs: int, interval: float, poll: float,
                     prefix: str = PREFIX) -> list[float]:
    """Fires the jobs; returns, per job, seconds from settled_at to found settled by a search."""
    py = lab.venv / "bin" / "python"
    driver = subprocess.Popen([str(py), "-c", DRIVER, str(lab.master_conf_dir / "master"), "fire", str(jobs),
                               str(interval)], stdout=subprocess.PIPE, text=True, env=lab.env)
    pending: set[str] = set()
    lock = threading.Lock()

    def read():
        for line in driver.stdout:
            with lock:
                pending.add(json.loads(line)["jid"])
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    latencies: dict[str, float] = {}
    deadline = time.monotonic() + jobs * interval + 300
    while (reader.is_alive() or pending) and time.monotonic() < deadline:
        with lock:
            want = sorted(pending)
        if want:
            got = search(url, {"size": len(want), "_source": ["jid", "settled_at", "started_at", "duration_ms"],
                               "query": {"bool": {"filter": [{"terms": {"jid": want}},
                                                             {"terms": {"status": ["succeeded", "failed",
                                                                                   "missing"]}}]}}},
                         prefix)
            now = time.time()
            for hit in got["hits"]["hits"]:
                src = hit["_source"]
                if src["jid"] in pending:
                    settled = (parse_time(src["settled_at"]) if src.get("settled_at")
                               else parse_time(src["started_at"]) + src["duration_ms"] / 1000)
                    latencies[src["jid"]] = (now - settled, settled, src["jid"], now)
                    with lock:
                        pending.discard(src["jid"])
        time.sleep(poll)
    if driver.wait() != 0 or pending:
        raise RuntimeError(f"{len(pending)} jobs never became searchable: {sorted(pending)[:5]}")
    return list(latencies.values())  # (seconds to searchable, settled at, jid, found at)


def pings(lab: saltlab.SaltLab, n: int) -> list[float]:
    py = lab.venv / "bin" / "python"
    out = subprocess.run([str(py), "-c", DRIVER, str(lab.master_conf_dir / "master"), "ping", str(n),
                          str(len(lab.minion_ids))], capture_output=True, text=True, env=lab.env, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"ping driver: {out.stderr[-2000:]}")
    return [json.loads(line)["seconds"] for line in out.stdout.splitlines()]


# From settled (the job document's settled_at) to searchable, the stages of
# indexer/latency_trace.h in order.
STAGES = [("settled", "built"), ("built", "spooled"), ("spooled", "sent"), ("sent", "acked"),
          ("acked", "searchable")]


def stage_breakdown(got: list[tuple], traced: dict[str, dict[str, float]], master_id: str = "live-bench") -> dict:
    """Seconds spent in each stage, per job: {"settled->built": [...], ...}."""
    out: dict[str, list[float]] = {f"{a}->{b}": [] for a, b in STAGES}
    for _, settled, jid, found in got:
        t = dict(traced.get(f"{master_id}/{jid}", {}), settled=settled, searchable=found)
        if all(k in t for a, b in STAGES for k in (a, b)):
            for a, b in STAGES:
                out[f"{a}->{b}"].append(t[b] - t[a])
    return out




def pin(roots: list[int], cpus: set[int]) -> None:
    """Every thread of these process trees onto `cpus` (their later children and threads inherit it)."""
    for root in roots:
        for pid in tree_pids(root):
            for tid in benchlib.thread_ids(pid):
                try:
                    os.sched_setaffinity(tid, cpus)
                except OSError:  # the thread ended meanwhile
                    pass


def count_docs(url: str, pattern: str) -> int:
    try:
        with urllib.request.urlopen(f"{url}/{pattern}/_count?ignore_unavailable=true&allow_no_indices=true",
                                    timeout=30) as r:
            return json.loads(r.read())["count"]
    except urllib.error.HTTPError:
        return 0


def warm_engine(binary: str, lab: saltlab.SaltLab, url: str, work: Path, jobs: int) -> None:
    """Brings the engine's JIT to a steady state on salttap's own requests, as a long-running node is.

    A fresh JVM compiles the bulk and search paths while it serves the first few thousand
    requests: measured cold, the C1/C2 compiler threads were half of the engine's CPU per
    test.ping job. A `salttap run` reconciles the master's job cache (--backfill-jobs jobs,
    three documents each) into indices of its own, which are deleted after.
    """
    prefix = f"{PREFIX}warm"
    tap = Salttap(binary, lab, work, [url], reconcile=True, prefix=prefix)
    t0, deadline = time.monotonic(), time.monotonic() + 1800
    try:
        while count_docs(url, f"{prefix}-jobs-*") < jobs and time.monotonic() < deadline:
            if tap.proc.poll() is not None:
                raise RuntimeError(f"salttap run ended while warming the engine: {tap.log.read_text()[-2000:]}")
            time.sleep(1)
        fire_and_measure(lab, url, 20, 0.1, 0.02, prefix)  # the live path and the search, too
    finally:
        tap.stop()
    docs = count_docs(url, f"{prefix}-*")
    req = urllib.request.Request(f"{url}/{prefix}-*", method="DELETE")
    urllib.request.urlopen(req, timeout=60).read()
    log(f"engine warmed on {docs:,} documents of salttap traffic in {time.monotonic() - t0:.0f} s")








def stalled_reader(version: str, base: Path, a) -> dict:
    """A master of `version` with one bus subscriber stopped (SIGSTOP) while events flow.

    Two phases on the same master, the same load: first the subscriber keeps reading (the
    control: what the load alone costs), then it is stopped with SIGSTOP. Bounded: at most
    --stall-events events of --stall-event-bytes, at most --stall-seconds of load, and the
    load stops early once the master's processes grew by --stall-rss-limit MB; the
    subscriber is always resumed (SIGCONT) and killed. Measures the master's resident memory
    (its process tree) and test.ping round trips before, during and after.
    """
    lab = saltlab.SaltLab(version, base=base / f"stall-{version}")
    out = {"salt": version}
    try:
        lab.start()
        out["pings_before"] = pings(lab, 5)
        for mode in ("read", "stop"):
            out[mode] = _stall_phase(lab, mode, a)
            log(f"stall {version} {mode}: RSS {out[mode]['rss_before'] / 1e6:.0f} -> peak "
                f"{out[mode]['rss_peak'] / 1e6:.0f} -> {out[mode]['rss_after'] / 1e6:.0f} MB, test.ping during "
                f"{median(out[mode]['pings_during']):.2f} s (max {max(out[mode]['pings_during']):.1f})")
    finally:
        lab.stop()
    return out


def _stall_phase(lab: saltlab.SaltLab, mode: str, a) -> dict:
    py = str(lab.venv / "bin" / "python")
    conf = str(lab.master_conf_dir / "master")
    out: dict = {}
    sub = load = None
    try:
        rss0 = tree_rss(lab.master.proc.pid)
        sub = subprocess.Popen([py, "-c", SUBSCRIBER, conf, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, env=lab.env)
        if sub.stdout.readline().strip() != "subscribed":
            raise RuntimeError("the subscriber did not subscribe")
        if mode == "stop":
            os.kill(sub.pid, signal.SIGSTOP)
        load = subprocess.Popen([py, "-c", LOAD, conf, str(a.stall_events), str(a.stall_event_bytes),
                                 str(a.stall_rate)], stdout=subprocess.PIPE, text=True, env=lab.env)
        # test.ping round trips meanwhile, each bounded
        during: list[float] = []
        ping_thread = threading.Thread(target=lambda: during.extend(_bounded_pings(lab, 5, 60)), daemon=True)
        ping_thread.start()
        peak, samples, t0 = rss0, [], time.monotonic()
        limit = rss0 + a.stall_rss_limit * 1e6
        while load.poll() is None and time.monotonic() - t0 < a.stall_seconds:
            r = tree_rss(lab.master.proc.pid)
            peak = max(peak, r)
            samples.append((round(time.monotonic() - t0, 2), r))
            if r > limit:
                log(f"stall {mode}: master RSS over the limit; stopping the load")
                break
            time.sleep(0.5)
        out["load_seconds"] = round(time.monotonic() - t0, 1)
        out["load_finished"] = load.poll() is not None
        if load.poll() is None:
            load.kill()
        load.wait()
        ping_thread.join(timeout=400)
        out["pings_during"] = during or [float("nan")]
        out["rss_before"], out["rss_peak"] = rss0, peak
        out["rss_samples"] = samples
    finally:
        if sub is not None:
            try:
                os.kill(sub.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            sub.kill()
            sub.wait()
        if load is not None and load.poll() is None:
            load.kill()
            load.wait()
    time.sleep(2)
    out["rss_after"] = tree_rss(lab.master.proc.pid)
    out["pings_after"] = pings(lab, 5)
    return out


def _bounded_pings(lab: saltlab.SaltLab, n: int, timeout: float) -> list[float]:
    """Round trips of test.ping; one that has no answer within `timeout` counts as `timeout` (a stall)."""
    py = lab.venv / "bin" / "python"
    got = []
    for _ in range(n):
        t0 = time.monotonic()
        try:
            r = subprocess.run([str(py), "-c", DRIVER, str(lab.master_conf_dir / "master"), "ping", "1",
                                str(len(lab.minion_ids))], capture_output=True, text=True, env=lab.env,
                               timeout=timeout)
            got.append(json.loads(r.stdout.splitlines()[0])["seconds"] if r.returncode == 0 else timeout)
        except (subprocess.TimeoutExpired, IndexError):
            got.append(max(timeout, time.monotonic() - t0))
    return got


def stall_report(runs: list[dict]) -> None:
    print("\nOne bus subscriber while events flow: reading (the control) or stopped with SIGSTOP (a stalled "
          "reader):\n")
    print("| Salt | subscriber | master RSS before MB | peak MB | after (resumed, killed) MB | test.ping before s | "
          "during s (median / max) | after s | load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in runs:
        for mode, label in (("read", "reading"), ("stop", "SIGSTOPped")):
            p = r[mode]
            d = p["pings_during"]
            print(f"| {r['salt']} | {label} | {p['rss_before'] / 1e6:.0f} | {p['rss_peak'] / 1e6:.0f} | "
                  f"{p['rss_after'] / 1e6:.0f} | {median(r['pings_before']):.3f} | "
                  f"{median(d):.3f} / {max(d):.3f} | {median(p['pings_after']):.3f} | "
                  f"{'all fired' if p['load_finished'] else 'cut'} in {p['load_seconds']} s |")




def ratio_interval(runs: list[list[float]], base: list[list[float]], resamples: int = 4000) -> tuple[float, float]:
    """95 % bootstrap interval of median(runs) / median(base), pooled over rounds.

    Each resample draws the round trips again within each round, so a round's
    share of the pool stays as measured: the interval is that of the ping-to-ping
    noise, which dominates here (each minion forks a process per job).
    """
    rng = random.Random(20261203)

    def draw(rounds: list[list[float]]) -> float:
        return median([rng.choice(r) for r in rounds for _ in r])

    got = sorted(draw(runs) / draw(base) for _ in range(resamples))
    return got[int(0.025 * resamples)], got[int(0.975 * resamples) - 1]


def report(res: dict) -> None:
    pinned = (f"the engine pinned to CPU {res['engine_cpu']}, the rest on the other CPUs"
              if res.get("engine_cpu", -1) >= 0 else "all processes sharing every CPU")
    load = (f"; the machine's 1-minute load {res['load_start'][0]:.1f} at the start, {res['load_end'][0]:.1f} at "
            f"the end" if "load_start" in res else "")
    print(f"\nSalt {res['salt']}, OpenSearch {res['engine']}, {pinned}, {res['rounds']} rounds; "
          f"{res['jobs']} jobs per latency run, polled every {res['poll']} s; percentiles by nearest rank{load}\n")
    print("| condition | jobs | p50 s (median of rounds) | p99 s (median of rounds) | max s |")
    print("|---|---:|---:|---:|---:|")
    for cond, runs in res["latency"].items():
        print(f"| {cond} | {sum(len(r) for r in runs)} | {median(pct(r, 50) for r in runs):.2f} | "
              f"{median(pct(r, 99) for r in runs):.2f} | {max(max(r) for r in runs):.2f} |")
    if res.get("stages"):
        print("\nWhere the time goes, per job from settled to searchable (seconds, p50 / p99, median of rounds):\n")
        names = [f"{a}->{b}" for a, b in STAGES]
        print("| condition | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(names))
        for cond, runs in res["stages"].items():
            cells = []
            for nm in names:
                rs = [r[nm] for r in runs if r.get(nm)]
                cells.append(f"{median(pct(r, 50) for r in rs):.3f} / "
                             f"{median(pct(r, 99) for r in rs):.3f}" if rs else "-")
            print(f"| {cond} | " + " | ".join(cells) + " |")
    print(f"\n\"during a backfill\": `run` with a fresh state directory, reconciling the {res['backfill_jobs']:,} "
          f"earlier jobs of the master's cache; only the jobs that settled before its reconcile had read the whole cache count")
    if not res["pings"]:
        return
    if res.get("ping_block"):
        print(f"\nThe conditions alternated every {res['ping_block']} round trips: a round below is one such block.")
    print("\n| salttap | test.ping round trips | median s | p90 s | vs no salttap: median of per-round ratios "
          "| vs no salttap: ratio of pooled medians [95 % interval] |")
    print("|---|---:|---:|---:|---:|---:|")
    base = res["pings"]["no salttap"]
    for cond, runs in res["pings"].items():
        allv = [x for r in runs for x in r]
        ratios = [median(r) / median(b) for r, b in zip(runs, base)]
        lo, hi = ratio_interval(runs, base)
        pooled = median(allv) / median([x for r in base for x in r])
        print(f"| {cond} | {len(allv)} | {median(allv):.3f} | {pct(allv, 90):.3f} | "
              f"{median(ratios):.3f} | {pooled:.3f} [{lo:.3f}, {hi:.3f}] |")
    if res.get("ping_cpu"):
        print("\nCPU per test.ping job (ms, median of rounds): the master's processes, salttap, the engine\n")
        print("| salttap | master | salttap | engine |")
        print("|---|---:|---:|---:|")
        for cond, runs in res["ping_cpu"].items():
            cell = [f"{median(r[k] for r in runs) * 1000:.1f}" if all(k in r for r in runs) else "-"
                    for k in ("master", "salttap", "engine")]
            print(f"| {cond} | " + " | ".join(cell) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--interval", type=float, default=0.25, help="seconds between fired jobs")
    ap.add_argument("--poll", type=float, default=0.02, help="seconds between searches")
    ap.add_argument("--pings", type=int, default=30)
    ap.add_argument("--ping-block", type=int, default=0,
                    help="alternate the master-cost conditions every N round trips (0: each condition's --pings "
                         "at once); each block is a round of its own in the report, so the master's drift over "
                         "minutes falls on every condition alike")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--backfill-jobs", type=int, default=20000)
    ap.add_argument("--only", action="append", help="measure only these latency conditions (names as printed), no pings")
    ap.add_argument("--pings-only", action="store_true", help="only the test.ping round trips, no latency runs")
    ap.add_argument("--ping-condition", action="append",
                    help="measure only these master-cost conditions (names as printed; \"no salttap\" is always kept)")
    ap.add_argument("--low-refresh", default="250ms", help="refresh_interval of the low-latency condition")
    ap.add_argument("--engine-cpu", type=int, default=(os.cpu_count() or 1) - 1 if (os.cpu_count() or 1) >= 2 else -1,
                    help="the CPU the engine is pinned to, the others for the master, minions and salttap "
                         "(-1: all share every CPU)")
    ap.add_argument("--no-warm", dest="warm", action="store_false",
                    help="measure a cold engine (its JIT compiling meanwhile)")
    ap.add_argument("--salt", default="3008.5")
    ap.add_argument("--salttap", default=str(ROOT / "build" / "dev" / "salttap"))
    ap.add_argument("--out", default=str(ROOT / "build" / "bench-results"))
    ap.add_argument("--report", help="print the tables of an earlier results JSON and exit")
    ap.add_argument("--stall", action="append", metavar="SALT_VERSION",
                    help="only the stalled-reader experiment, on a master of this Salt version (repeatable)")
    ap.add_argument("--stall-events", type=int, default=4000)
    ap.add_argument("--stall-event-bytes", type=int, default=65536)
    ap.add_argument("--stall-rate", type=float, default=200, help="events a second")
    ap.add_argument("--stall-seconds", type=float, default=40)
    ap.add_argument("--stall-rss-limit", type=float, default=1500, help="MB of master growth that stops the load")
    a = ap.parse_args()
    if a.report:
        got = json.loads(Path(a.report).read_text())
        if "stall" in got:
            stall_report(got["stall"])
        else:
            report(got)
        return 0
    if a.stall:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        base = Path(tempfile.mkdtemp(prefix="live-bench-stall-"))
        runs = [stalled_reader(v, base, a) for v in a.stall]
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"live-stall-{stamp}.json"
        benchlib.finish(path, {"stall": runs}, lambda res: stall_report(res["stall"]))
        shutil.rmtree(base, ignore_errors=True)
        return 0
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = Path(tempfile.mkdtemp(prefix="live-bench-"))
    engine = Engine("opensearch", base / "opensearch", heap="1g")
    lab = saltlab.SaltLab(a.salt, base=base / "lab")
    res = {"salt": a.salt, "rounds": a.rounds, "jobs": a.jobs, "poll": a.poll, "started": stamp,
           "backfill_jobs": a.backfill_jobs, "latency": {}, "pings": {},
           "ping_block": a.ping_block if 0 < a.ping_block < a.pings else 0, "load_start": benchlib.loadavg()}
    dead_port = saltlab.free_ports(1)[0]
    try:
        engine.start()
        res["engine"] = engine.info["version"]["number"]
        lab.start()
        # the master's job cache gets --backfill-jobs older jobs: a `salttap run` with a fresh
        # state directory reconciles (backfills) all of them while it taps the live ones
        w = subprocess.run([str(lab.venv / "bin" / "python"), "-c", WRITE, str(lab.master_conf_dir / "master"),
                            str(a.backfill_jobs)], capture_output=True, text=True, env=lab.env)
        if w.returncode != 0:
            raise RuntimeError(f"writing the job cache: {w.stderr[-2000:]}")
        log(f"the master's job cache holds {a.backfill_jobs:,} earlier jobs")
        if a.engine_cpu >= 0:
            # The engine on a core of its own, as on a host of its own: what the master pays is
            # then salttap's share, not a search engine's that a production master does not host.
            rest = set(range(os.cpu_count())) - {a.engine_cpu}
            pin([engine.pid], {a.engine_cpu})
            pin([lab.master.proc.pid] + [m.proc.pid for m in lab.minions.values()], rest)
            os.sched_setaffinity(0, rest)  # salttap and the drivers this bench starts inherit it
            res["engine_cpu"] = a.engine_cpu
            log(f"engine pinned to CPU {a.engine_cpu}; master, minions and salttap to {sorted(rest)}")
        if a.warm:
            warm_engine(a.salttap, lab, engine.url, base / "warm-engine", a.backfill_jobs)
        # The low-latency condition writes to indices of its own, created with its refresh_interval.
        low = (f"{PREFIX}low", f"  refresh_interval: {a.low_refresh}\n")
        # ... and so does the one whose jobs index keeps the engine's own refresh (1 s).
        engine_refresh = (f"{PREFIX}engine", "  jobs_refresh_interval: null\n")
        for prefix, extra in ((PREFIX, ""), low, engine_refresh):
            warm = Salttap(a.salttap, lab, base / f"warm-up-{prefix}", [engine.url], prefix=prefix,
                           extra_indexer=extra)
            try:  # the daily indices are created here, not in the first measured run
                fire_and_measure(lab, engine.url, 5, a.interval, a.poll, prefix)  # results not kept
            finally:
                warm.stop()

        def measured_run(n: int, hosts: list[str], bulk: str, backfill: bool, work, index=(PREFIX, ""),
                         name: str = ""):
            tap = Salttap(a.salttap, lab, base / f"run-{n}", hosts, bulk, reconcile=backfill, prefix=index[0],
                          extra_indexer=index[1])
            try:
                cpu0 = {"master": tree_cpu(lab.master.proc.pid), "salttap": tree_cpu(tap.proc.pid),
                        "engine": tree_cpu(engine.pid)}
                got = work()
                if not got or not isinstance(got[0], tuple):  # ping round trips
                    res.setdefault("ping_cpu", {}).setdefault(name, []).append(
                        {"master": (tree_cpu(lab.master.proc.pid) - cpu0["master"]) / len(got),
                         "salttap": (tree_cpu(tap.proc.pid) - cpu0["salttap"]) / len(got),
                         "engine": (tree_cpu(engine.pid) - cpu0["engine"]) / len(got)})
                    return got
                if backfill:
                    # only the jobs that settled while the backfill was still reading count
                    done = tap.reconcile_done_at() or float("inf")
                    got = [g for g in got if g[1] < done]
                    if len(got) < 10:
                        log(f"only {len(got)} jobs settled during the backfill: raise --backfill-jobs")
                    if not got:
                        return []
                res.setdefault("stages", {}).setdefault(name, []).append(stage_breakdown(got, tap.stages()))
                return [g[0] for g in got]
            finally:
                tap.stop()

        latency_conds = [("defaults", "", False, (PREFIX, "")),
                         ("defaults, during a backfill", "", True, (PREFIX, "")),
                         ("jobs index at the engine's refresh (1 s)", "", False, engine_refresh),
                         (f"refresh_interval {a.low_refresh}", "", False, low)]
        if a.only:
            latency_conds = [c for c in latency_conds if c[0] in a.only]
        if a.pings_only:
            latency_conds = []
        ping_conds = [] if a.only else [("no salttap", None, False), ("attached", [engine.url], False),
                      ("attached, during a backfill", [engine.url], True),
                      ("attached, engine down", [f"http://127.0.0.1:{dead_port}"], False)]
        if a.ping_condition:
            ping_conds = [c for c in ping_conds if c[0] == "no salttap" or c[0] in a.ping_condition]
        n = 0
        for rnd in range(a.rounds):
            k = rnd % max(1, len(latency_conds))
            for name, bulk, backfill, index in latency_conds[k:] + latency_conds[:k]:
                n += 1
                lat = measured_run(n, [engine.url], bulk, backfill,
                                   lambda: fire_and_measure(lab, engine.url, a.jobs, a.interval, a.poll, index[0]),
                                   index, name)
                if not lat:
                    continue
                res["latency"].setdefault(name, []).append(lat)
                log(f"round {rnd + 1} {name}: p50 {pct(lat, 50):.2f} s, p99 {pct(lat, 99):.2f} s")
            block = a.ping_block if 0 < a.ping_block < a.pings else a.pings
            for b in range(max(1, a.pings // block)):
                k = (rnd + b) % max(1, len(ping_conds))
                for name, hosts, backfill in ping_conds[k:] + ping_conds[:k]:
                    n += 1
                    if hosts:
                        got = measured_run(n, hosts, "", backfill, lambda: pings(lab, block), name=name)
                    else:
                        m0, e0 = tree_cpu(lab.master.proc.pid), tree_cpu(engine.pid)
                        got = pings(lab, block)
                        res.setdefault("ping_cpu", {}).setdefault(name, []).append(
                            {"master": (tree_cpu(lab.master.proc.pid) - m0) / len(got), "salttap": 0.0,
                             "engine": (tree_cpu(engine.pid) - e0) / len(got)})
                    res["pings"].setdefault(name, []).append(got)
                    log(f"round {rnd + 1} block {b + 1} pings, {name}: median {median(got):.3f} s")
    finally:
        lab.stop()
        engine.stop()
    res["load_end"] = benchlib.loadavg()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"live-{stamp}.json"
    benchlib.finish(path, res, report)
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
