#!/usr/bin/env python3
"""Cost benchmark: what the record of a job costs on the engine's disk and CPU, salttap
against Salt's own elasticsearch returner, on the same returns in the same run.

For each engine flavor (Elasticsearch 7.17, OpenSearch 2.19) two fresh engines are
started, one per store, with the same heap. Per round, in turn (the order rotates):

  salttap    `salttap replay STREAM --ship` (states_index on, every other setting its
             default) into the first engine: jobs, returns, states, events, alerts.
             With --variants, each variant is one more way: salttap's templates as
             installed by `salttap setup`, then patched by the variant (VARIANTS below:
             the levers measured before a mapping changes), shipped with
             install_templates off so the patch stays
  returner   Salt 3006's salt/returners/elasticsearch_return.py, `returner(ret)` called
             through Salt's loader in one process with every return of the same stream,
             in --returner-workers processes side by side like a master's MWorkers
             (bench/returner_feed.py), its options and the elasticsearch client's all at
             their defaults (but doc_type `_doc` on OpenSearch, which refuses the default
             `default`), into the second engine

Each engine's idle CPU rate is measured once, after both started: the least of three
windows of --idle-seconds. Before each way its engine's indices are deleted. The way is timed from start to end (salttap: every document
acknowledged; the returner: its last call answered), then `_refresh`. The engine's CPU
over that time is the JVM's utime + stime from /proc minus its idle rate times the wall
time. Then `_forcemerge?max_num_segments=1` and `_refresh`, and per index: documents and
store bytes (`_cat/indices`, the primary shard: replicas 0).

Both stores are checked against the stream's own counts (bench/returner_feed.py --count,
not what either tool says it did) before any figure counts: salttap's returns index holds
one document per return of the stream (no minion is missing in the stream), its jobs
index one per job of the manifest, its states index one per state; the returner's
indices hold one document per return fed. A mismatch stops the benchmark; for the
returner only with --allow-returner-loss it is reported instead (without an index
template its dynamic mapping refuses some returns for good, e.g. every grains.items: its
`pythonversion` list mixes numbers and a string), and its figures are then those of what
it stored.

Prints markdown tables of medians over rounds; raw figures go to OUT/cost-<UTC time>.json.
`--report FILE.json` prints the tables of an earlier run.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "lib"))
import benchlib  # noqa: E402
from benchlib import median  # noqa: E402

log = benchlib.logger("cost-bench")

PREFIX = "cost"
SALTTAP_KINDS = ("jobs", "returns", "states", "events", "alerts", "minions")


# ---------------------------------------------------------------- template variants (the levers)

def _source_excludes(*fields):
    def patch(kind, tpl):
        if kind == "returns" or (kind == "events" and "data_text" in fields) or \
                (kind == "states" and "changes_text" in fields):
            mine = [f for f in fields if f in tpl["template"]["mappings"]["properties"]]
            if mine:
                tpl["template"]["mappings"].setdefault("_source", {})["excludes"] = mine
    return patch


def _settings(kinds, **settings):
    def patch(kind, tpl):
        if kind in kinds:
            tpl["template"].setdefault("settings", {}).update(settings)
    return patch


def _chain(*patches):
    def patch(kind, tpl):
        for p in patches:
            p(kind, tpl)
    return patch


# name -> (what it does, patch(kind, composable template body)); "shipped" is the templates
# salttap installs itself.
VARIANTS = {
    "shipped": ("salttap's templates as installed", None),
    "flat-unstored": ("returns: return_flat indexed, not kept in _source", _source_excludes("return_flat")),
    "texts-unstored": ("returns: return_flat, return_text and fun_args_text indexed, not kept in _source; "
                       "states: changes_text; events: data_text",
                       _source_excludes("return_flat", "return_text", "fun_args_text", "changes_text", "data_text")),
    "no-flat": ("returns: return_flat not mapped at all (dynamic: false keeps it in _source only)",
                lambda kind, tpl: tpl["template"]["mappings"]["properties"].pop("return_flat", None)
                if kind == "returns" else None),
    "cold-best-compression": ("events, states: index.codec best_compression",
                              _settings(("events", "states"), **{"index.codec": "best_compression"})),
    "best-compression": ("returns, states, events: index.codec best_compression (jobs, alerts and minions, "
                         "read by every list, keep the default)",
                         _settings(("returns", "states", "events"), **{"index.codec": "best_compression"})),
    "all-best-compression": ("every kind: index.codec best_compression",
                             _settings(SALTTAP_KINDS, **{"index.codec": "best_compression"})),
    "refresh-30s": ("returns, states, events: index.refresh_interval 30s (jobs and alerts keep the engine's 1 s)",
                    _settings(("returns", "states", "events"), **{"index.refresh_interval": "30s"})),
}


def parse_variant(spec: str):
    """`a+b+c`: the patches of a, b and c in turn."""
    parts = spec.split("+")
    for p in parts:
        if p not in VARIANTS:
            raise SystemExit(f"unknown variant {p!r}; choose from {', '.join(VARIANTS)}")
    patches = [VARIANTS[p][1] for p in parts if VARIANTS[p][1]]
    return (" and ".join(VARIANTS[p][0] for p in parts), _chain(*patches) if patches else None)


def patch_templates(url: str, patch) -> None:
    for kind in SALTTAP_KINDS:
        name = f"{PREFIX}-{kind}"
        got = benchlib.http_json("GET", f"{url}/_index_template/{name}")
        body = got["index_templates"][0]["index_template"]
        patch(kind, body)
        benchlib.http_json("PUT", f"{url}/_index_template/{name}", body)


# ---------------------------------------------------------------- the engine

def engine_cpu(engine) -> float:
    return benchlib.cpu_seconds(engine.pid)


def idle_rate(engine, seconds: float) -> float:
    """The engine's CPU seconds per second while nothing is sent to it: the least of three
    windows of `seconds` (a window that catches a late merge or a GC after the last way's
    work would be counted against every second of the next way's ingest)."""
    rates = []
    for _ in range(3):
        c0, t0 = engine_cpu(engine), time.perf_counter()
        time.sleep(seconds)
        rates.append((engine_cpu(engine) - c0) / (time.perf_counter() - t0))
    return min(rates)


def indices(url: str, pattern: str) -> list[dict]:
    rows = benchlib.http_json("GET", f"{url}/_cat/indices/{pattern}?format=json&bytes=b&expand_wildcards=all"
                                     "&h=index,docs.count,docs.deleted,pri.store.size,store.size,pri")
    return [{"index": r["index"], "docs": int(r["docs.count"]), "deleted": int(r["docs.deleted"]),
             "store_bytes": int(r["pri.store.size"])} for r in rows]


def one_segment_each(url: str, pattern: str) -> bool:
    rows = benchlib.http_json("GET", f"{url}/_cat/segments/{pattern}?format=json&h=index,shard,segment")
    per_shard = collections.Counter((r["index"], r["shard"]) for r in rows)
    return all(n == 1 for n in per_shard.values())


def settle_and_measure(url: str, pattern: str) -> tuple[list[dict], float]:
    """_refresh, _forcemerge to one segment, _refresh and _flush; then, once every shard has
    one segment and the store's size reads the same twice a second apart (the merged-away
    files are deleted only when no reader holds them), the indices; the merge's seconds."""
    benchlib.refresh(url, pattern)
    t0 = time.perf_counter()
    benchlib.http_json("POST", f"{url}/{pattern}/_forcemerge?max_num_segments=1&expand_wildcards=all", timeout=3600)
    merge_s = time.perf_counter() - t0
    deadline = time.monotonic() + 600
    last = None
    while True:
        benchlib.refresh(url, pattern)
        benchlib.http_json("POST", f"{url}/{pattern}/_flush?expand_wildcards=all")
        rows = indices(url, pattern)
        if one_segment_each(url, pattern) and rows == last:
            return rows, merge_s
        if time.monotonic() > deadline:
            raise RuntimeError(f"{pattern}: not one segment per shard with a steady size after 10 minutes")
        last = rows
        time.sleep(1)


def kind_of(index: str, way: str) -> str:
    if way == "returner":  # salt-<fun>-v1 (the returner's own index, behind the alias salt-<fun>)
        return re.sub(r"^salt-|-v1$", "", index)
    return index[len(PREFIX) + 1:].split("-")[0]


def group(rows: list[dict], way: str) -> dict:
    out = collections.defaultdict(lambda: {"docs": 0, "deleted": 0, "store_bytes": 0, "indices": 0})
    for r in rows:
        g = out[kind_of(r["index"], way)]
        g["docs"] += r["docs"]
        g["deleted"] += r["deleted"]
        g["store_bytes"] += r["store_bytes"]
        g["indices"] += 1
    return dict(out)


# ---------------------------------------------------------------- the ways

def write_config(path: Path, url: str, spool: Path, install_templates: bool) -> None:
    cfg = {"master_id": "bench",
           "indexer": {"hosts": [url], "index_prefix": PREFIX, "states_index": True,
                       "install_templates": install_templates, "spool": {"dir": str(spool)}}}
    path.write_text(json.dumps(cfg, indent=1) + "\n")  # JSON is YAML


def run_salttap(o, engine, variant: str, work: Path, rnd: int) -> dict:
    url = engine.url
    what, patch = parse_variant(variant)
    cfg = work / f"salttap-{variant}.yaml"
    spool = work / "spool"
    shutil.rmtree(spool, ignore_errors=True)
    write_config(cfg, url, spool, install_templates=True)
    subprocess.run([o.salttap, "setup", "--config", str(cfg)], check=True, stdout=subprocess.DEVNULL)
    if patch:
        patch_templates(url, patch)
    write_config(cfg, url, spool, install_templates=False)
    idle = engine.idle
    log_path = work / f"salttap-{variant}-{rnd}.log"
    c0 = engine_cpu(engine)
    with open(log_path, "wb") as err:
        m = benchlib.run_measured([o.salttap, "replay", o.stream, "--ship", "--ship-timeout", "3600",
                                   "--config", str(cfg)], stderr=err)
    if m.returncode != 0:
        raise RuntimeError(f"salttap replay --ship exited {m.returncode}; see {log_path}")
    benchlib.refresh(url, f"{PREFIX}-*")
    wall = m.seconds
    cpu = engine_cpu(engine) - c0 - idle * wall
    c1, t1 = engine_cpu(engine), time.perf_counter()
    rows, merge_s = settle_and_measure(url, f"{PREFIX}-*")
    merge_cpu = engine_cpu(engine) - c1 - idle * (time.perf_counter() - t1)
    kinds = group(rows, "salttap")
    exp = o.expected
    returned = benchlib.count(url, f"{PREFIX}-returns-*", "q=NOT%20status:missing")
    got = {"jobs": kinds.get("jobs", {}).get("docs", 0), "returns": returned,
           "returns_missing": kinds.get("returns", {}).get("docs", 0) - returned,
           "states": kinds.get("states", {}).get("docs", 0)}
    want = {"jobs": exp["jobs"], "returns": exp["returns"], "returns_missing": 0, "states": exp["states"]}
    dead = benchlib.count(url, f"{PREFIX}-deadletter-*")
    if got != want or dead:
        raise RuntimeError(f"salttap {variant}: the engine holds {got} (+{dead} dead letters), the stream {want}")
    return {"variant": variant, "what": what, "seconds": wall, "client_cpu_s": m.cpu_s, "engine_cpu_s": cpu,
            "idle_rate": idle, "merge_s": merge_s, "merge_cpu_s": merge_cpu, "kinds": kinds, "indices": rows, "checked": got}


def run_returner(o, engine, work: Path, rnd: int) -> dict:
    url = engine.url
    idle = engine.idle
    env = dict(os.environ, PYTHONPATH=o.client_dirs[engine.flavor])
    cmd = [o.salt_python, str(ROOT / "bench" / "returner_feed.py"), "--workers", str(o.returner_workers), o.stream, url]
    if engine.flavor.startswith("opensearch"):
        cmd.append("_doc")  # mapping types are gone from OpenSearch 2: `default` is refused
    c0 = engine_cpu(engine)
    m = benchlib.run_measured(cmd, capture=True, env=env)
    if m.returncode != 0:
        raise RuntimeError(f"returner_feed.py exited {m.returncode}: {m.stderr[-3000:]!r}")
    wall = m.seconds
    fed = json.loads(m.stdout.splitlines()[-1])
    benchlib.refresh(url, "salt-*")
    cpu = engine_cpu(engine) - c0 - idle * wall
    c1, t1 = engine_cpu(engine), time.perf_counter()
    rows, merge_s = settle_and_measure(url, "salt-*")
    merge_cpu = engine_cpu(engine) - c1 - idle * (time.perf_counter() - t1)
    kinds = group(rows, "returner")
    stored = sum(k["docs"] for k in kinds.values())
    exp = o.expected
    if fed["fed"] != exp["returns"]:
        raise RuntimeError(f"returner: fed {fed['fed']} returns, the stream has {exp['returns']}")
    want_by_fun = {f.replace(".", "_"): n for f, n in exp["by_fun"].items()}
    got_by_fun = {k: v["docs"] for k, v in kinds.items()}
    if stored != exp["returns"] - exp["no_return"] or got_by_fun != want_by_fun:
        log(f"returner, round {rnd}: the engine holds {stored} documents {got_by_fun} for {exp['returns']} "
            f"returns fed {want_by_fun}; the returner raised {fed['errors']} times: {fed['error_kinds']}")
        if not o.allow_returner_loss:
            raise RuntimeError("the returner's store is incomplete (--allow-returner-loss to report it anyway)")
    return {"seconds": wall, "client_cpu_s": fed["cpu_s"], "feed_seconds": fed["seconds"], "engine_cpu_s": cpu,
            "idle_rate": idle, "merge_s": merge_s, "merge_cpu_s": merge_cpu, "kinds": kinds, "indices": rows, "stored": stored,
            "fed": fed["fed"], "errors": fed["errors"], "error_kinds": fed["error_kinds"],
            "error_samples": fed["error_samples"]}


def run_flavor(o, flavor: str, res: dict, work: Path) -> None:
    fw = work / flavor
    shutil.rmtree(fw, ignore_errors=True)
    fw.mkdir(parents=True)
    eng_s = benchlib.Engine(flavor, fw / "engine-salttap", heap=o.heap) if not o.no_salttap else None
    eng_r = benchlib.Engine(flavor, fw / "engine-returner", heap=o.heap) if not o.no_returner else None
    out = res["flavors"].setdefault(flavor, {"rounds": []})
    try:
        for e in (eng_s, eng_r):
            if e:
                e.start()
                out["version"] = e.info["version"]["number"]
        for e in (eng_s, eng_r):  # after both started: neither is busy starting meanwhile
            if e:
                e.idle = idle_rate(e, o.idle_seconds)
                log(f"{flavor} engine {e.dir.name}: idle {e.idle * 100:.2f} % of a CPU")
        if eng_s and o.warmup:  # the JVM's JIT: one unmeasured pass, or the first way measured pays it
            benchlib.delete_indices(eng_s.url, f"{PREFIX}-*")
            got = run_salttap(o, eng_s, o.variants[0], fw, -1)
            log(f"{flavor} warm-up pass (not counted): engine CPU {got['engine_cpu_s']:.1f} s")
        ways = ([] if o.no_salttap else [f"salttap:{v}" for v in o.variants]) + (["returner"] if eng_r else [])
        for rnd in range(o.rounds):
            order = ways[rnd % len(ways):] + ways[:rnd % len(ways)]
            r = {"order": order, "load": benchlib.loadavg()}
            log(f"{flavor} round {rnd + 1}/{o.rounds}: {benchlib.load_text()}")
            for way in order:
                if way == "returner":
                    benchlib.delete_indices(eng_r.url, "salt-*")
                    got = run_returner(o, eng_r, fw, rnd)
                    r["returner"] = got
                else:
                    benchlib.delete_indices(eng_s.url, f"{PREFIX}-*")
                    got = run_salttap(o, eng_s, way.split(":", 1)[1], fw, rnd)
                    r[way] = got
                total = sum(k["store_bytes"] for k in got["kinds"].values())
                log(f"{flavor} round {rnd + 1} {way}: {got['seconds']:.1f} s, engine CPU {got['engine_cpu_s']:.1f} s "
                    f"(idle {got['idle_rate'] * 100:.1f} %), client CPU {got['client_cpu_s']:.1f} s, "
                    f"{total / 1e6:.1f} MB after force-merge; "
                    + ", ".join(f"{k} {v['docs']:,} docs {v['store_bytes'] / 1e6:.1f} MB"
                                for k, v in sorted(got["kinds"].items())))
            out["rounds"].append(r)
            benchlib.save_results(o.results_path, res)
    finally:
        for e in (eng_s, eng_r):
            if e:
                e.stop()


# ---------------------------------------------------------------- report

def report(res: dict) -> None:
    exp = res["expected"]
    jobs, rets = exp["jobs"], exp["returns"]
    print(f"\n{jobs:,} jobs, {rets:,} returns ({', '.join(f'{f} {n:,}' for f, n in sorted(exp['by_fun'].items()))}), "
          f"{exp['states']:,} states, from {res['stream']}\n")
    for flavor, fl in res["flavors"].items():
        rounds = fl["rounds"]
        if not rounds:
            continue
        loads = ", ".join(f"{r['load'][0]:.1f}" for r in rounds)
        print(f"### {flavor} {fl.get('version', '')}: {len(rounds)} round(s), load at each round's start {loads}\n")
        ways = [w for w in rounds[0]["order"] if all(w in r for r in rounds)]
        ways.sort(key=lambda w: (w == "returner", w))

        def med(way, f):
            return median(f(r[way]) for r in rounds)

        def total_bytes(g):
            return sum(k["store_bytes"] for k in g["kinds"].values())

        print("| way | docs | store MB | bytes / job | bytes / return | engine CPU s | engine CPU ms / job | "
              "+ force-merge CPU s | client CPU s | wall s | vs returner: disk | vs returner: engine CPU |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        base = {}
        if "returner" in ways:
            base = {"bytes": med("returner", total_bytes), "cpu": med("returner", lambda g: g["engine_cpu_s"])}
        for w in ways:
            docs = med(w, lambda g: sum(k["docs"] for k in g["kinds"].values()))
            b = med(w, total_bytes)
            cpu = med(w, lambda g: g["engine_cpu_s"])
            name = "Salt's elasticsearch returner" if w == "returner" else f"salttap ({w.split(':', 1)[1]})"
            print(f"| {name} | {docs:,.0f} | {b / 1e6:,.1f} | {b / jobs:,.0f} | {b / rets:,.0f} | {cpu:.1f} | "
                  f"{cpu / jobs * 1000:.2f} | {med(w, lambda g: g.get('merge_cpu_s', 0)):.1f} | "
                  f"{med(w, lambda g: g['client_cpu_s']):.1f} | "
                  f"{med(w, lambda g: g['seconds']):.1f} | "
                  + (f"{b / base['bytes']:.2f} | {cpu / base['cpu']:.2f} |" if base else "- | - |"))
        print()
        for w in ways:
            name = "Salt's elasticsearch returner" if w == "returner" else f"salttap ({w.split(':', 1)[1]})"
            kinds = sorted({k for r in rounds for k in r[w]["kinds"]})
            print(f"{name}, per index (median of rounds):\n")
            print("| index | docs | store MB | bytes / doc | bytes / job | bytes / return |")
            print("|---|---:|---:|---:|---:|---:|")
            for k in kinds:
                d = med(w, lambda g: g["kinds"].get(k, {}).get("docs", 0))
                b = med(w, lambda g: g["kinds"].get(k, {}).get("store_bytes", 0))
                print(f"| {k} | {d:,.0f} | {b / 1e6:,.2f} | {b / d if d else 0:,.0f} | {b / jobs:,.0f} | "
                      f"{b / rets:,.0f} |")
            print()
        if "returner" in ways:
            errs = [r["returner"]["errors"] for r in rounds]
            print(f"returner: {rounds[0]['returner']['fed']:,} returns fed per round, "
                  f"stored {', '.join(str(r['returner']['stored']) for r in rounds)}; calls that raised: {errs}\n")


# ---------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--salttap", default=str(ROOT / "build/dev/salttap"))
    ap.add_argument("--stream", help="plain-framed bus stream (bench/make_stream.py --cost-jobs)")
    ap.add_argument("--salt-python", help="python of a Salt 3006 virtualenv (the returner's Salt)")
    ap.add_argument("--client-es", help="directory holding the elasticsearch client for Elasticsearch (7.17)")
    ap.add_argument("--client-os", help="directory holding the elasticsearch client for OpenSearch (7.13, the "
                                        "last that talks to it)")
    ap.add_argument("--flavors", default="elasticsearch,opensearch")
    ap.add_argument("--variants", default="shipped",
                    help=f"salttap's template variants, comma-separated, each NAME or NAME+NAME: {', '.join(VARIANTS)}")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--heap", default="2g")
    ap.add_argument("--warmup", type=int, default=1, choices=(0, 1),
                    help="one unmeasured salttap pass on its engine before the rounds (the JIT)")
    ap.add_argument("--idle-seconds", type=float, default=5.0)
    ap.add_argument("--no-returner", action="store_true", help="salttap's variants only")
    ap.add_argument("--no-salttap", action="store_true", help="the returner only (a check of its figures)")
    ap.add_argument("--returner-workers", type=int, default=5,
                    help="returner processes side by side (a master's worker_threads, 5 by default)")
    ap.add_argument("--allow-returner-loss", action="store_true",
                    help="report the returner's figures even when it stored fewer documents than it was fed")
    ap.add_argument("--work", default=str(ROOT / "build/bench-cost"))
    ap.add_argument("--out", default=str(ROOT / "build/bench-results"))
    ap.add_argument("--report", help="print the tables of an earlier results JSON and exit")
    o = ap.parse_args()
    if o.report:
        report(json.load(open(o.report)))
        return 0
    if not (o.stream and o.salt_python):
        ap.error("--stream and --salt-python are required")
    o.variants = [v for v in o.variants.split(",") if v]
    for v in o.variants:
        parse_variant(v)
    o.client_dirs = {"elasticsearch": o.client_es or "", "opensearch": o.client_os or "",
                     "opensearch3": o.client_os or ""}
    counted = subprocess.run([o.salt_python, str(ROOT / "bench" / "returner_feed.py"), "--count", o.stream],
                             check=True, capture_output=True, text=True)
    o.expected = json.loads(counted.stdout.splitlines()[-1])
    manifest = json.loads((Path(o.stream).parent / "manifest.json").read_text())
    o.expected["jobs"] = manifest["files"][Path(o.stream).name]["jobs"]
    if manifest["files"][Path(o.stream).name]["returns"] != o.expected["returns"]:
        raise SystemExit("the stream's manifest and its own count of returns differ")
    work = Path(o.work)
    work.mkdir(parents=True, exist_ok=True)
    o.results_path = benchlib.results_file(o.out, "cost")
    res = {"stream": o.stream, "expected": o.expected, "started": benchlib.utc_stamp(),
           "load_start": benchlib.loadavg(), "variants": {v: parse_variant(v)[0] for v in o.variants},
           "settings": {k: v for k, v in vars(o).items() if k not in ("report", "expected", "results_path")},
           "flavors": {}}
    log(f"{o.expected['jobs']:,} jobs, {o.expected['returns']:,} returns, {o.expected['states']:,} states; "
        f"{benchlib.load_text()}")
    for flavor in o.flavors.split(","):
        run_flavor(o, flavor, res, work)
    res["load_end"] = benchlib.loadavg()
    benchlib.finish(o.results_path, res, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
