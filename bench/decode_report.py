#!/usr/bin/env python3
"""Table of the decode benchmark: medians per decoder and file, and ratios.

Inputs: Google Benchmark JSON (salttap, msgpack-c), salt_decode.py JSON lines,
and the streams' manifest.json (event and byte counts).
"""
import json
import statistics
import sys


def main(cpp_json, salt_jsonl, manifest_json):
    manifest = json.load(open(manifest_json))["files"]
    runs = {}  # (decoder, file) -> [seconds per pass]
    for b in json.load(open(cpp_json))["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"]  # BM_salttap/"small.plain.raw"/min_time:.../real_time
        decoder = "salttap" if name.startswith("BM_salttap") else "msgpack-c"
        file = name.split('"')[1]
        unit = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[b["time_unit"]]
        runs.setdefault((decoder, file), []).append(b["real_time"] * unit)  # wall, like salt_decode.py
    for line in open(salt_jsonl):
        r = json.loads(line)
        file = r["file"].rsplit("/", 1)[-1]
        runs.setdefault(("salt-python", file), []).append(r.get("seconds_median", r["seconds"]))

    print("| stream | decoder | events/s (median) | MB/s | vs Salt's Python | vs bare msgpack-c |")
    print("|---|---|---:|---:|---:|---:|")
    for file in ["small.plain.raw", "small.len32.raw", "mixed.plain.raw", "mixed.len32.raw"]:
        events, size = manifest[file]["events"], manifest[file]["bytes"]
        med = {d: statistics.median(runs[(d, file)]) for d in ("salttap", "msgpack-c", "salt-python")
               if (d, file) in runs}
        for d in ("salttap", "msgpack-c", "salt-python"):
            if d not in med:
                continue
            s = med[d]
            vs_py = med["salt-python"] / s if "salt-python" in med else float("nan")
            vs_mp = med["msgpack-c"] / s if "msgpack-c" in med else float("nan")
            print(f"| {file} | {d} | {events / s:,.0f} | {size / s / 1e6:,.0f} | {vs_py:.1f}x | {vs_mp:.2f}x |")


def correlator_table(path):
    runs = {}
    memory = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].split("/")[0]
        if name == "BM_memory_pending":
            memory = b
            continue
        unit = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[b["time_unit"]]
        runs.setdefault(name, []).append((b["real_time"] * unit, b["cpu_time"] * unit, b["items_per_second"]))
    dec = statistics.median(r[1] for r in runs["BM_decode"])
    both = statistics.median(r[1] for r in runs["BM_decode_correlate"])
    events = statistics.median(r[2] * r[0] for r in runs["BM_decode"])  # events per pass
    print()
    print("| 40 jobs x 10,000 minions (400,040 events) | CPU per pass (median) | ns per event | events/s |")
    print("|---|---:|---:|---:|")
    print(f"| decode | {dec * 1e3:.1f} ms | {dec / events * 1e9:.0f} | {events / dec:,.0f} |")
    print(f"| decode + correlate | {both * 1e3:.1f} ms | {both / events * 1e9:.0f} | {events / both:,.0f} |")
    corr = both - dec
    print(f"| correlator alone (difference) | {corr * 1e3:.1f} ms | {corr / events * 1e9:.0f} | {events / corr:,.0f} |")
    print(f"\ncorrelator / decoder cost per event: {corr / dec:.2f}")
    if memory:
        print(f"memory per pending minion (100 jobs x 10,000): {memory['heap_bytes_per_pending_minion']:.1f} bytes "
              f"(heap, mallinfo2), {memory['accounted_bytes_per_pending_minion']:.1f} bytes (the correlator's own count)")


if __name__ == "__main__":
    main(*sys.argv[1:4])
    if len(sys.argv) > 4:
        correlator_table(sys.argv[4])
