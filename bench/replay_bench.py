#!/usr/bin/env python3
"""End-to-end replay benchmark: whole processes on the same stream file, rounds
interleaved, medians, every command's output counted and checked.

    replay_bench.py STREAM --manifest MANIFEST --salttap BIN --python PY [--baseline BIN] [--repeat R]

Per round, in this order, one process each:
  events      BIN replay STREAM --output events
  python      PY bench/bare_reader.py STREAM   (the C msgpack, json.dumps per event)
  documents   BIN replay STREAM --output documents
and, with --baseline (an older salttap), the same two replays by it, so
before and after are measured side by side on the same machine state.

Each command's stdout goes through a pipe to this script, which counts its lines and bytes
(1 MiB reads; nothing is kept), the same for every command. The counts are checked against
what bench/make_stream.py wrote into the stream (its manifest), not against anything the
measured commands say of themselves: `--output events` and the bare reader must write one
line per event of the stream. The documents are checked once, before the rounds, from a
file: every event of the stream a job opened by `salt/job/<jid>/new` gets one job in the
job documents (distinct jids), every return event its return document (distinct
`_id`s); then each timed run must write exactly as many lines as that checked run. A
mismatch stops the benchmark.

Prints one row per command (medians of wall and of CPU time, user + system, and events/s
by each), the ratios by each and the machine's load; the last line is the same as JSON.
On a shared machine the CPU times are the steadier figures.
"""

import argparse
import collections
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "lib"))
import benchlib  # noqa: E402
from benchlib import median  # noqa: E402

log = benchlib.logger("replay-bench")


def run(cmd, expect_lines):
    """Wall seconds and CPU seconds (user + system) of one process; its stdout counted."""
    m = benchlib.run_measured(cmd, stderr=None, count_lines=True)
    if m.returncode != 0:
        sys.exit("failed (%d): %s" % (m.returncode, " ".join(cmd)))
    if m.stdout_lines != expect_lines:
        sys.exit("%s wrote %d lines, expected %d" % (" ".join(cmd), m.stdout_lines, expect_lines))
    return m.seconds, m.cpu_s


def check_documents(cmd, jobs, returns):
    """Runs `--output documents` once into a file; checks its job and return documents against the
    stream's jobs and returns; gives the number of lines every timed run must write."""
    with tempfile.TemporaryFile() as out:
        m = benchlib.run_measured(cmd, stdout=out)
        if m.returncode != 0:
            sys.exit("failed (%d): %s" % (m.returncode, " ".join(cmd)))
        out.seek(0)
        lines, kinds, job_jids, return_ids = 0, collections.Counter(), set(), set()
        while True:
            action = out.readline()
            if not action:
                break
            source = out.readline()
            lines += 2 if source else 1
            meta = next(iter(json.loads(action).values()))
            kind = meta["_index"].split("-")[1]
            kinds[kind] += 1
            if kind == "jobs":
                job_jids.add(json.loads(source)["jid"])
            elif kind == "returns":
                return_ids.add(meta["_id"])
    problems = []
    if len(job_jids) != jobs:
        problems.append("%d distinct jobs among the job documents, the stream opens %d" % (len(job_jids), jobs))
    # A minion that never returned gets a return document too (status missing): at least one per return event.
    if len(return_ids) < returns:
        problems.append("%d return documents, the stream has %d return events" % (len(return_ids), returns))
    if problems:
        sys.exit("%s: %s" % (" ".join(cmd), "; ".join(problems)))
    log("documents checked: %d documents %s; %d jobs, %d return documents for %d return events"
        % (sum(kinds.values()), dict(kinds), len(job_jids), len(return_ids), returns))
    return lines, sum(kinds.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stream")
    ap.add_argument("--manifest", required=True, help="bench/make_stream.py's manifest.json of the stream")
    ap.add_argument("--salttap", required=True)
    ap.add_argument("--python", required=True, help="a python with the msgpack C extension")
    ap.add_argument("--baseline", help="an older salttap binary, measured in the same rounds")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    entry = json.loads(Path(args.manifest).read_text())["files"][os.path.basename(args.stream)]
    events = entry["events"]

    commands = {
        "events": [args.salttap, "replay", args.stream, "--output", "events"],
        "python": [args.python, str(HERE / "bare_reader.py"), args.stream],
        "documents": [args.salttap, "replay", args.stream, "--output", "documents"],
    }
    if args.baseline:
        commands["baseline events"] = [args.baseline, "replay", args.stream, "--output", "events"]
        commands["baseline documents"] = [args.baseline, "replay", args.stream, "--output", "documents"]
    expect = {"events": events, "python": events, "baseline events": events}
    expect["documents"], documents = check_documents(commands["documents"], entry["jobs"], entry["returns"])
    if args.baseline:
        expect["baseline documents"], _ = check_documents(commands["baseline documents"], entry["jobs"],
                                                          entry["returns"])
    times = {name: [] for name in commands}
    cpu = {name: [] for name in commands}
    loads = []
    for r in range(args.repeat):
        loads.append(benchlib.loadavg()[0])
        for name, cmd in commands.items():
            wall, used = run(cmd, expect[name])
            times[name].append(wall)
            cpu[name].append(used)
        log("round %d/%d (load %.1f): %s" % (r + 1, args.repeat, loads[-1],
                                               ", ".join("%s %.2fs" % (n, t[-1]) for n, t in times.items())))

    med = {n: median(t) for n, t in times.items()}
    med_cpu = {n: median(t) for n, t in cpu.items()}
    print("%d events (%d documents), %d rounds, medians of wall time and of CPU time (user + system); every run's "
          "output counted (events: one line each; documents: as the checked run); the machine's 1-minute load at "
          "each round's start: %s" % (events, documents, args.repeat, ", ".join("%.1f" % x for x in loads)))
    print("| command | wall s (median) | wall range | events/s (wall) | CPU s (median) | events/s (CPU) |")
    print("|---|---:|---:|---:|---:|---:|")
    for n, t in times.items():
        print("| %s | %.2f | %.2f-%.2f | %s | %.2f | %s |" % (
            n, med[n], min(t), max(t), format(round(events / med[n]), ","), med_cpu[n],
            format(round(events / med_cpu[n]), ",")))
    pairs = [("events vs python", "python", "events"), ("documents vs python", "python", "documents")]
    if args.baseline:
        pairs += [("events: after vs before", "baseline events", "events"),
                  ("documents: after vs before", "baseline documents", "documents")]
    ratios = {}
    for label, slow, fast in pairs:
        per_round = [a / b for a, b in zip(times[slow], times[fast])]
        ratios[label] = {"wall": med[slow] / med[fast], "cpu": med_cpu[slow] / med_cpu[fast],
                         "wall_per_round": per_round}
        print("%s: %.1fx wall, %.1fx CPU; per round (wall) %s" % (
            label, ratios[label]["wall"], ratios[label]["cpu"], ", ".join("%.1f" % x for x in per_round)))
    print(json.dumps({"events": events, "documents": documents, "rounds": args.repeat, "loads": loads,
                      "wall": times, "cpu": cpu, "ratios": ratios}))


if __name__ == "__main__":
    main()
