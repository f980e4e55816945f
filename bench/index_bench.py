#!/usr/bin/env python3
"""Indexing benchmark: the same documents into the same local OpenSearch node, three ways.

  salttap          `salttap replay STREAM --ship`: disk spool -> index setup -> bulk
                   shipper (libcurl, gzip, `in_flight` requests in flight), timed from
                   start to exit (everything acknowledged by the engine)
  curl             ready-made `_bulk` bodies of the same documents, cut like salttap's
                   batches (max_docs / max_bytes), gzipped like salttap (level 1) when
                   salttap gzips, posted by `curl --data-binary @body` through
                   `xargs -P <in_flight>`: the engine's practical limit
  one-per-request  one HTTP request per document over one keep-alive connection
                   (Python http.client, like the returner's elasticsearch-py), on an
                   evenly spread subset; its rate is extrapolated to the whole set

Informational: the returner-shaped way (what salt/returners/elasticsearch_return.py sends
per return: two new connections, GET / twice, HEAD index, the document) and, with
--ship-only, salttap's shipper alone (spool filled beforehand, replay of an empty file).

The documents are `salttap replay STREAM --output documents` (the exact bulk NDJSON
salttap spools). Every way writes into the same `<prefix>-*` indices, typed by the same
templates (`salttap setup`); the indices are deleted before each way and the engine's
document count is checked after `_refresh` (unique _index/_id pairs: a job document has
several versions). --warmup unmeasured passes first (the engine's JIT); the order of the
ways rotates per round; medians over rounds. Client CPU (wait4 rusage) and the engine
JVM's CPU (/proc/PID/stat) are recorded per way.

Then, with the engine stopped (hosts: a port nobody listens on), `salttap replay --ship`
of the same stream: VmRSS and the spool's size every --sample-interval seconds; VmRSS at
25/50/75/100 % of the spool's growth must not grow more than --rss-growth-limit. Judged
with the correlator in steady state (late_grace_seconds: 2; the stream is only ~16 s of
bus time); the default correlator and a run without any indexer are shown beside it
(MEMORY_RUNS).

Prints a markdown table; raw figures go to OUT/index-<UTC time>.json.
`--report FILE.json` prints the tables of an earlier run.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import gzip
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "harness"))


# ---------------------------------------------------------------- engine HTTP

def request(method: str, url: str, body: bytes | None = None, headers: dict | None = None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def http_json(method: str, url: str, body=None):
    data = json.dumps(body).encode() if body is not None else None
    status, raw = request(method, url, data, {"Content-Type": "application/json"} if data else None)
    if status >= 300:
        raise RuntimeError(f"{method} {url}: {status} {raw[:300]!r}")
    return json.loads(raw) if raw else None


def delete_indices(url: str, prefix: str) -> None:
    rows = http_json("GET", f"{url}/_cat/indices/{prefix}-*?format=json&h=index&expand_wildcards=all")
    names = [r["index"] for r in rows]
    for i in range(0, len(names), 50):
        http_json("DELETE", f"{url}/{','.join(names[i:i + 50])}")


def engine_counts(url: str, prefix: str, kinds) -> dict:
    http_json("POST", f"{url}/{prefix}-*/_refresh?expand_wildcards=all&ignore_unavailable=true")
    out = {}
    for kind in list(kinds) + ["deadletter"]:
        status, raw = request("GET", f"{url}/{prefix}-{kind}-*/_count?ignore_unavailable=true&allow_no_indices=true")
        out[kind] = json.loads(raw)["count"] if status == 200 else 0
    return out


# ---------------------------------------------------------------- documents

def read_docs(path: Path):
    """[(action dict, payload bytes)] from bulk NDJSON (action line + source line)."""
    docs = []
    with open(path, "rb") as fh:
        while True:
            action = fh.readline()
            if not action:
                break
            source = fh.readline()
            docs.append((json.loads(action), action + source))
    return docs


def kind_of(action: dict) -> str:
    meta = next(iter(action.values()))
    return meta["_index"][len(OPTS.prefix) + 1:].split("-")[0]


def expected_counts(docs) -> dict:
    ids = collections.defaultdict(set)
    for action, _ in docs:
        meta = next(iter(action.values()))
        ids[kind_of(action)].add((meta["_index"], meta["_id"]))
    return {k: len(v) for k, v in sorted(ids.items())}


def write_bodies(docs, out: Path, max_docs: int, max_bytes: int, gz: bool, level: int) -> list[Path]:
    """Cut the documents into `_bulk` bodies the way the shipper batches records
    (indexer/bulk_shipper.cpp): a record joins the batch unless the batch already has
    max_docs records or the record would take it past max_bytes (a lone record may)."""
    out.mkdir(parents=True)
    bodies, batch, size = [], [], 0

    def emit():
        body = b"".join(batch)
        path = out / f"{len(bodies):06d}.ndjson{'.gz' if gz else ''}"
        path.write_bytes(gzip.compress(body, compresslevel=level, mtime=0) if gz else body)
        bodies.append(path)

    for _, payload in docs:
        if batch and (len(batch) >= max_docs or size + len(payload) > max_bytes):
            emit()
            batch, size = [], 0
        batch.append(payload)
        size += len(payload)
    if batch:
        emit()
    return bodies


# ---------------------------------------------------------------- the three ways

def timed(cmd: list[str], stdout=subprocess.DEVNULL, stderr=None) -> tuple[float, float, int]:
    """Runs cmd; (wall seconds, CPU seconds of it and its reaped descendants, exit code)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr)
    _, status, ru = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return seconds, ru.ru_utime + ru.ru_stime, proc.returncode


def process_cpu(pid: int) -> float:
    """utime + stime of a running process (the engine's JVM), seconds."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_salttap(salttap: str, stream: str, config: Path, log: Path) -> tuple[float, float]:
    with open(log, "wb") as err:
        seconds, cpu, rc = timed([salttap, "replay", stream, "--ship", "--ship-timeout", "1800",
                                  "--config", str(config)], stderr=err)
    if rc != 0:
        raise RuntimeError(f"salttap replay --ship exited {rc}; see {log}")
    return seconds, cpu


def run_build_only(salttap: str, stream: str, config: Path) -> float:
    seconds, cpu, rc = timed([salttap, "replay", stream, "--output", "documents", "--config", str(config)])
    if rc != 0:
        raise RuntimeError(f"salttap replay --output documents exited {rc}")
    return seconds


def run_curl(url: str, bodies: list[Path], work: Path, parallel: int, gz: bool) -> tuple[float, float]:
    listing = work / "bodies.list"
    listing.write_text("".join(f"{p}\n" for p in bodies))
    resp = work / "responses"
    shutil.rmtree(resp, ignore_errors=True)
    resp.mkdir()
    headers = ["-H", "Content-Type: application/x-ndjson"] + (["-H", "Content-Encoding: gzip"] if gz else [])
    cmd = ["xargs", "-a", str(listing), "-P", str(parallel), "-I{}", "sh", "-c",
           f"curl -sS -o {resp}/$(basename {{}}).json -w '%{{http_code}}\\n' "
           + " ".join(f"'{h}'" for h in headers) + f" --data-binary @{{}} {url}/_bulk"]
    codes_file = work / "http-codes.txt"
    with open(codes_file, "wb") as out:
        seconds, cpu, rc = timed(cmd, stdout=out)
    if rc != 0:
        raise RuntimeError(f"xargs curl exited {rc}")
    codes = collections.Counter(codes_file.read_text().split())
    if set(codes) != {"200"}:
        raise RuntimeError(f"curl: HTTP codes {dict(codes)}")
    bad = collections.Counter()
    for f in resp.iterdir():
        r = json.loads(f.read_bytes())
        if r.get("errors"):
            for item in r["items"]:
                st = next(iter(item.values()))["status"]
                if st not in (200, 201, 409):
                    bad[st] += 1
    if bad:
        raise RuntimeError(f"curl: item errors {dict(bad)}")
    return seconds, cpu


def doc_request(action: dict, payload: bytes) -> tuple[str, bytes]:
    """The single-document request for a bulk item: PUT <index>/_create/<id>, or
    PUT <index>/_doc/<id> with the item's external version."""
    op, meta = next(iter(action.items()))
    index, doc_id = meta["_index"], urllib.parse.quote(meta["_id"], safe="")
    if op == "create":
        path = f"/{index}/_create/{doc_id}"
    else:
        path = f"/{index}/_doc/{doc_id}"
        if "version" in meta:
            path += f"?version={meta['version']}&version_type={meta.get('version_type', 'external')}"
    return path, payload[payload.index(b"\n") + 1:]


def run_one_per_request(url: str, docs, returner_shaped: bool = False) -> tuple[float, float]:
    """One request per document over one keep-alive connection. returner_shaped: what
    salt/returners/elasticsearch_return.py does per return through salt/modules/elasticsearch.py
    (each call builds a new client, i.e. a new connection, and calls es.info()):
    _ensure_index -> GET /, HEAD /<index>; document_create -> GET /, then the document."""
    u = urllib.parse.urlsplit(url)
    headers = {"Content-Type": "application/json"}
    bad = collections.Counter()

    def call(conn, method, path, body=None):
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        return r.status

    t0, c0 = time.perf_counter(), time.process_time()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    for action, payload in docs:
        path, source = doc_request(action, payload)
        if returner_shaped:
            index = path.split("/")[1]
            for follow_up in (("HEAD", f"/{index}"), None):  # index_exists, then document_create
                conn.close()
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
                call(conn, "GET", "/")
                if follow_up:
                    call(conn, *follow_up)
        status = call(conn, "PUT", path, source)
        if status not in (200, 201, 409):
            bad[status] += 1
    conn.close()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    if bad:
        raise RuntimeError(f"one-per-request: HTTP codes {dict(bad)}")
    return seconds, cpu


# ---------------------------------------------------------------- engine down: memory

def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def proc_status(pid: int) -> dict:
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[k] = int(v.split()[0]) * 1024
    return out


def dir_bytes(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(dirpath, f)).st_size
            except FileNotFoundError:
                pass
    return total


def read_chars(pid: int) -> int:
    with open(f"/proc/{pid}/io") as fh:
        for line in fh:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def memory_run(cmd: list[str], log: Path, interval: float, spool: Path | None) -> dict:
    """Samples VmRSS (and RssAnon/RssFile) every `interval` s while `cmd` runs.
    Progress: the spool's size (with `spool`: `replay --ship`, stopped by SIGTERM a few
    samples after it logged that everything is spooled), else the bytes it has read."""
    samples = []
    t0 = time.perf_counter()
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    spooled_at = None
    try:
        while proc.poll() is None:
            try:
                st = proc_status(proc.pid)
                progress = dir_bytes(spool) if spool else read_chars(proc.pid)
            except (FileNotFoundError, ProcessLookupError):
                break
            samples.append({"t": round(time.perf_counter() - t0, 3), "progress": progress, **st})
            if spool and spooled_at is None and b"documents spooled" in log.read_bytes():
                spooled_at = samples[-1]["t"]
            if spooled_at is not None and samples[-1]["t"] - spooled_at >= 4 * interval:
                break  # everything spooled; a few samples after, then stop it
            time.sleep(interval)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if spool and spooled_at is None:
        raise RuntimeError(f"engine-down run: never logged that everything is spooled ({log})")
    if len(samples) < 4:
        raise RuntimeError(f"memory run: only {len(samples)} samples; lower --sample-interval ({log})")
    return {"cmd": cmd, "samples": samples, "spooled_at": spooled_at, "exit_code": proc.returncode,
            "points": memory_points(samples)}


def memory_points(samples) -> list[dict]:
    final = max(s["progress"] for s in samples)
    points = []
    for pct in (25, 50, 75, 100):
        s = next(s for s in samples if s["progress"] >= final * pct / 100)
        points.append({"pct": pct, **s})
    return points


def rss_growth(run: dict) -> float:
    p = {x["pct"]: x for x in run["points"]}
    return p[100]["VmRSS"] / p[25]["VmRSS"] - 1


# ---------------------------------------------------------------- report

def report(res: dict) -> bool:
    ok, rows = True, []
    if res["rounds"]:
        s = res["settings"]
        med = {w: statistics.median(r[w]["seconds"] for r in res["rounds"]) for w in ("salttap", "curl", "one_per_request")}
        build = statistics.median(r["build_only_seconds"] for r in res["rounds"])
        n, n_one = res["documents"]["total"], res["documents"]["one_per_request_subset"]
        rate = {"salttap": n / med["salttap"], "curl": n / med["curl"], "one_per_request": n_one / med["one_per_request"]}
        mb = res["documents"]["bytes"] / 1e6
        print(f"\n{n:,} documents ({res['documents']['by_kind'].get('returns', 0):,} returns; "
              f"{mb:,.0f} MB of bulk NDJSON) from {res['stream']}; OpenSearch {res['engine']['version']} "
              f"(heap {s['heap']}), {len(res['rounds'])} rounds; bulk: max_docs {s['max_docs']}, max_bytes "
              f"{s['max_bytes']}, in_flight {s['in_flight']}, gzip {'on (level 1)' if s['gzip'] else 'off'}, "
              f"spool fsync {s['fsync']}\n")
        def cpu(way, key):
            vals = [r[way][key] for r in res["rounds"] if key in r[way]]
            return f"{statistics.median(vals):.1f}" if vals else "-"

        print("| way | docs | seconds (median) | docs/s (median) | MB/s | salttap vs this way | client CPU s | engine CPU s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        print(f"| salttap replay --ship (build + spool + ship) | {n:,} | {med['salttap']:.1f} | {rate['salttap']:,.0f} "
              f"| {mb / med['salttap']:.1f} | 1.00x | {cpu('salttap', 'client_cpu_s')} | {cpu('salttap', 'engine_cpu_s')} |")
        print(f"| curl, ready-made _bulk bodies, xargs -P {s['in_flight']} | {n:,} | {med['curl']:.1f} | "
              f"{rate['curl']:,.0f} | {mb / med['curl']:.1f} | {rate['salttap'] / rate['curl']:.2f}x | "
              f"{cpu('curl', 'client_cpu_s')} | {cpu('curl', 'engine_cpu_s')} |")
        one_mb = res["documents"]["one_per_request_bytes"] / 1e6
        print(f"| one request per document, keep-alive (subset, extrapolated) | {n_one:,} of {n:,} | "
              f"{med['one_per_request']:.1f} ({n / rate['one_per_request']:,.0f} for all) | {rate['one_per_request']:,.0f} | "
              f"{one_mb / med['one_per_request']:.1f} | {rate['salttap'] / rate['one_per_request']:.1f}x | "
              f"{cpu('one_per_request', 'client_cpu_s')} | {cpu('one_per_request', 'engine_cpu_s')} |")
        if all("ship_only" in r for r in res["rounds"]):
            so = statistics.median(r["ship_only"]["seconds"] for r in res["rounds"])
            print(f"| (diagnostic) salttap's shipper alone: spool filled beforehand, replay of an empty file --ship | "
                  f"{n:,} | {so:.1f} | {n / so:,.0f} | {mb / so:.1f} | {rate['salttap'] / (n / so):.2f}x | "
                  f"{cpu('ship_only', 'client_cpu_s')} | {cpu('ship_only', 'engine_cpu_s')} |")
        if all("returner" in r for r in res["rounds"]):
            n_ret = res["documents"]["returner_subset"]
            ret = statistics.median(r["returner"]["seconds"] for r in res["rounds"])
            print(f"| (info) Salt's returner as written: per document 2 new connections, GET / twice, HEAD index, "
                  f"then the document (subset, extrapolated) | {n_ret:,} of {n:,} | {ret:.1f} "
                  f"({n / (n_ret / ret):,.0f} for all) | {n_ret / ret:,.0f} | | {rate['salttap'] / (n_ret / ret):.0f}x | "
                  f"{cpu('returner', 'client_cpu_s')} | {cpu('returner', 'engine_cpu_s')} |")
        if all("baseline" in r for r in res["rounds"]):
            bl = statistics.median(r["baseline"]["seconds"] for r in res["rounds"])
            print(f"| salttap, baseline build ({s['baseline']}) | {n:,} | {bl:.1f} | {n / bl:,.0f} | {mb / bl:.1f} | "
                  f"{rate['salttap'] / (n / bl):.2f}x | {cpu('baseline', 'client_cpu_s')} | "
                  f"{cpu('baseline', 'engine_cpu_s')} |")
        print(f"| salttap document building only (--output documents > /dev/null) | {n:,} | {build:.1f} | "
              f"{n / build:,.0f} | {mb / build:.1f} | | | |")
        def per_1k(way):
            vals = [r[way]["client_cpu_s"] / n * 1e6 for r in res["rounds"] if "client_cpu_s" in r.get(way, {})]
            return f"{statistics.median(vals):.0f}" if vals else "-"

        print("\nClient CPU per 1,000 documents (user + system, ms, median): "
              f"salttap {per_1k('salttap')} (building the documents alone takes "
              f"{statistics.median(r['build_only_seconds'] for r in res['rounds']) / n * 1e6:.0f} ms of wall time), "
              + (f"salttap's shipper alone {per_1k('ship_only')}, " if all("ship_only" in r for r in res["rounds"]) else "")
              + f"curl {per_1k('curl')}")
        per_round = ", ".join(f"{n / r['salttap']['seconds'] / (n / r['curl']['seconds']):.2f}" for r in res["rounds"])
        ratios = [r["curl"]["seconds"] / r["salttap"]["seconds"] for r in res["rounds"]]
        print(f"\nsalttap/curl rate per round (order rotates): {per_round}; median {statistics.median(ratios):.2f}")
        if all("baseline" in r for r in res["rounds"]):
            vs_base = [r["baseline"]["seconds"] / r["salttap"]["seconds"] for r in res["rounds"]]
            base_curl = [r["curl"]["seconds"] / r["baseline"]["seconds"] for r in res["rounds"]]
            print(f"salttap/baseline rate per round: {', '.join(f'{x:.2f}' for x in vs_base)}; median "
                  f"{statistics.median(vs_base):.2f}; baseline/curl per round: "
                  f"{', '.join(f'{x:.2f}' for x in base_curl)}")

        r1 = rate["salttap"] / rate["curl"]
        rows.append(("salttap >= 95% of the curl rate", f"{r1 * 100:.0f}%", r1 >= 0.95))
        if all("ship_only" in r for r in res["rounds"]):
            so = n / statistics.median(r["ship_only"]["seconds"] for r in res["rounds"])
            rows.append(("(info) salttap's shipper alone >= 95% of the curl rate", f"{so / rate['curl'] * 100:.0f}%",
                         True))
        r2 = rate["salttap"] / rate["one_per_request"]
        rows.append(("salttap >= 20x the one-per-request rate", f"{r2:.1f}x", r2 >= 20))
    mem = res.get("memory")
    if mem:
        steady = mem["runs"]["steady"]
        p = {x["pct"]: x for x in steady["points"]}
        g = rss_growth(steady)
        rows.append((f"engine down: VmRSS grows <= {mem['limit'] * 100:.0f}% from 25% to 100% of the spool's growth "
                     f"(correlator steady state)",
                     f"{g * 100:+.1f}% ({p[25]['VmRSS'] / 1e6:.1f} -> {p[100]['VmRSS'] / 1e6:.1f} MB; spool "
                     f"{p[25]['progress'] / 1e6:,.0f} -> {p[100]['progress'] / 1e6:,.0f} MB)", g <= mem["limit"]))
    print("\n| target | figure | result |")
    print("|---|---:|---|")
    for name, fig, passed in rows:
        ok &= passed
        print(f"| {name} | {fig} | {'PASS' if passed else 'FAIL'} |")
    if mem:
        print(f"\nMemory, VmRSS in MB (RssAnon) at 25/50/75/100% of the progress (spool size, or input read), "
              f"sampled every {mem['interval']} s:\n")
        print("| run | progress at 100% | 25% | 50% | 75% | 100% | growth 25->100% | peak | within limit |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for key, m in mem["runs"].items():
            cells = " | ".join(f"{x['VmRSS'] / 1e6:.1f} ({x.get('RssAnon', 0) / 1e6:.1f})" for x in m["points"])
            unit = "spool" if m["spooled_at"] is not None else "read"
            peak = max(x["VmRSS"] for x in m["samples"])
            g = rss_growth(m)
            print(f"| {m['what']} | {unit} {m['points'][-1]['progress'] / 1e6:,.0f} MB | {cells} | {g * 100:+.1f}% | "
                  f"{peak / 1e6:.1f} | {'yes' if g <= mem['limit'] else 'no'} |")
    return ok


# ---------------------------------------------------------------- main

def write_config(path: Path, hosts: list[str], spool: Path, spool_max: int | None = None,
                 correlator: dict | None = None) -> None:
    o = OPTS
    spool_cfg = {"dir": str(spool), "fsync": o.fsync}
    if spool_max:
        spool_cfg["max_bytes"] = spool_max
    cfg = {"master_id": "bench",
           "indexer": {"hosts": hosts, "index_prefix": o.prefix,
                       "bulk": {"max_bytes": o.max_bytes, "max_docs": o.max_docs, "in_flight": o.in_flight,
                                "gzip": o.gzip, "gzip_level": 1},
                       "spool": spool_cfg}}
    if correlator:
        cfg["correlator"] = correlator
    path.write_text(json.dumps(cfg, indent=1) + "\n")  # JSON is YAML


# The engine-down runs: (key, what, correlator settings, ship?). The target is judged on
# "steady": the stream is ~16 s of bus time, so with the default late_grace (1 h) the
# correlator keeps every settled job for late returns (7,806 jobs here) and replay builds
# all their final documents at the end of the file: that growth is the correlator filling
# up, with or without an indexer ("control" shows it without one).
MEMORY_RUNS = [
    ("steady", "engine down, correlator in steady state (late_grace_seconds: 2)", {"late_grace_seconds": 2}, True),
    ("default", "engine down, default correlator (late_grace 1 h: fills up over the whole stream)", None, True),
    ("control", "control: no indexer (--output documents), default correlator", None, False),
]


def log(msg: str) -> None:
    print(f"[index-bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_rounds(res: dict, work: Path, bodies: list[Path], subset, expect: dict) -> None:
    """The three ways, --rounds times, against one OpenSearch node started here."""
    from engine import Engine  # tests/harness/engine.py
    o = OPTS
    returner_docs = subset[::max(1, len(subset) // o.returner_docs)][:o.returner_docs] if o.returner_docs else []
    res["documents"]["returner_subset"] = len(returner_docs)
    res["documents"]["returner_unique_by_kind"] = expected_counts(returner_docs)
    engine = Engine("opensearch", work / "engine", heap=o.heap).start()
    url = engine.url
    res["engine"] = {"flavor": "opensearch", "version": engine.info["version"]["number"], "heap": o.heap}
    try:
        cfg = work / "ship.yaml"
        write_config(cfg, [url], work / "spool")
        subprocess.run([o.salttap, "setup", "--config", str(cfg)], check=True, stdout=subprocess.DEVNULL)
        for i in range(o.warmup):  # the engine's JIT and caches: unmeasured passes, curl and salttap alternately
            delete_indices(url, o.prefix)
            cpu0 = process_cpu(engine.pid)
            if i % 2 == 0:
                sec = run_curl(url, bodies, work, o.in_flight, o.gzip)[0]
            else:
                shutil.rmtree(work / "spool", ignore_errors=True)
                sec = run_salttap(o.salttap, o.stream, cfg, work / "salttap-warmup.log")[0]
            log(f"warm-up {i + 1}/{o.warmup}: {'curl' if i % 2 == 0 else 'salttap'} pass, {sec:.1f} s, "
                f"engine CPU {process_cpu(engine.pid) - cpu0:.1f} s (not counted)")
        ways = ["salttap", "curl", "one_per_request"] + (["baseline"] if o.baseline else [])
        for rnd in range(o.rounds):
            order = ways[rnd % len(ways):] + ways[:rnd % len(ways)]
            r = {"order": order}
            for way in order:
                delete_indices(url, o.prefix)
                engine_cpu0 = process_cpu(engine.pid)
                if way in ("salttap", "baseline"):
                    shutil.rmtree(work / "spool", ignore_errors=True)
                    sec, cpu = run_salttap(o.salttap if way == "salttap" else o.baseline, o.stream, cfg,
                                           work / f"{way}-{rnd}.log")
                    want = expect
                elif way == "curl":
                    sec, cpu = run_curl(url, bodies, work, o.in_flight, o.gzip)
                    want = expect
                else:
                    sec, cpu = run_one_per_request(url, subset)
                    want = res["documents"]["one_per_request_unique_by_kind"]
                engine_cpu = process_cpu(engine.pid) - engine_cpu0
                got = engine_counts(url, o.prefix, want)
                dead = got.pop("deadletter")
                if got != want or dead:
                    raise RuntimeError(f"round {rnd} {way}: engine has {got} (+{dead} dead letters), expected {want}")
                n = res["documents"]["one_per_request_subset"] if way == "one_per_request" else res["documents"]["total"]
                r[way] = {"seconds": sec, "docs_per_s": n / sec, "client_cpu_s": cpu, "engine_cpu_s": engine_cpu,
                          "engine_counts": got}
                log(f"round {rnd + 1}/{o.rounds} {way}: {sec:.1f} s, {n / sec:,.0f} docs/s, CPU client {cpu:.1f} s "
                    f"engine {engine_cpu:.1f} s; engine counts ok")
            if o.ship_only:  # diagnostic: the shipper alone, from a spool filled with the engine "down"
                delete_indices(url, o.prefix)
                shutil.rmtree(work / "spool", ignore_errors=True)
                down = work / "fill.yaml"
                write_config(down, [f"http://127.0.0.1:{free_port()}"], work / "spool", spool_max=8 << 30)
                memory_run([o.salttap, "replay", o.stream, "--ship", "--ship-timeout", "60", "--config", str(down)],
                           work / "fill.log", 0.1, work / "spool")
                (work / "empty.raw").write_bytes(b"")
                engine_cpu0 = process_cpu(engine.pid)
                sec, cpu = run_salttap(o.salttap, str(work / "empty.raw"), cfg, work / f"ship-only-{rnd}.log")
                engine_cpu = process_cpu(engine.pid) - engine_cpu0
                got = engine_counts(url, o.prefix, expect)
                if got.pop("deadletter") or got != expect:
                    raise RuntimeError(f"round {rnd} ship-only: engine has {got}, expected {expect}")
                n = res["documents"]["total"]
                r["ship_only"] = {"seconds": sec, "docs_per_s": n / sec, "client_cpu_s": cpu, "engine_cpu_s": engine_cpu}
                log(f"round {rnd + 1}/{o.rounds} ship-only: {sec:.1f} s, {n / sec:,.0f} docs/s, CPU client {cpu:.1f} s "
                    f"engine {engine_cpu:.1f} s")
            if returner_docs:  # informational, outside the rotation
                delete_indices(url, o.prefix)
                engine_cpu0 = process_cpu(engine.pid)
                sec, cpu = run_one_per_request(url, returner_docs, returner_shaped=True)
                engine_cpu = process_cpu(engine.pid) - engine_cpu0
                want = res["documents"]["returner_unique_by_kind"]
                got = engine_counts(url, o.prefix, want)
                if got.pop("deadletter") or got != want:
                    raise RuntimeError(f"round {rnd} returner-shaped: engine has {got}, expected {want}")
                n = len(returner_docs)
                r["returner"] = {"seconds": sec, "docs_per_s": n / sec, "client_cpu_s": cpu, "engine_cpu_s": engine_cpu}
                log(f"round {rnd + 1}/{o.rounds} returner-shaped: {sec:.1f} s, {n / sec:,.0f} docs/s")
            r["build_only_seconds"] = run_build_only(o.salttap, o.stream, work / "documents.yaml")
            log(f"round {rnd + 1}/{o.rounds} build only: {r['build_only_seconds']:.1f} s")
            res["rounds"].append(r)
        delete_indices(url, o.prefix)
    finally:
        engine.stop()


def main() -> int:
    global OPTS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--salttap", default=str(ROOT / "build/dev/salttap"))
    ap.add_argument("--stream", help="bus stream (raw capture) to replay")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--one-per-request-docs", type=int, default=5000)
    ap.add_argument("--returner-docs", type=int, default=1000,
                    help="documents for the returner-shaped way (informational; 0: skip)")
    ap.add_argument("--min-returns", type=int, default=100000)
    ap.add_argument("--work", default=str(ROOT / "build/bench-index"))
    ap.add_argument("--out", default=str(ROOT / "build/bench-results"))
    ap.add_argument("--heap", default="2g", help="engine JVM heap")
    ap.add_argument("--prefix", default="bench")
    ap.add_argument("--max-docs", type=int, default=1000)
    ap.add_argument("--max-bytes", type=int, default=5 << 20)
    ap.add_argument("--in-flight", type=int, default=2)
    ap.add_argument("--no-gzip", dest="gzip", action="store_false")
    ap.add_argument("--fsync", default="interval", choices=["interval", "every_batch", "never"])
    ap.add_argument("--sample-interval", type=float, default=0.25)
    ap.add_argument("--rss-growth-limit", type=float, default=0.30)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--ship-only", action="store_true",
                    help="diagnostic: also time salttap's shipper alone (spool filled beforehand), outside the rotation")
    ap.add_argument("--baseline", help="another salttap build, measured as a fourth way in the same rotation "
                    "(e.g. the tree before a change): its row and per-round ratios are printed too")
    ap.add_argument("--warmup", type=int, default=3, help="unmeasured passes before the rounds (curl, salttap, curl, ...)")
    ap.add_argument("--report", help="print the tables of an earlier results JSON and exit")
    OPTS = ap.parse_args()
    if OPTS.report:
        return 0 if report(json.load(open(OPTS.report))) else 1
    if not OPTS.stream:
        ap.error("--stream is required")
    o = OPTS
    work = Path(o.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    res = {"stream": o.stream, "started": stamp, "settings": {k: v for k, v in vars(o).items() if k != "report"},
           "rounds": []}

    log(f"documents: {o.salttap} replay {o.stream} --output documents")
    docs_path = work / "docs.ndjson"
    cfg_docs = work / "documents.yaml"
    write_config(cfg_docs, ["http://127.0.0.1:9"], work / "spool-unused")
    with open(docs_path, "wb") as fh:
        subprocess.run([o.salttap, "replay", o.stream, "--output", "documents", "--config", str(cfg_docs)],
                       stdout=fh, check=True)
    docs = read_docs(docs_path)
    by_kind = collections.Counter(kind_of(a) for a, _ in docs)
    expect = expected_counts(docs)
    total_bytes = sum(len(p) for _, p in docs)
    step = max(1, len(docs) // o.one_per_request_docs)
    subset = docs[::step][:o.one_per_request_docs]
    res["documents"] = {"total": len(docs), "bytes": total_bytes, "by_kind": dict(by_kind),
                        "unique_by_kind": expect, "one_per_request_subset": len(subset),
                        "one_per_request_bytes": sum(len(p) for _, p in subset),
                        "one_per_request_unique_by_kind": expected_counts(subset)}
    log(f"{len(docs):,} documents, {total_bytes / 1e6:,.0f} MB; by kind {dict(by_kind)}; unique {expect}")
    if by_kind.get("returns", 0) < o.min_returns:
        raise SystemExit(f"only {by_kind.get('returns', 0):,} return documents (< {o.min_returns:,}): use a bigger stream")
    bodies = write_bodies(docs, work / "bodies", o.max_docs, o.max_bytes, o.gzip, 1)
    res["documents"]["bulk_bodies"] = len(bodies)
    res["documents"]["bulk_body_bytes"] = sum(p.stat().st_size for p in bodies)
    log(f"{len(bodies)} _bulk bodies ({res['documents']['bulk_body_bytes'] / 1e6:,.0f} MB as posted)")
    del docs

    if o.rounds > 0:
        run_rounds(res, work, bodies, subset, expect)

    if not o.skip_memory:
        port = free_port()  # nobody listens there: the engine is down
        res["memory"] = {"limit": o.rss_growth_limit, "interval": o.sample_interval, "runs": {}}
        for key, what, corr, ship in MEMORY_RUNS:
            spool = work / f"spool-{key}"
            mcfg = work / f"memory-{key}.yaml"
            write_config(mcfg, [f"http://127.0.0.1:{port}"], spool, spool_max=max(8 << 30, 4 * total_bytes),
                         correlator=corr)
            cmd = [o.salttap, "replay", o.stream, "--config", str(mcfg)]
            cmd += ["--ship", "--ship-timeout", "60"] if ship else ["--output", "documents"]
            log(f"{what}: sampling every {o.sample_interval} s")
            m = memory_run(cmd, work / f"memory-{key}.log", o.sample_interval, spool if ship else None)
            m["what"] = what
            res["memory"]["runs"][key] = m
            rss = " ".join(f"{x['VmRSS'] / 1e6:.1f}" for x in m["points"])
            log(f"{what}: VmRSS {rss} MB at 25/50/75/100%")
            shutil.rmtree(spool, ignore_errors=True)

    out = Path(o.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"index-{stamp}.json"
    path.write_text(json.dumps(res, indent=1) + "\n")
    ok = report(res)
    print(f"\nraw results: {path}")
    return 0 if ok else 1


OPTS = None

if __name__ == "__main__":
    sys.exit(main())
