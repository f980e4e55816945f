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
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "lib"))
import benchlib  # noqa: E402
from benchlib import median  # noqa: E402

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


log = benchlib.logger("jobcache-bench")


def measured(cmd: list[str]) -> dict:
    """Runs cmd; wall seconds, CPU seconds and peak RSS of that process alone (wait4)."""
    m = benchlib.run_measured(cmd, capture=True)
    if m.returncode != 0:
        err = m.stderr.decode(errors="replace")
        raise RuntimeError(f"{' '.join(cmd[:3])} exited {m.returncode}: {err[-3000:]}")
    return {"seconds": m.seconds, "cpu_s": m.cpu_s, "user_s": m.user_s, "sys_s": m.sys_s,
            "rss_mib": m.max_rss_bytes / 1024 / 1024, "stdout": m.stdout.decode(errors="replace"),
            "stderr": m.stderr.decode(errors="replace")}


# salttap backfill's own summary (cli/internal/backfill_command.cpp, log_summary).
READ_LINE = re.compile(r"backfill: (\d+) jobs read of (\d+) directories .*?: (\d+) indexed \((\d+) still running\)")
DOCS_LINE = re.compile(r"backfill: (?:would write|spooled) (\d+) documents: (\d+) jobs, (\d+) returns, (\d+) states, "
                       r"(\d+) alerts")


def backfill_summary(stderr: str) -> dict:
    """What `salttap backfill` says it read and built, from its log lines."""
    read, docs = READ_LINE.search(stderr), DOCS_LINE.search(stderr)
    if not read or not docs:
        raise RuntimeError(f"salttap backfill printed no summary:\n{stderr[-3000:]}")
    return {"jobs_read": int(read[1]), "job_dirs": int(read[2]), "jobs_indexed": int(read[3]),
            "jobs_running": int(read[4]), "documents": int(docs[1]), "job_documents": int(docs[2]),
            "return_documents": int(docs[3])}


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


def write_jobs(py: Path, conf: Path, first: int, last: int, writers: int) -> tuple[float, str, int]:
    """Seconds taken, the oldest jid written and how many jobs Salt's writers say they wrote."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen([str(py), "-c", WRITE, str(conf), str(first), str(last), str(writers), str(k)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(writers)]
    jids, written = [], 0
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"local_cache writer exited {p.returncode}: {err[-3000:]}")
        got = json.loads(out.strip().splitlines()[-1])
        jids.append(got["first_jid"])
        written += got["jobs"]
    return time.perf_counter() - t0, min(j for j in jids if j), written


def backfill_phase(a, py: Path, salttap: str, base: Path, conf: Path, url: str, jobs: int) -> dict:
    """Backfill, backfill --dry-run and the salt.payload reader, --rounds times, rotating. `jobs`:
    how many Salt's writers wrote (two returns each); every way must say it read exactly those."""
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
                    benchlib.delete_indices(url, f"{PREFIX}-*")
                    subprocess.run([salttap, "setup", "--config", str(cfg)], check=True, stdout=subprocess.DEVNULL)
                extra = ["--dry-run"] if way == "dry_run" else []
                m = measured([salttap, "backfill", "--config", str(cfg), "--master-config", str(conf)] + since + extra)
                m["summary"] = backfill_summary(m["stderr"])
                m["jobs"], m["returns"] = m["summary"]["jobs_read"], m["summary"]["return_documents"]
                if m["summary"]["jobs_indexed"] != jobs or m["summary"]["job_documents"] < jobs:
                    raise RuntimeError(f"{way}: salttap says {m['summary']}, Salt wrote {jobs} jobs")
                if way == "backfill":
                    benchlib.refresh(url, f"{PREFIX}-*")
                    got = {"jobs": benchlib.count(url, f"{PREFIX}-jobs-*"),
                           "returns": benchlib.count(url, f"{PREFIX}-returns-*"),
                           "succeeded": benchlib.count(url, f"{PREFIX}-jobs-*", "q=status:succeeded")}
                    if got != {"jobs": jobs, "returns": 2 * jobs, "succeeded": jobs}:
                        raise RuntimeError(f"backfill of {jobs} jobs: the engine holds {got}; its log:\n"
                                           f"{m['stderr'][-3000:]}")
                shutil.rmtree(spool, ignore_errors=True)
            if m["jobs"] != jobs or m["returns"] != 2 * jobs:
                raise RuntimeError(f"{way} read {m['jobs']} jobs and {m['returns']} returns; Salt wrote {jobs} jobs "
                                   f"and {2 * jobs} returns")
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
            log(f"{label} {fun}: median {median(r['seconds'] for r in runs):.2f} s, "
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
        log(f"{label}: median {median(r['seconds'] for r in runs):.2f} s")
    return {"rows": rows}


def med(runs: list[dict], key: str) -> float:
    return median(r[key] for r in runs)


def cpu(runs: list[dict]) -> str:
    """Median CPU seconds, split in user + kernel where the run recorded it."""
    if all("sys_s" in r for r in runs):
        return f"{med(runs, 'cpu_s'):.1f} ({med(runs, 'user_s'):.1f} + {med(runs, 'sys_s'):.1f})"
    return f"{med(runs, 'cpu_s'):.1f}"


def report(res: dict) -> None:
    load = (f"; the machine's 1-minute load {res['load_start'][0]:.1f} at the start, {res['load_end'][0]:.1f} at the end"
            if "load_start" in res else "")
    print(f"\nSalt {res['salt']}, {res['rounds']} rounds, medians; OpenSearch {res['engine']}{load}; every way's "
          f"count of jobs and returns checked against what Salt wrote\n")
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
    path = benchlib.results_file(a.out, "jobcache")
    base = Path(tempfile.mkdtemp(prefix="jobcache-bench-"))
    engine = benchlib.Engine("opensearch", base / "opensearch", heap="1g")
    res = {"salt": a.salt, "rounds": a.rounds, "jobs": a.jobs, "started": path.stem.split("-", 1)[1],
           "load_start": benchlib.loadavg(), "backfill": []}
    try:
        engine.start()
        res["engine"] = engine.info["version"]["number"]
        conf = master_config(base, salttap_config(base / "salttap-backfill.yaml", engine.url, base / "spool"))
        written, salt_wrote, first_jid = 0, 0, ""
        for target in sorted({min(a.checkpoint, a.jobs), a.jobs}):
            took, jid, wrote = write_jobs(py, conf, written, target, a.writers)
            salt_wrote += wrote
            first_jid = first_jid or jid
            log(f"local_cache wrote jobs {written:,}..{target:,} in {took:.0f} s ({a.writers} writers); "
                f"{benchlib.load_text()}")
            res.setdefault("writes", []).append({"jobs": wrote, "seconds": took, "writers": a.writers})
            written = target
            res["backfill"].append({"jobs": salt_wrote, "load": benchlib.loadavg(),
                                    "runs": backfill_phase(a, py, a.salttap, base, conf, engine.url, salt_wrote)})
        res["tools"] = tools_phase(a, py, a.salttap, base, conf, engine.url, salt_wrote, first_jid)
    finally:
        engine.stop()
        shutil.rmtree(base, ignore_errors=True)
    res["load_end"] = benchlib.loadavg()
    benchlib.finish(path, res, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
