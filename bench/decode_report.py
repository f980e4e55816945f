#!/usr/bin/env python3
"""Table of the decode benchmark: medians per decoder and file, and ratios.

    decode_report.py --manifest MANIFEST.json --salt SALT.jsonl --cpp DECODE.json... [--correlator CORR.json...]
                     [--loads FILE]

Inputs: the streams' manifest.json (bench/make_stream.py: event and byte counts),
salt_decode.py JSON lines, Google Benchmark JSON of the decoders (salttap, msgpack-c) and
of the correlator benchmark, one file per round, and the machine's load at each round's
start (one number a line). Every run must have decoded exactly the events the manifest lists for its stream
(each C++ run reports its count as the counter `events`, salt_decode.py as `events`), and
no run may have stopped with an error: anything else exits 1, the tables unprinted.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from benchlib import median  # noqa: E402

FILES = ["small.plain.raw", "small.len32.raw", "mixed.plain.raw", "mixed.len32.raw"]
DECODERS = ("salttap", "msgpack-c", "salt-python")


SECONDS_PER = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}  # Google Benchmark's time units


def iterations(paths, problems):
    """The iteration runs of Google Benchmark JSON files (not their aggregates); a run that
    stopped with an error is added to problems instead."""
    for path in paths:
        for b in json.load(open(path))["benchmarks"]:
            if b.get("error_occurred"):
                problems.append(f"{b['name']}: {b.get('error_message')}")
            elif b.get("run_type") == "iteration":
                yield b


def seconds(b, key: str) -> float:
    """A run's real_time or cpu_time, in seconds."""
    return b[key] * SECONDS_PER[b["time_unit"]]


def read_runs(cpp_jsons, salt_jsonl, manifest):
    """{(decoder, file): [seconds per pass]}, and the problems found on the way."""
    runs, problems = {}, []
    for b in iterations(cpp_jsons, problems):
        name = b["run_name"]  # BM_salttap/"small.plain.raw"/min_time:.../real_time
        decoder = "salttap" if name.startswith("BM_salttap") else "msgpack-c"
        file = name.split('"')[1]
        if b.get("events") != manifest[file]["events"]:
            problems.append(f"{name}: decoded {b.get('events')} events, the stream has {manifest[file]['events']}")
        runs.setdefault((decoder, file), []).append(seconds(b, "real_time"))  # wall, like salt_decode.py
    for line in open(salt_jsonl):
        r = json.loads(line)
        file = r["file"].rsplit("/", 1)[-1]
        if r["events"] != manifest[file]["events"] or r["bytes"] != manifest[file]["bytes"]:
            problems.append(f"salt-python {file}: {r['events']} events, {r['bytes']} bytes; the stream has "
                            f"{manifest[file]['events']}, {manifest[file]['bytes']}")
        runs.setdefault(("salt-python", file), []).append(r.get("seconds_median", r["seconds"]))
    return runs, problems


def decode_table(runs, manifest):
    print("| stream | decoder | events/s (median) | MB/s | vs Salt's Python | vs bare msgpack-c |")
    print("|---|---|---:|---:|---:|---:|")
    for file in FILES:
        events, size = manifest[file]["events"], manifest[file]["bytes"]
        med = {d: median(runs[(d, file)]) for d in DECODERS if (d, file) in runs}
        for d in DECODERS:
            if d not in med:
                continue
            s = med[d]
            vs_py = med["salt-python"] / s if "salt-python" in med else float("nan")
            vs_mp = med["msgpack-c"] / s if "msgpack-c" in med else float("nan")
            print(f"| {file} | {d} | {events / s:,.0f} | {size / s / 1e6:,.0f} | {vs_py:.1f}x | {vs_mp:.2f}x |")


def correlator_runs(paths):
    """({name: [(wall s, cpu s, events)]}, the memory run, problems)."""
    runs, memory, problems = {}, {}, []
    for b in iterations(paths, problems):
        name = b["run_name"].split("/")[0]
        if name == "BM_memory_pending":
            memory = b
            continue
        runs.setdefault(name, []).append((seconds(b, "real_time"), seconds(b, "cpu_time"), b["events"]))
    for name in ("BM_decode", "BM_decode_correlate"):
        if name not in runs:
            problems.append(f"{name}: no run")
    return runs, memory, problems


def correlator_table(runs, memory):
    dec = median(r[1] for r in runs["BM_decode"])
    both = median(r[1] for r in runs["BM_decode_correlate"])
    events = runs["BM_decode"][0][2]  # per pass; checked against the generated stream by the benchmark itself
    print()
    print(f"| 40 jobs x 10,000 minions ({events:,.0f} events) | CPU per pass (median) | ns per event | events/s |")
    print("|---|---:|---:|---:|")
    print(f"| decode | {dec * 1e3:.1f} ms | {dec / events * 1e9:.0f} | {events / dec:,.0f} |")
    print(f"| decode + correlate | {both * 1e3:.1f} ms | {both / events * 1e9:.0f} | {events / both:,.0f} |")
    corr = both - dec
    print(f"| correlator alone (difference) | {corr * 1e3:.1f} ms | {corr / events * 1e9:.0f} | {events / corr:,.0f} |")
    print(f"\ncorrelator / decoder cost per event: {corr / dec:.2f}")
    if memory:
        print(f"memory per pending minion (100 jobs x 10,000): {memory['heap_bytes_per_pending_minion']:.1f} bytes "
              f"(heap, mallinfo2), {memory['accounted_bytes_per_pending_minion']:.1f} bytes (the correlator's own count)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--salt", required=True)
    ap.add_argument("--cpp", nargs="+", required=True)
    ap.add_argument("--correlator", nargs="*", default=[])
    ap.add_argument("--loads")
    a = ap.parse_args()
    manifest = json.load(open(a.manifest))["files"]
    runs, problems = read_runs(a.cpp, a.salt, manifest)
    corr = correlator_runs(a.correlator) if a.correlator else None
    if corr:
        problems += corr[2]
    if problems:
        print("decode benchmark: wrong counts or failed runs:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    rounds = len(a.cpp)
    loads = open(a.loads).read().split() if a.loads else []
    print(f"{rounds} rounds, medians; every decoder's count of events checked against the stream's; "
          f"the machine's 1-minute load at each round's start: {', '.join(loads) or 'not recorded'}\n")
    decode_table(runs, manifest)
    if corr:
        correlator_table(corr[0], corr[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
