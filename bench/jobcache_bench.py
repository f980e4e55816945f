#!/usr/bin/env python3
"""A large master job cache: salttap's backfill and Salt's job tools on it.

    bench/run-jobcache-bench [--jobs 100000] [--salt 3008.5] [--rounds 3]

One job cache, written by Salt's own `local_cache` returner through Salt's loader
(two minions a job, `test.ping` and `cmd.run` alternating, jids in the last two
hours), measured at --checkpoint jobs (default 10,000) and again at --jobs:

1. Backfill (how fast and how lean salttap reads a job cache):
   - `salttap backfill` into a real OpenSearch node (tests/engines), a fresh
     spool and fresh indices each round: read, build, spool, ship;
   - `salttap backfill --dry-run`: read and build every document, write nothing;
   - a Python script that reads the same cache through `salt.payload` (every
     `jid`, `.load.p`, `.minions.p` and `return.p`), the floor of any Salt-side
     tool.
   Jobs/s, returns/s and the peak RSS of each process (wait4's ru_maxrss).
2. Salt's job tools (at --jobs only), Salt's `jobs` runner in-process through its
   runner loader, one fresh process per call as `salt-run` does:
   - `local_cache`: the stock cache, every job on disk;
   - `salttap, cache full`: the returner while the master still has every job;
   - `salttap, cache purged`: the returner once the master forgot them all
     (everything from the indices, paged);
   and `salttap jobs --since 1d` (default limit, then --limit 10000 as JSON).

Medians over --rounds; ratios against the alternative in the same run. Raw
figures in build/bench-results/jobcache-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "harness"))
from engine import Engine  # noqa: E402

PREFIX = "bench"  # index_prefix of every salttap run here

# Writes jobs [first, last) with step `step` starting at `offset` (one writer process per
# offset), as the master does: prep_jid makes a jid of the current time, then the load,
# then the returns, so every return lands within its job's timeout.
WRITE = r"""
import json, sys, time
import salt.config, salt.loader
opts = salt.config.master_config(sys.argv[1])
first, last, step, offset = map(int, sys.argv[2:6])
lc = salt.loader.returners(opts, {}, whitelist=["local_cache"])
t0 = time.perf_counter()
jids = []
for i in range(first + offset, last, step):
    jid = lc["local_cache.prep_jid"](False)
    fun, arg = ("test.ping", []) if i % 2 == 0 else ("cmd.run", [f"echo {i}"])
    lc["local_cache.save_load"](jid, {"jid": jid, "fun": fun, "arg": arg, "tgt": "*", "tgt_type": "glob",
                                      "user": "root", "ret": "", "kwargs": {}}, minions=["minion-a", "minion-b"])
    for m in ("minion-a", "minion-b"):
        lc["local_cache.returner"]({"jid": jid, "id": m, "fun": fun, "fun_args": arg, "retcode": 0,
                                    "success": True, "return": True if fun == "test.ping" else f"{i}"})
    jids.append(jid)
print(json.dumps({"jobs": len(jids), "first_jid": min(jids, default=""), "seconds": time.perf_counter() - t0}))
"""

# Reads every job of the cache as a Salt-side tool must: through salt.payload.
READ = r"""
import json, os, sys, time
import salt.payload
jobs_dir = sys.argv[1]
t0 = time.perf_counter()
jobs = returns = 0
for top in os.scandir(jobs_dir):
    for job in os.scandir(top.path):
        with open(os.path.join(job.path, "jid"), "rb") as fh:
            fh.read()
        with open(os.path.join(job.path, ".load.p"), "rb") as fh:
            load = salt.payload.load(fh)
        mp = os.path.join(job.path, ".minions.p")
        if os.path.exists(mp):
            with open(mp, "rb") as fh:
                salt.payload.load(fh)
        for entry in os.scandir(job.path):
            rp = os.path.join(entry.path, "return.p")
            if entry.is_dir() and os.path.exists(rp):
                with open(rp, "rb") as fh:
                    salt.payload.load(fh)
                returns += 1
        jobs += 1
print(json.dumps({"jobs": jobs, "returns": returns, "seconds": time.perf_counter() - t0}))
"""

ASK = r"""
import json, resource, sys, time
import salt.config, salt.loader
opts = salt.config.master_config(sys.argv[1])
opts.update(json.loads(sys.argv[2]))
fun, args = sys.argv[3], json.loads(sys.argv[4])
runners = salt.loader.runner(opts, utils=salt.loader.utils(opts))
t0 = time.perf_counter()
got = runners[fun](*args)
took = time.perf_counter() - t0
print(json.dumps({"seconds": took, "size": len(got) if hasattr(got, "__len__") else 0}))
"""


def log(msg: str) -> None:
    print(f"[jobcache-bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def measured(cmd: list[str]) -> dict:
    """Runs cmd; wall seconds, CPU seconds and peak RSS of that process alone (wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait4 reaps the child itself, so its pipes are drained by threads meanwhile
    chunks: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda s=s, k=k: chunks.__setitem__(k, s.read()), daemon=True)
               for s, k in ((proc.stdout, "out"), (proc.stderr, "err"))]
    for t in readers:
        t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    for t in readers:
        t.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = chunks.get("err", b"").decode(errors="replace")
        raise RuntimeError(f"{' '.join(cmd[:3])} exited {proc.returncode}: {err[-3000:]}")
    return {"seconds": seconds, "cpu_s": usage.ru_utime + usage.ru_stime, "user_s": usage.ru_utime,
            "sys_s": usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "stdout": chunks.get("out", b"").decode(errors="replace"),
            "stderr": chunks.get("err", b"").decode(errors="replace")}


def master_config(base: Path, salttap_conf: Path) -> Path:
    conf = base / "master"
    root = base / "root"
    conf.write_text(json.dumps({
        # every path under root_dir, or Salt puts root_dir in front of it
        "root_dir": str(base), "cachedir": str(base / "cache"), "pki_dir": str(root / "pki"),
        "sock_dir": str(root / "s"), "log_file": str(root / "master.log"), "id": "bench-master",
        "user": os.environ.get("USER", "root"), "returner_dirs": [str(ROOT / "deploy" / "salt" / "returners")],
        "salttap": {"config": str(salttap_conf)}, "keep_jobs_seconds": 0, "log_level_logfile": "warning",
    }) + "\n")
    return conf


def salttap_config(path: Path, url: str, spool: Path) -> Path:
    path.write_text(f"master_id: bench-master\nindexer:\n  hosts: [\"{url}\"]\n"
                    f"  index_prefix: {PREFIX}\n  spool: {{dir: {spool}}}\n  events: {{enabled: false}}\n")
    return path


def write_jobs(py: Path, conf: Path, first: int, last: int, writers: int) -> tuple[float, str]:
    """Seconds taken and the oldest jid written."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen([str(py), "-c", WRITE, str(conf), str(first), str(last), str(writers), str(k)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(writers)]
    jids = []
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"local_cache writer exited {p.returncode}: {err[-3000:]}")
        jids.append(json.loads(out.strip().splitlines()[-1])["first_jid"])
    return time.perf_counter() - t0, min(j for j in jids if j)


def delete_indices(url: str) -> None:
    req = urllib.request.Request(f"{url}/{PREFIX}-*?expand_wildcards=all", method="DELETE")
    urllib.request.urlopen(req, timeout=300).read()


def refresh(url: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{url}/_refresh", method="POST"), timeout=300).read()


def count(url: str, kind: str, query: str = "") -> int:
    with urllib.request.urlopen(f"{url}/{PREFIX}-{kind}-*/_count{query}", timeout=300) as r:
        return json.loads(r.read())["count"]


def backfill_phase(a, py: Path, salttap: str, base: Path, conf: Path, url: str, jobs: int) -> dict:
    """Backfill, backfill --dry-run and the salt.payload reader, --rounds times, rotating."""
    since = ["--since", "7d", "--ship-timeout", "3600"]
    ways = ["backfill", "dry_run", "salt_payload"]
    runs = {w: [] for w in ways}
    for rnd in range(a.rounds):
        for way in ways[rnd % 3:] + ways[:rnd % 3]:
            if way == "salt_payload":
                m = measured([str(py), "-c", READ, str(base / "cache" / "jobs")])
                got = json.loads(m["stdout"].strip().splitlines()[-1])
                m["jobs"], m["returns"] = got["jobs"], got["returns"]
            else:
                spool = base / f"spool-{way}-{rnd}"
                cfg = salttap_config(base / f"salttap-{way}.yaml", url, spool)
                if way == "backfill":
                    delete_indices(url)
                    subprocess.run([salttap, "setup", "--config", str(cfg)], check=True, stdout=subprocess.DEVNULL)
                extra = ["--dry-run"] if way == "dry_run" else []
                m = measured([salttap, "backfill", "--config", str(cfg), "--master-config", str(conf)] + since + extra)
                m["jobs"], m["returns"] = jobs, 2 * jobs
                if way == "backfill":
                    refresh(url)
                    got = {"jobs": count(url, "jobs"), "returns": count(url, "returns"),
                           "succeeded": count(url, "jobs", "?q=status:succeeded")}
                    if got != {"jobs": jobs, "returns": 2 * jobs, "succeeded": jobs}:
                        raise RuntimeError(f"backfill of {jobs} jobs: the engine holds {got}; its log:\n"
                                           f"{m['stderr'][-3000:]}")
                shutil.rmtree(spool, ignore_errors=True)
            if m["jobs"] != jobs:
                raise RuntimeError(f"{way} read {m['jobs']} jobs, the cache holds {jobs}")
            del m["stdout"], m["stderr"]
            runs[way].append(m)
            log(f"{jobs} jobs, round {rnd + 1}/{a.rounds} {way}: {m['seconds']:.1f} s, "
                f"{jobs / m['seconds']:,.0f} jobs/s, CPU {m['cpu_s']:.1f} s, RSS {m['rss_mib']:.0f} MiB")
    return runs


def tools_phase(a, py: Path, salttap: str, base: Path, conf: Path, url: str, jobs: int, first_jid: str) -> dict:
    cfg = base / "salttap-backfill.yaml"
    calls = [("jobs.list_jobs", []), ("jobs.lookup_jid", [first_jid])]
    rows = []
    for label, overrides, purge in (("local_cache", {"master_job_cache": "local_cache"}, False),
                                    ("salttap, cache full", {"master_job_cache": "salttap"}, False),
                                    ("salttap, cache purged", {"master_job_cache": "salttap"}, True)):
        if purge:
            shutil.move(str(base / "cache" / "jobs"), str(base / "jobs-away"))
            (base / "cache" / "jobs").mkdir()
        for fun, args in calls:
            runs = []
            for _ in range(a.rounds):
                m = measured([str(py), "-c", ASK, str(conf), json.dumps(overrides), fun, json.dumps(args)])
                m["entries"] = json.loads(m.pop("stdout").strip().splitlines()[-1])["size"]
                del m["stderr"]
                runs.append(m)
            rows.append({"cache": label, "call": f"jobs.{fun.split('.')[1]}", "runs": runs})
            log(f"{label} {fun}: median {statistics.median(r['seconds'] for r in runs):.2f} s, "
                f"{runs[0]['entries']} entries")
    for label, extra in (("salttap jobs --since 1d", []),
                         ("salttap jobs --since 1d --limit 10000 --format json", ["--limit", "10000", "--format", "json"])):
        runs = []
        for _ in range(a.rounds):
            m = measured([salttap, "jobs", "--config", str(cfg), "--since", "1d"] + extra)
            out = m.pop("stdout")
            del m["stderr"]
            m["entries"] = len(out.splitlines()) if extra else None
            runs.append(m)
        rows.append({"cache": "salttap CLI", "call": label, "runs": runs})
        log(f"{label}: median {statistics.median(r['seconds'] for r in runs):.2f} s")
    return {"rows": rows}


def med(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def cpu(runs: list[dict]) -> str:
    """Median CPU seconds, split in user + kernel where the run recorded it."""
    if all("sys_s" in r for r in runs):
        return f"{med(runs, 'cpu_s'):.1f} ({med(runs, 'user_s'):.1f} + {med(runs, 'sys_s'):.1f})"
    return f"{med(runs, 'cpu_s'):.1f}"


def report(res: dict) -> None:
    print(f"\nSalt {res['salt']}, {res['rounds']} rounds, medians; OpenSearch {res['engine']}\n")
    print("### Backfill\n")
    # CPU split in user and kernel time: reading the files costs the kernel the same
    # for every reader, which bounds how far ahead of salt.payload any reader can be.
    print("| jobs in the cache | way | seconds | jobs/s | returns/s | vs salt.payload | CPU s (user + kernel) "
          "| peak RSS MiB |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    names = {"backfill": "`salttap backfill` (read, build, spool, ship)",
             "dry_run": "`salttap backfill --dry-run` (read, build)",
             "salt_payload": "Python through `salt.payload` (read)"}
    for phase in res["backfill"]:
        runs = phase["runs"]
        ref = med(runs["salt_payload"], "seconds")
        for way in ("backfill", "dry_run", "salt_payload"):
            s = med(runs[way], "seconds")
            print(f"| {phase['jobs']:,} | {names[way]} | {s:.1f} | {phase['jobs'] / s:,.0f} | "
                  f"{2 * phase['jobs'] / s:,.0f} | {ref / s:.1f}× | {cpu(runs[way])} | "
                  f"{max(r['rss_mib'] for r in runs[way]):.0f} |")
    tools = res.get("tools")
    if tools:
        print(f"\n### Salt's job tools at {res['jobs']:,} jobs\n")
        print("| job cache | call | seconds | vs local_cache | peak RSS MiB | entries |")
        print("|---|---|---:|---:|---:|---:|")
        ref = {row["call"]: med(row["runs"], "seconds") for row in tools["rows"] if row["cache"] == "local_cache"}
        for row in tools["rows"]:
            s = med(row["runs"], "seconds")
            vs = f"{s / ref[row['call']]:.2f}×" if row["call"] in ref else ""
            entries = row["runs"][0]["entries"]
            print(f"| {row['cache']} | `{row['call']}` | {s:.2f} | {vs} | "
                  f"{max(r['rss_mib'] for r in row['runs']):.0f} | {'' if entries is None else entries} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--checkpoint", type=int, default=10_000, help="also measure the backfill at this many jobs")
    ap.add_argument("--salt", default="3008.5")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--writers", type=int, default=os.cpu_count() or 2, help="local_cache writer processes")
    ap.add_argument("--salttap", default=str(ROOT / "build" / "dev" / "salttap"))
    ap.add_argument("--out", default=str(ROOT / "build" / "bench-results"))
    ap.add_argument("--report", help="print the tables of an earlier results JSON and exit")
    a = ap.parse_args()
    if a.report:
        report(json.loads(Path(a.report).read_text()))
        return 0
    py = ROOT / ".cache" / "venv" / f"salt-{a.salt}" / "bin" / "python"
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = Path(tempfile.mkdtemp(prefix="jobcache-bench-"))
    engine = Engine("opensearch", base / "opensearch", heap="1g")
    res = {"salt": a.salt, "rounds": a.rounds, "jobs": a.jobs, "started": stamp, "backfill": []}
    try:
        engine.start()
        res["engine"] = engine.info["version"]["number"]
        conf = master_config(base, salttap_config(base / "salttap-backfill.yaml", engine.url, base / "spool"))
        written, first_jid = 0, ""
        for target in sorted({min(a.checkpoint, a.jobs), a.jobs}):
            took, jid = write_jobs(py, conf, written, target, a.writers)
            first_jid = first_jid or jid
            log(f"local_cache wrote jobs {written:,}..{target:,} in {took:.0f} s ({a.writers} writers)")
            res.setdefault("writes", []).append({"jobs": target - written, "seconds": took, "writers": a.writers})
            written = target
            res["backfill"].append({"jobs": target, "runs": backfill_phase(a, py, a.salttap, base, conf,
                                                                          engine.url, target)})
        res["tools"] = tools_phase(a, py, a.salttap, base, conf, engine.url, a.jobs, first_jid)
    finally:
        engine.stop()
        shutil.rmtree(base, ignore_errors=True)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"jobcache-{stamp}.json"
    path.write_text(json.dumps(res, indent=1) + "\n")
    report(res)
    print(f"\nraw results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
