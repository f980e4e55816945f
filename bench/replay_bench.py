#!/usr/bin/env python3
"""End-to-end replay benchmark: whole processes on the same stream file,
output to /dev/null, rounds interleaved, medians of wall time.

    replay_bench.py STREAM --events N --salttap BIN --python PY [--baseline BIN] [--repeat R]

Per round, in this order, one process each:
  events      BIN replay STREAM --output events
  python      PY bench/bare_reader.py STREAM   (the C msgpack, json.dumps per event)
  documents   BIN replay STREAM --output documents
and, with --baseline (an older salttap), the same two replays by it, so
before and after are measured side by side on the same machine state.
Prints one row per command (medians of wall and of CPU time, user + system,
and events/s by each) and the ratios by each; the last line is the same as
JSON. On a shared machine the CPU times are the steadier figures.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    """Wall seconds and CPU seconds (user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.run(cmd, stdout=null, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stderr.decode(errors="replace")))
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stream")
    ap.add_argument("--events", type=int, required=True, help="events in the stream (make_stream.py's manifest)")
    ap.add_argument("--salttap", required=True)
    ap.add_argument("--python", required=True, help="a python with the msgpack C extension")
    ap.add_argument("--baseline", help="an older salttap binary, measured in the same rounds")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    commands = {
        "events": [args.salttap, "replay", args.stream, "--output", "events"],
        "python": [args.python, os.path.join(HERE, "bare_reader.py"), args.stream],
        "documents": [args.salttap, "replay", args.stream, "--output", "documents"],
    }
    if args.baseline:
        commands["baseline events"] = [args.baseline, "replay", args.stream, "--output", "events"]
        commands["baseline documents"] = [args.baseline, "replay", args.stream, "--output", "documents"]
    times = {name: [] for name in commands}
    cpu = {name: [] for name in commands}
    for r in range(args.repeat):
        for name, cmd in commands.items():
            wall, used = run(cmd)
            times[name].append(wall)
            cpu[name].append(used)
        print("round %d/%d: %s" % (r + 1, args.repeat, ", ".join("%s %.2fs" % (n, t[-1]) for n, t in times.items())),
              file=sys.stderr)

    med = {n: statistics.median(t) for n, t in times.items()}
    med_cpu = {n: statistics.median(t) for n, t in cpu.items()}
    print("%d events, %d rounds, medians of wall time and of CPU time (user + system)" % (args.events, args.repeat))
    print("| command | wall s (median) | wall range | events/s (wall) | CPU s (median) | events/s (CPU) |")
    print("|---|---:|---:|---:|---:|---:|")
    for n, t in times.items():
        print("| %s | %.2f | %.2f-%.2f | %s | %.2f | %s |" % (
            n, med[n], min(t), max(t), format(round(args.events / med[n]), ","), med_cpu[n],
            format(round(args.events / med_cpu[n]), ",")))
    pairs = [("events vs python", "python", "events"), ("documents vs python", "python", "documents")]
    if args.baseline:
        pairs += [("events: after vs before", "baseline events", "events"),
                  ("documents: after vs before", "baseline documents", "documents")]
    ratios = {}
    for label, slow, fast in pairs:
        ratios[label] = {"wall": med[slow] / med[fast], "cpu": med_cpu[slow] / med_cpu[fast]}
        print("%s: %.1fx wall, %.1fx CPU" % (label, ratios[label]["wall"], ratios[label]["cpu"]))
    print(json.dumps({"events": args.events, "rounds": args.repeat, "wall": times, "cpu": cpu, "ratios": ratios}))


if __name__ == "__main__":
    main()
