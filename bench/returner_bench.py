#!/usr/bin/env python3
"""The job-cache returner against Salt's local_cache, on a large job cache.

    .cache/venv/tools/bin/python bench/returner_bench.py [--jobs 100000] [--salt 3008.5] [--rounds 3]

1. Writes a job cache of --jobs jobs (two minions each, `test.ping` and
   `cmd.run` alternating) with Salt's own local_cache, through Salt's loader.
2. Starts a real OpenSearch (tests/engines) and indexes the same jobs with
   `salttap backfill` (build/dev/salttap).
3. Times `jobs.list_jobs` and `jobs.lookup_jid` (Salt's jobs runner,
   in-process through Salt's runner loader, one fresh process per call):
   - `local_cache`: the stock cache, every job on disk;
   - `salttap, cache full`: the returner while the master still has every job
     (get_jids merges both sources);
   - `salttap, cache purged`: the returner once the master forgot them all:
     everything from the indices, paged.
   Prints the medians of wall time, the ratio to local_cache and the peak RSS
   of the process that ran the runner.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "engines"))
from engine import Engine  # noqa: E402

WRITE = r"""
import json, sys, time, datetime
import salt.config, salt.loader
opts = salt.config.master_config(sys.argv[1])
n = int(sys.argv[2])
lc = salt.loader.returners(opts, {}, whitelist=["local_cache"])
base = datetime.datetime(2026, 11, 1, 0, 0, 0)
t0 = time.perf_counter()
for i in range(n):
    jid = (base + datetime.timedelta(milliseconds=37 * i)).strftime("%Y%m%d%H%M%S%f")
    fun, arg = ("test.ping", []) if i % 2 == 0 else ("cmd.run", [f"echo {i}"])
    lc["local_cache.prep_jid"](False, jid)
    lc["local_cache.save_load"](jid, {"jid": jid, "fun": fun, "arg": arg, "tgt": "*", "tgt_type": "glob",
                                      "user": "root", "ret": "", "kwargs": {}}, minions=["minion-a", "minion-b"])
    for m in ("minion-a", "minion-b"):
        lc["local_cache.returner"]({"jid": jid, "id": m, "fun": fun, "fun_args": arg, "retcode": 0,
                                    "success": True, "return": True if fun == "test.ping" else f"{i}",
                                    "_stamp": jid})
print(json.dumps({"jobs": n, "seconds": time.perf_counter() - t0}))
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
print(json.dumps({"seconds": took, "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "size": len(got) if hasattr(got, "__len__") else 0}))
"""


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


def ask(py: Path, conf: Path, overrides: dict, fun: str, args: list) -> dict:
    r = subprocess.run([str(py), "-c", ASK, str(conf), json.dumps(overrides), fun, json.dumps(args)],
                       capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{fun} failed: {r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--salt", default="3008.5")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--salttap", default=str(ROOT / "build" / "dev" / "salttap"))
    a = ap.parse_args()
    py = ROOT / ".cache" / "venv" / f"salt-{a.salt}" / "bin" / "python"
    base = Path(tempfile.mkdtemp(prefix="returner-bench-"))
    engine = Engine("opensearch", base / "opensearch", heap="1g")
    try:
        engine.start()
        salttap_conf = base / "salttap.yaml"
        salttap_conf.write_text(f"master_id: bench-master\nindexer:\n  hosts: [\"{engine.url}\"]\n"
                                f"  spool: {{dir: {base / 'spool'}}}\n  events: {{enabled: false}}\n")
        conf = master_config(base, salttap_conf)
        w = subprocess.run([str(py), "-c", WRITE, str(conf), str(a.jobs)], capture_output=True, text=True)
        if w.returncode != 0:
            raise RuntimeError(w.stderr[-3000:])
        written = json.loads(w.stdout.strip().splitlines()[-1])
        print(f"local_cache wrote {a.jobs} jobs in {written['seconds']:.0f} s", flush=True)
        t0 = time.perf_counter()
        b = subprocess.run([a.salttap, "backfill", "--config", str(salttap_conf), "--master-config", str(conf),
                            "--since", "2026-10-31T00:00:00", "--ship-timeout", "3600"],
                           capture_output=True, text=True)
        if b.returncode != 0:
            raise RuntimeError(f"backfill exited {b.returncode}: {b.stderr[-3000:]}")
        print(f"salttap backfill indexed them in {time.perf_counter() - t0:.0f} s", flush=True)
        urllib.request.urlopen(urllib.request.Request(f"{engine.url}/_refresh", method="POST"), timeout=300).read()
        jid = "20261101000010175000"  # the 275th job: 37 ms apart from midnight
        calls = [("jobs.list_jobs", []), ("jobs.lookup_jid", [jid])]
        rows = []
        for label, overrides, purge in (("local_cache", {"master_job_cache": "local_cache"}, False),
                                        ("salttap, cache full", {"master_job_cache": "salttap"}, False),
                                        ("salttap, cache purged", {"master_job_cache": "salttap"}, True)):
            if purge:
                shutil.move(str(base / "cache" / "jobs"), str(base / "jobs-away"))
                (base / "cache" / "jobs").mkdir()
            for fun, args in calls:
                runs = [ask(py, conf, overrides, fun, args) for _ in range(a.rounds)]
                rows.append((label, fun, statistics.median(r["seconds"] for r in runs),
                             max(r["rss_kb"] for r in runs), runs[0]["size"]))
        ref = {fun: secs for label, fun, secs, _, _ in rows if label == "local_cache"}
        print(f"\n{a.jobs} jobs, Salt {a.salt}, median of {a.rounds}\n")
        print("| job cache | call | seconds | vs local_cache | peak RSS MiB | entries |")
        print("|---|---|---:|---:|---:|---:|")
        for label, fun, secs, rss, size in rows:
            print(f"| {label} | `{fun}` | {secs:.2f} | {secs / ref[fun]:.2f}× | {rss / 1024:.0f} | {size} |")
    finally:
        engine.stop()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
