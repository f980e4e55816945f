#!/usr/bin/env python3
"""Indexing benchmark: the same documents into the same local OpenSearch node, several ways.

  salttap          `salttap replay STREAM --ship`: disk spool -> index setup -> bulk
                   shipper (libcurl, gzip, `in_flight` requests in flight), timed from
                   start to exit (everything acknowledged by the engine)
  keep-alive       THE COMPARATOR: ready-made `_bulk` bodies of the same documents, cut like
                   salttap's batches (max_docs / max_bytes), gzipped like salttap (level 1)
                   when salttap gzips, posted by ONE process over `in_flight` persistent
                   connections (bench/bulk_post.py: Python http.client, a thread per
                   connection), timed from its first request to its last answer: the
                   least any bulk client must do, so the strongest honest comparator
  one-per-request  one HTTP request per document over one keep-alive connection
                   (Python http.client, like the returner's elasticsearch-py), on an
                   evenly spread subset; its rate is extrapolated to the whole set

Informational: the same bodies by `curl --parallel --parallel-max <in_flight> -K config` (one
curl process, keep-alive) and by `xargs -P <in_flight> curl` (a shell, a curl process and a
new TCP connection per body: how this benchmark used to compare, kept to show what that
cost); the returner-shaped way (what salt/returners/elasticsearch_return.py sends per
return: two new connections, GET / twice, HEAD index, the document) and, with --ship-only,
salttap's shipper alone (spool filled beforehand, replay of an empty file).

The documents are `salttap replay STREAM --output documents` (the exact bulk NDJSON
salttap spools). Every way writes into the same `<prefix>-*` indices, typed by the same
templates (`salttap setup`); the indices are deleted before each way and the engine's
document count is checked after `_refresh` (unique _index/_id pairs: a job document has
several versions), and every bulk answer's items are checked. --warmup unmeasured passes
first (the engine's JIT); the order of the ways rotates per round, so salttap and its
comparator run alternately; medians over rounds, and the median of the per-round ratios.
Client CPU (user + system; wait4, or the comparator's own over its timed part) and the
engine JVM's CPU (/proc/PID/stat) are recorded per way, the machine's load per round.

Then, with the engine stopped (hosts: a port nobody listens on), `salttap replay --ship`
of the same stream: VmRSS and the spool's size every --sample-interval seconds; VmRSS at
25/50/75/100 % of the spool's growth must not grow more than --rss-growth-limit. Judged
at salttap's defaults (MEMORY_RUNS); a steady-state correlator (late_grace_seconds: 2)
and a run without any indexer are shown beside it.

Prints markdown tables; raw figures go to OUT/index-<UTC time>.json.
`--report FILE.json` prints the tables of an earlier run.
"""
from __future__ import annotations

import argparse
import collections
import gzip
import http.client
import json
import shutil
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "lib"))
import benchlib  # noqa: E402
from benchlib import median  # noqa: E402

log = benchlib.logger("index-bench")


def engine_counts(url: str, prefix: str, kinds) -> dict:
    """Documents per kind (and dead letters) in the engine, after a refresh."""
    benchlib.refresh(url, f"{prefix}-*")
    return {kind: benchlib.count(url, f"{prefix}-{kind}-*") for kind in list(kinds) + ["deadletter"]}


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


# ---------------------------------------------------------------- the ways

def run_salttap(salttap: str, stream: str, config: Path, log_path: Path,
                expect_docs: int | None) -> tuple[float, float]:
    """`replay --ship`; expect_docs: the documents its log must say were built and acknowledged."""
    with open(log_path, "wb") as err:
        m = benchlib.run_measured([salttap, "replay", stream, "--ship", "--ship-timeout", "1800",
                                   "--config", str(config)], stderr=err)
    if m.returncode != 0:
        raise RuntimeError(f"salttap replay --ship exited {m.returncode}; see {log_path}")
    if expect_docs is not None and \
            f" {expect_docs} documents built, all acknowledged" not in log_path.read_text(errors="replace"):
        raise RuntimeError(f"salttap replay --ship did not report {expect_docs} documents acknowledged; see {log_path}")
    return m.seconds, m.cpu_s


def run_build_only(salttap: str, stream: str, config: Path) -> float:
    m = benchlib.run_measured([salttap, "replay", stream, "--output", "documents", "--config", str(config)],
                              count_lines=True)
    if m.returncode != 0:
        raise RuntimeError(f"salttap replay --output documents exited {m.returncode}")
    if m.stdout_lines != 2 * OPTS.documents_total:
        raise RuntimeError(f"replay --output documents wrote {m.stdout_lines} lines, "
                           f"expected {2 * OPTS.documents_total} (2 per document)")
    return m.seconds


def run_keepalive(url: str, listing: Path, parallel: int, gz: bool) -> tuple[float, float]:
    """The comparator: bench/bulk_post.py, one process, `parallel` persistent connections."""
    cmd = [sys.executable, str(ROOT / "bench" / "bulk_post.py"), url, str(listing), "--in-flight", str(parallel)]
    m = benchlib.run_measured(cmd + (["--gzip"] if gz else []), capture=True)
    if m.returncode != 0:
        raise RuntimeError(f"bulk_post.py exited {m.returncode}: {m.stdout[-2000:]!r} {m.stderr[-2000:]!r}")
    got = json.loads(m.stdout.splitlines()[-1])
    if got["items"] != OPTS.documents_total:
        raise RuntimeError(f"keep-alive: the engine answered {got['items']} items for {OPTS.documents_total} documents")
    return got["seconds"], got["cpu_s"]


def check_curl_answers(resp: Path, codes_file: Path, bodies: int, way: str) -> None:
    codes = collections.Counter(codes_file.read_text().split())
    if codes != collections.Counter({"200": bodies}):
        raise RuntimeError(f"{way}: HTTP codes {dict(codes)} for {bodies} bodies")
    bad, items = collections.Counter(), 0
    for f in resp.iterdir():
        for item in json.loads(f.read_bytes()).get("items", []):
            items += 1
            st = next(iter(item.values()))["status"]
            if st not in (200, 201, 409):
                bad[st] += 1
    if bad or items != OPTS.documents_total:
        raise RuntimeError(f"{way}: {items} items answered for {OPTS.documents_total} documents, failed {dict(bad)}")


def curl_headers(gz: bool) -> list[str]:
    return ["Content-Type: application/x-ndjson"] + (["Content-Encoding: gzip"] if gz else [])


def run_curl_parallel(url: str, bodies: list[Path], work: Path, parallel: int, gz: bool) -> tuple[float, float]:
    """(info) One curl process: `--parallel --parallel-max N -K config`, every body a transfer."""
    resp = work / "responses"
    shutil.rmtree(resp, ignore_errors=True)
    resp.mkdir()
    config = work / "curl.config"
    with open(config, "w") as fh:
        for i, body in enumerate(bodies):
            if i:
                fh.write("next\n")
            fh.write(f'url = "{url}{BULK_PATH}"\ndata-binary = "@{body}"\noutput = "{resp}/{body.name}.json"\n'
                     'write-out = "%{http_code}\\n"\n')
            for h in curl_headers(gz):
                fh.write(f'header = "{h}"\n')
    codes_file, errors = work / "http-codes.txt", work / "curl-parallel.err"
    # curl 7.88 draws its parallel progress meter even with --silent: stderr goes to a file.
    with open(codes_file, "wb") as out, open(errors, "wb") as err:
        m = benchlib.run_measured(["curl", "--silent", "--show-error", "--parallel", "--parallel-max", str(parallel),
                                   "-K", str(config)], stdout=out, stderr=err)
    if m.returncode != 0:
        raise RuntimeError(f"curl --parallel exited {m.returncode}; see {errors}")
    check_curl_answers(resp, codes_file, len(bodies), "curl --parallel")
    return m.seconds, m.cpu_s


def run_curl_xargs(url: str, bodies: list[Path], work: Path, parallel: int, gz: bool) -> tuple[float, float]:
    """(info) How this benchmark used to compare: `xargs -P N sh -c "curl ..."`, a shell and a
    curl process (three fork/execs) and a new TCP connection per body."""
    listing = work / "bodies.list"
    resp = work / "responses"
    shutil.rmtree(resp, ignore_errors=True)
    resp.mkdir()
    cmd = ["xargs", "-a", str(listing), "-P", str(parallel), "-I{}", "sh", "-c",
           f"curl -sS -o {resp}/$(basename {{}}).json -w '%{{http_code}}\\n' "
           + " ".join(f"-H '{h}'" for h in curl_headers(gz)) + f" --data-binary @{{}} '{url}{BULK_PATH}'"]
    codes_file = work / "http-codes.txt"
    with open(codes_file, "wb") as out:
        m = benchlib.run_measured(cmd, stdout=out)
    if m.returncode != 0:
        raise RuntimeError(f"xargs curl exited {m.returncode}")
    check_curl_answers(resp, codes_file, len(bodies), "xargs curl")
    return m.seconds, m.cpu_s


# What salttap's shipper asks for (indexer/bulk_shipper.cpp); every bulk way asks the same.
BULK_PATH = "/_bulk?filter_path=errors,items.*.status,items.*.error"


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

def memory_run(cmd: list[str], log_path: Path, interval: float, spool: Path | None) -> dict:
    """Samples VmRSS (and RssAnon/RssFile) every `interval` s while `cmd` runs.
    Progress: the spool's size (with `spool`: `replay --ship`, stopped by SIGTERM a few
    samples after it logged that everything is spooled), else the bytes it has read."""
    samples = []
    t0 = time.perf_counter()
    with open(log_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    spooled_at = None
    try:
        while proc.poll() is None:
            try:
                st = benchlib.status_fields(proc.pid, ("VmRSS", "RssAnon", "RssFile", "VmHWM"))
                if not st:
                    break
                progress = benchlib.dir_bytes(spool) if spool else benchlib.read_chars(proc.pid)
            except (FileNotFoundError, ProcessLookupError):
                break
            samples.append({"t": round(time.perf_counter() - t0, 3), "progress": progress, **st})
            if spool and spooled_at is None and b"documents spooled" in log_path.read_bytes():
                spooled_at = samples[-1]["t"]
            if spooled_at is not None and samples[-1]["t"] - spooled_at >= 4 * interval:
                break  # everything spooled; a few samples after, then stop it
            time.sleep(interval)
    finally:
        benchlib.stop(proc, 30)
    if spool and spooled_at is None:
        raise RuntimeError(f"engine-down run: never logged that everything is spooled ({log_path})")
    if len(samples) < 4:
        raise RuntimeError(f"memory run: only {len(samples)} samples; lower --sample-interval ({log_path})")
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

WAY_NAMES = {
    "salttap": "salttap `replay --ship` (build + spool + ship; timed from start to exit)",
    "keepalive": "**comparator**: ready-made `_bulk` bodies, one process, {n} keep-alive connections "
                 "(bench/bulk_post.py; timed from its first request to its last answer)",
    "curl_parallel": "(info) the same bodies, `curl --parallel --parallel-max {n} -K` (one process, keep-alive)",
    "curl_xargs": "(info) the same bodies, `xargs -P {n} sh -c curl` (a shell and a curl per body, new connections)",
    "baseline": "salttap, baseline build ({baseline})",
}
BULK_WAYS = ["salttap", "keepalive", "curl_parallel", "curl_xargs"]


def fmt_load(load) -> str:
    return f"{load[0]:.1f}"


def report(res: dict) -> bool:
    ok, rows = True, []
    rounds = res["rounds"]
    if rounds:
        s = res["settings"]
        n, n_one = res["documents"]["total"], res["documents"]["one_per_request_subset"]
        ways = [w for w in BULK_WAYS + ["baseline"] if all(w in r for r in rounds)]
        sec = {w: median(r[w]["seconds"] for r in rounds) for w in ways + ["one_per_request"]}
        rate = {w: n / sec[w] for w in ways}
        rate["one_per_request"] = n_one / sec["one_per_request"]
        mb = res["documents"]["bytes"] / 1e6
        loads = ", ".join(fmt_load(r["load"]) for r in rounds)
        print(f"\n{n:,} documents ({res['documents']['by_kind'].get('returns', 0):,} returns; "
              f"{mb:,.0f} MB of bulk NDJSON, {res['documents']['bulk_bodies']} bodies) from {res['stream']}; "
              f"OpenSearch {res['engine']['version']} (heap {s['heap']}), {len(rounds)} rounds; bulk: max_docs "
              f"{s['max_docs']}, max_bytes {s['max_bytes']}, in_flight {s['in_flight']}, gzip "
              f"{'on (level 1)' if s['gzip'] else 'off'}, spool fsync {s['fsync']}; the machine's 1-minute load "
              f"at each round's start: {loads}\n")

        def med_of(way, key, scale=1.0):
            vals = [r[way][key] * scale for r in rounds if key in r.get(way, {})]
            return median(vals) if vals else None

        def cell(v, f="{:.1f}"):
            return "-" if v is None else f.format(v)

        print("| way | docs | wall s (median) | docs/s | salttap vs this way | client CPU s | "
              "client CPU ms / 1,000 docs | engine CPU s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for w in ways:
            name = WAY_NAMES[w].format(n=s["in_flight"], baseline=s.get("baseline"))
            print(f"| {name} | {n:,} | {sec[w]:.1f} | {rate[w]:,.0f} | {rate['salttap'] / rate[w]:.2f}x | "
                  f"{cell(med_of(w, 'client_cpu_s'))} | {cell(med_of(w, 'client_cpu_s', 1e6 / n), '{:.0f}')} | "
                  f"{cell(med_of(w, 'engine_cpu_s'))} |")
        print(f"| one request per document, keep-alive (subset, extrapolated) | {n_one:,} of {n:,} | "
              f"{sec['one_per_request']:.1f} ({n / rate['one_per_request']:,.0f} for all) | "
              f"{rate['one_per_request']:,.0f} | {rate['salttap'] / rate['one_per_request']:.1f}x | "
              f"{cell(med_of('one_per_request', 'client_cpu_s'))} | "
              f"{cell(med_of('one_per_request', 'client_cpu_s', 1e6 / n_one), '{:.0f}')} | "
              f"{cell(med_of('one_per_request', 'engine_cpu_s'))} |")
        if all("ship_only" in r for r in rounds):
            so = median(r["ship_only"]["seconds"] for r in rounds)
            print(f"| (diagnostic) salttap's shipper alone: spool filled beforehand, replay of an empty file --ship | "
                  f"{n:,} | {so:.1f} | {n / so:,.0f} | {rate['salttap'] / (n / so):.2f}x | "
                  f"{cell(med_of('ship_only', 'client_cpu_s'))} | {cell(med_of('ship_only', 'client_cpu_s', 1e6 / n), '{:.0f}')} | "
                  f"{cell(med_of('ship_only', 'engine_cpu_s'))} |")
        if all("returner" in r for r in rounds):
            n_ret = res["documents"]["returner_subset"]
            ret = median(r["returner"]["seconds"] for r in rounds)
            print(f"| (info) Salt's returner as written: per document 2 new connections, GET / twice, HEAD index, "
                  f"then the document (subset, extrapolated) | {n_ret:,} of {n:,} | {ret:.1f} "
                  f"({n / (n_ret / ret):,.0f} for all) | {n_ret / ret:,.0f} | {rate['salttap'] / (n_ret / ret):.0f}x | "
                  f"{cell(med_of('returner', 'client_cpu_s'))} | | {cell(med_of('returner', 'engine_cpu_s'))} |")
        build = median(r["build_only_seconds"] for r in rounds)
        print(f"| salttap building documents only (`--output documents`, lines counted) | {n:,} | {build:.1f} | "
              f"{n / build:,.0f} | | | | |")

        def per_round(a, b):
            return [r[b]["seconds"] / r[a]["seconds"] for r in rounds]  # rate of a / rate of b

        print()
        for other in [w for w in ways if w != "salttap"]:
            vals = per_round("salttap", other)
            cpu_ratio = [r["salttap"]["client_cpu_s"] / r[other]["client_cpu_s"] for r in rounds]
            print(f"- salttap / {other} rate per round (order rotates; load {loads}): "
                  f"{', '.join(f'{x:.2f}' for x in vals)}; median {median(vals):.2f}; "
                  f"client CPU salttap / {other} per round {', '.join(f'{x:.2f}' for x in cpu_ratio)}")

        r1 = median(per_round("salttap", "keepalive"))
        rows.append(("salttap >= 95% of the rate of one keep-alive process posting ready-made bodies "
                     "(median of per-round ratios)", f"{r1 * 100:.0f}%", r1 >= 0.95))
        if all("ship_only" in r for r in rounds):
            so = median(r["keepalive"]["seconds"] / r["ship_only"]["seconds"] for r in rounds)
            rows.append(("(info) salttap's shipper alone vs the keep-alive comparator", f"{so * 100:.0f}%", True))
        r2 = rate["salttap"] / rate["one_per_request"]
        rows.append(("salttap >= 20x the one-per-request rate", f"{r2:.1f}x", r2 >= 20))
    mem = res.get("memory")
    if mem:
        judged = mem["runs"]["default"]
        p = {x["pct"]: x for x in judged["points"]}
        g = rss_growth(judged)
        rows.append((f"engine down, salttap's defaults: VmRSS grows <= {mem['limit'] * 100:.0f}% from 25% to 100% "
                     f"of the spool's growth",
                     f"{g * 100:+.1f}% ({p[25]['VmRSS'] / 1e6:.1f} -> {p[100]['VmRSS'] / 1e6:.1f} MB; spool "
                     f"{p[25]['progress'] / 1e6:,.0f} -> {p[100]['progress'] / 1e6:,.0f} MB; peak "
                     f"{max(x['VmRSS'] for x in judged['samples']) / 1e6:.1f} MB)", g <= mem["limit"]))
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
# "default", salttap's defaults. The stream is ~16 s of bus time, so with the default
# late_grace (1 h) the correlator keeps every settled job for late returns (7,806 jobs here)
# and replay builds all their final documents at the end of the file: that growth is the
# correlator's late window, with or without an indexer ("control" shows it without one;
# "steady", with late_grace_seconds: 2, what is left once the window is full).
MEMORY_RUNS = [
    ("default", "engine down, salttap's defaults (late_grace 1 h: the window fills over the whole stream)",
     None, True),
    ("steady", "(info) engine down, correlator in steady state (late_grace_seconds: 2)",
     {"late_grace_seconds": 2}, True),
    ("control", "(info) control: no indexer (--output documents), salttap's defaults", None, False),
]


def timed_way(way: str, rnd: int, url: str, cfg: Path, work: Path, bodies: list[Path], subset) -> tuple[float, float]:
    o = OPTS
    if way in ("salttap", "baseline"):
        shutil.rmtree(work / "spool", ignore_errors=True)
        return run_salttap(o.salttap if way == "salttap" else o.baseline, o.stream, cfg, work / f"{way}-{rnd}.log",
                           o.documents_total if way == "salttap" else None)
    if way == "keepalive":
        return run_keepalive(url, work / "bodies.list", o.in_flight, o.gzip)
    if way == "curl_parallel":
        return run_curl_parallel(url, bodies, work, o.in_flight, o.gzip)
    if way == "curl_xargs":
        return run_curl_xargs(url, bodies, work, o.in_flight, o.gzip)
    return run_one_per_request(url, subset)


def run_rounds(res: dict, work: Path, bodies: list[Path], subset, expect: dict) -> None:
    """The ways, --rounds times, against one OpenSearch node started here."""
    o = OPTS
    returner_docs = subset[::max(1, len(subset) // o.returner_docs)][:o.returner_docs] if o.returner_docs else []
    res["documents"]["returner_subset"] = len(returner_docs)
    res["documents"]["returner_unique_by_kind"] = expected_counts(returner_docs)
    (work / "bodies.list").write_text("".join(f"{p}\n" for p in bodies))
    engine = benchlib.Engine("opensearch", work / "engine", heap=o.heap).start()
    url = engine.url
    res["engine"] = {"flavor": "opensearch", "version": engine.info["version"]["number"], "heap": o.heap}
    try:
        cfg = work / "ship.yaml"
        write_config(cfg, [url], work / "spool")
        subprocess.run([o.salttap, "setup", "--config", str(cfg)], check=True, stdout=subprocess.DEVNULL)
        for i in range(o.warmup):  # the engine's JIT and caches: unmeasured passes, comparator and salttap alternately
            benchlib.delete_indices(url, f"{o.prefix}-*")
            cpu0 = benchlib.cpu_seconds(engine.pid)
            way = "keepalive" if i % 2 == 0 else "salttap"
            sec = timed_way(way, -1 - i, url, cfg, work, bodies, subset)[0]
            log(f"warm-up {i + 1}/{o.warmup}: {way} pass, {sec:.1f} s, "
                f"engine CPU {benchlib.cpu_seconds(engine.pid) - cpu0:.1f} s (not counted)")
        ways = BULK_WAYS[:2] + ["one_per_request"] + BULK_WAYS[2:] + (["baseline"] if o.baseline else [])
        if o.no_info_curl:
            ways = [w for w in ways if w not in ("curl_parallel", "curl_xargs")]
        for rnd in range(o.rounds):
            order = ways[rnd % len(ways):] + ways[:rnd % len(ways)]
            r = {"order": order, "load": benchlib.loadavg()}
            log(f"round {rnd + 1}/{o.rounds}: {benchlib.load_text()}")
            for way in order:
                benchlib.delete_indices(url, f"{o.prefix}-*")
                engine_cpu0 = benchlib.cpu_seconds(engine.pid)
                sec, cpu = timed_way(way, rnd, url, cfg, work, bodies, subset)
                want = res["documents"]["one_per_request_unique_by_kind"] if way == "one_per_request" else expect
                engine_cpu = benchlib.cpu_seconds(engine.pid) - engine_cpu0
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
                benchlib.delete_indices(url, f"{o.prefix}-*")
                shutil.rmtree(work / "spool", ignore_errors=True)
                down = work / "fill.yaml"
                write_config(down, [f"http://127.0.0.1:{benchlib.free_port()}"], work / "spool", spool_max=8 << 30)
                memory_run([o.salttap, "replay", o.stream, "--ship", "--ship-timeout", "60", "--config", str(down)],
                           work / "fill.log", 0.1, work / "spool")
                (work / "empty.raw").write_bytes(b"")
                engine_cpu0 = benchlib.cpu_seconds(engine.pid)
                sec, cpu = run_salttap(o.salttap, str(work / "empty.raw"), cfg, work / f"ship-only-{rnd}.log", None)
                engine_cpu = benchlib.cpu_seconds(engine.pid) - engine_cpu0
                got = engine_counts(url, o.prefix, expect)
                if got.pop("deadletter") or got != expect:
                    raise RuntimeError(f"round {rnd} ship-only: engine has {got}, expected {expect}")
                n = res["documents"]["total"]
                r["ship_only"] = {"seconds": sec, "docs_per_s": n / sec, "client_cpu_s": cpu, "engine_cpu_s": engine_cpu}
                log(f"round {rnd + 1}/{o.rounds} ship-only: {sec:.1f} s, {n / sec:,.0f} docs/s, CPU client {cpu:.1f} s "
                    f"engine {engine_cpu:.1f} s")
            if returner_docs:  # informational, outside the rotation
                benchlib.delete_indices(url, f"{o.prefix}-*")
                engine_cpu0 = benchlib.cpu_seconds(engine.pid)
                sec, cpu = run_one_per_request(url, returner_docs, returner_shaped=True)
                engine_cpu = benchlib.cpu_seconds(engine.pid) - engine_cpu0
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
        benchlib.delete_indices(url, f"{o.prefix}-*")
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
    ap.add_argument("--no-info-curl", action="store_true",
                    help="leave out the informational curl ways (--parallel, xargs)")
    ap.add_argument("--ship-only", action="store_true",
                    help="diagnostic: also time salttap's shipper alone (spool filled beforehand), outside the rotation")
    ap.add_argument("--baseline", help="another salttap build, measured as one more way in the same rotation "
                    "(e.g. the tree before a change): its row and per-round ratios are printed too")
    ap.add_argument("--warmup", type=int, default=3,
                    help="unmeasured passes before the rounds (comparator, salttap, comparator, ...)")
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
    path = benchlib.results_file(o.out, "index")
    res = {"stream": o.stream, "started": path.stem.split("-", 1)[1], "load_start": benchlib.loadavg(),
           "settings": {k: v for k, v in vars(o).items() if k != "report"}, "rounds": []}

    log(f"documents: {o.salttap} replay {o.stream} --output documents; {benchlib.load_text()}")
    docs_path = work / "docs.ndjson"
    cfg_docs = work / "documents.yaml"
    write_config(cfg_docs, ["http://127.0.0.1:9"], work / "spool-unused")
    with open(docs_path, "wb") as fh:
        subprocess.run([o.salttap, "replay", o.stream, "--output", "documents", "--config", str(cfg_docs)],
                       stdout=fh, check=True)
    docs = read_docs(docs_path)
    o.documents_total = len(docs)
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
        port = benchlib.free_port()  # nobody listens there: the engine is down
        res["memory"] = {"limit": o.rss_growth_limit, "interval": o.sample_interval, "runs": {},
                         "load": benchlib.loadavg()}
        for key, what, corr, ship in MEMORY_RUNS:
            spool = work / f"spool-{key}"
            mcfg = work / f"memory-{key}.yaml"
            write_config(mcfg, [f"http://127.0.0.1:{port}"], spool, spool_max=max(8 << 30, 4 * total_bytes),
                         correlator=corr)
            cmd = [o.salttap, "replay", o.stream, "--config", str(mcfg)]
            cmd += ["--ship", "--ship-timeout", "60"] if ship else ["--output", "documents"]
            log(f"{what}: sampling every {o.sample_interval} s; {benchlib.load_text()}")
            m = memory_run(cmd, work / f"memory-{key}.log", o.sample_interval, spool if ship else None)
            m["what"] = what
            res["memory"]["runs"][key] = m
            rss = " ".join(f"{x['VmRSS'] / 1e6:.1f}" for x in m["points"])
            log(f"{what}: VmRSS {rss} MB at 25/50/75/100%")
            shutil.rmtree(spool, ignore_errors=True)

    res["load_end"] = benchlib.loadavg()
    res["settings"]["documents_total"] = o.documents_total
    benchlib.save_results(path, res)
    ok = report(res)
    print(f"\nthe machine's load: {res['load_start'][0]:.1f} at the start, {res['load_end'][0]:.1f} at the end "
          f"(1-minute averages)")
    print(f"\nraw results: {path}")
    return 0 if ok else 1


OPTS = None

if __name__ == "__main__":
    sys.exit(main())
