#!/usr/bin/env python3
"""Burst benchmark: `salttap run` behind a fake master publisher that sends a whole
bench/make_stream.py stream at full speed, with the tap journal and with the old queue
(docs/tap-journal.md); and `run` on one core, by the wall clock.

A fake publisher (plain sockets) listens on <sock_dir>/master_event_pub.ipc, a real Unix
socket, as the master does; `salttap run` finds it from a master config naming that
sock_dir (`--master-config`), connects, and the publisher writes the stream's bytes as
fast as the socket takes them, in the stream's own framing (plain or len32, detected by
salttap per connection). The reader never waits for the pipeline, so what the pipeline
cannot keep up with is held in memory, journaled or dropped.

salttap runs as configured by default (reconcile and checkpoint on: the master config names
a job cache directory, empty, so the reconcile's passes find nothing to read), but for
correlator.missing_after_seconds (--missing-after, a year): the streams' _stamps are from
2026-12-01, so with the default deadlines every job would be past its deadline when it
opens (every minion missing, every return late: about twice the documents of a live
burst); a year lets jobs settle on their returns, as beside a live master (0: the default
deadlines). With --salttap-cpu (default: the last CPU) salttap is pinned to that one core
by `taskset`, and this script (the publisher) and the engine to the others.

Configurations, in the same run and the same rounds (their order rotates per round):
  journal   the defaults: a 50,000-event / 16 MiB queue, then the tap journal
  old       the queue before the journal: 200,000 events / 512 MiB, no journal
  small     the journal with tap.journal.max_bytes --small-journal (too small for the
            1M burst): drops counted, a tap_journal_full alert (only on the 1M burst)

Scenarios:
  mixed-down  the mixed stream (test.ping, cmd.run, state runs, grains, large returns),
              engine down: every document goes to the spool
  burst-down  the 1M-event burst (test.ping jobs, fresh jids), engine down
  mixed-up    the mixed stream with a real OpenSearch node up (tests/engines)
  pairs-down  memory: 200,000 test.ping jobs of two minions each (many small async jobs),
              engine down
  wide-down   memory: 1,000 test.ping jobs of 1,000 minions each, engine down
  large-down  memory: 1,000,000 events of small test.ping and cmd.run jobs with a large
              (869 KB) return every ~1,000 events, engine down
  blend-down  memory: 1,000,000 events of every shape at once: jobs of two minions, jobs of
              1,000 minions, state runs, cmd.run, grains.items, a large return every ~2,000
              events, engine down
Every run's jobs opened and returns counted by the correlator are held against the stream's
manifest (written by make_stream.py, not by this script): a mismatch fails the run's exit status.

--old-salttap runs an older build beside --salttap in the same rounds (config `<name>@before`).
With mixed-up among the scenarios, --warmup unmeasured runs of it come first: a fresh engine's
JIT compiles while it indexes its first documents.

Per run, from the first byte sent:
  - until processed: until the pipeline had seen every event (/metrics: correlator events
    plus drops reach the stream's events, queue and journal empty). /metrics is refreshed
    once a second, so the end is the last moment before that answer at which the pipeline
    thread (salttap's main thread) was busy: it ran at least a quarter of a 100 ms window
    (its run time from /proc/PID/task/PID/schedstat, sampled every 50 ms);
  - until shipped (engine up): until the engine's last answer to a bulk request: once /metrics
    shows the spool empty, `ss` gives how long ago salttap's connections to the engine last
    received anything (lastrcv, in ms);
  - the wall-clock rate (events / those seconds), CPU per event (user + sys of the process,
    /proc/PID/stat, at those moments) and events by CPU second (informational), peak RSS
    (VmHWM), drops by reason, frames that went through the journal, the largest journal and
    queue seen on /metrics, tap_journal_full alerts, the machine's load at the run's start.
Medians over --rounds (default 5); raw figures in OUT/burst-<UTC time>.json.
`--report FILE.json...` prints the tables of earlier runs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "lib"))
import benchlib  # noqa: E402
from benchlib import median  # noqa: E402

log = benchlib.logger("burst-bench")

CONFIGS = {
    "journal": {},
    "old": {"queue_max_events": 200000, "queue_max_bytes": 512 << 20, "journal": {"enabled": False}},
}

SAMPLE_S = 0.05  # how often the process and its pipeline thread are sampled
BUSY_WINDOW_S = 0.1  # a moment is busy when at least BUSY_SHARE of this window was spent running
BUSY_SHARE = 0.25


def metrics(url: str) -> dict[str, float]:
    try:
        with urllib.request.urlopen(f"{url}/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


class Publisher:
    """The master's pub socket: accepts salttap and writes the stream to it at full speed."""

    def __init__(self, path: Path, stream: Path):
        self.path, self.stream = path, stream
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        self.started = self.finished = None
        self.error = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
            with conn, open(self.stream, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                self.started = time.perf_counter()
                # sendfile: the kernel copies from the page cache, no Python in the loop, so the
                # publisher outruns salttap whenever its core is free enough.
                sent = 0
                while sent < size:
                    sent += os.sendfile(conn.fileno(), fh.fileno(), sent, size - sent)
                self.finished = time.perf_counter()
                # Keep the connection open (a master does): salttap must not see a disconnect.
                while not self.done.wait(0.2):
                    pass
        except OSError as e:
            self.error = repr(e)

    def close(self) -> None:
        self.done.set()
        self.thread.join(timeout=10)
        self.sock.close()


def write_configs(work: Path, sock_dir: Path, hosts: list[str], tap: dict, missing_after: float) -> tuple[Path, Path]:
    cache = work / "cache"
    (cache / "jobs").mkdir(parents=True)  # the master's job cache, empty: the reconcile reads nothing
    master = work / "master"
    master.write_text(f"id: bench-master\nsock_dir: {sock_dir}\ncachedir: {cache}\n")
    cfg = {"master_id": "bench",
           "tap": tap,
           **({"correlator": {"missing_after_seconds": missing_after}} if missing_after else {}),
           "indexer": {"hosts": hosts, "index_prefix": "burstbench",
                       "bulk": {"backoff_initial_ms": 1000, "backoff_max_ms": 60000},
                       "spool": {"dir": str(work / "state" / "spool"), "max_bytes": 16 << 30, "fsync": "interval"}}}
    config = work / "salttap.yaml"
    config.write_text(json.dumps(cfg, indent=1) + "\n")  # JSON is YAML
    return master, config


def drops(m: dict) -> dict:
    return {r: int(m.get(f'salttap_tap_dropped_events_total{{reason="{r}"}}', 0))
            for r in ("queue_full", "journal_full", "journal_error")}


def last_busy(samples: list[tuple], until: float) -> tuple | None:
    """The last sample at or before `until` in whose trailing BUSY_WINDOW_S the pipeline thread
    ran at least BUSY_SHARE of the time (samples: (t, process CPU s, pipeline thread run ns))."""
    for i in range(len(samples) - 1, -1, -1):
        t = samples[i][0]
        if t > until:
            continue
        j = i
        while j > 0 and t - samples[j][0] < BUSY_WINDOW_S:
            j -= 1
        if t - samples[j][0] >= BUSY_WINDOW_S * 0.5 and \
                (samples[i][2] - samples[j][2]) / 1e9 >= BUSY_SHARE * (t - samples[j][0]):
            return samples[i]
    return None


class Sampler(threading.Thread):
    """Every SAMPLE_S: (time, process CPU s, pipeline thread run ns)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.samples, self.stop_flag = pid, [], threading.Event()

    def run(self) -> None:
        while not self.stop_flag.wait(SAMPLE_S):
            cpu, pipe = benchlib.cpu_seconds(self.pid), benchlib.run_ns(self.pid, self.pid)
            if cpu is None or pipe is None:
                return
            self.samples.append((time.perf_counter(), cpu, pipe))

    def stop(self) -> None:
        self.stop_flag.set()
        self.join(timeout=5)


def last_receive_age(port: int) -> float | None:
    """Seconds since any established connection to 127.0.0.1:port last received data (ss)."""
    out = subprocess.run(["ss", "-tinH", "state", "established", f"( dport = :{port} )"], capture_output=True,
                         text=True, check=True).stdout
    ages = [int(a) for a in re.findall(r"lastrcv:(\d+)", out)]
    return min(ages) / 1000 if ages else None


def one_run(opts, stream: Path, events: int, tap: dict, hosts: list[str], name: str, salttap: str) -> dict:
    work = Path(opts.work) / name
    shutil.rmtree(work, ignore_errors=True)
    sock_dir = work / "sock"
    sock_dir.mkdir(parents=True)
    master, config = write_configs(work, sock_dir, hosts, tap, opts.missing_after)
    pub = Publisher(sock_dir / "master_event_pub.ipc", stream)
    port = benchlib.free_port()
    url = f"http://127.0.0.1:{port}"
    errlog = work / "run.log"
    pin = ["taskset", "-c", str(opts.salttap_cpu)] if opts.salttap_cpu >= 0 else []
    res = {"name": name, "events": events, "salttap": salttap, "load": benchlib.loadavg(),
           "salttap_cpu": opts.salttap_cpu}
    with open(errlog, "wb") as err:
        proc = subprocess.Popen(pin + [salttap, "run", "--config", str(config), "--master-config", str(master),
                                       "--metrics-listen", f"127.0.0.1:{port}", "--drain-seconds", "1"],
                                stdout=subprocess.DEVNULL, stderr=err)
    sampler = Sampler(proc.pid)
    sampler.start()
    engine_up = bool(hosts) and hosts[0] != opts.down_host
    try:
        deadline = time.monotonic() + opts.timeout
        processed_at = shipped_at = None
        max_journal = max_queue = 0
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"salttap run exited {proc.returncode}: {errlog}")
            if pub.error:
                raise RuntimeError(f"publisher: {pub.error}")
            time.sleep(0.25)  # /metrics: each answer costs salttap CPU, and it is refreshed once a second
            if pub.finished is None:
                continue
            now = time.perf_counter()
            m = metrics(url)
            if not m:
                continue
            max_journal = max(max_journal, m.get("salttap_tap_journal_bytes", 0))
            max_queue = max(max_queue, m.get("salttap_tap_queue_events", 0))
            lost = sum(drops(m).values()) + m.get('salttap_tap_skipped_frames_total{reason="undecodable"}', 0)
            idle = m.get("salttap_tap_queue_events", 1) == 0 and m.get("salttap_tap_journal_frames", 1) == 0
            if processed_at is None and m.get("salttap_correlator_events_total", 0) + lost >= events and idle:
                processed_at, res["metrics"] = now, m
                if not engine_up:
                    break
            if processed_at is not None and engine_up and m.get("salttap_spool_pending_documents", 1) == 0 \
                    and m.get("salttap_indexer_documents_shipped_total", 0) > 0:
                age = last_receive_age(int(hosts[0].rsplit(":", 1)[1]))
                if age is None:
                    raise RuntimeError(f"{name}: salttap holds no connection to the engine once shipped")
                shipped_at, res["metrics_shipped"] = time.perf_counter() - age, m
                break
        if processed_at is None or (engine_up and shipped_at is None):
            raise RuntimeError(f"{name}: not {'shipped' if processed_at else 'processed'} within {opts.timeout}s "
                               f"({errlog})")
        sampler.stop()
        samples = sampler.samples
        end = last_busy(samples, processed_at)
        if end is None or end[0] < pub.started:
            raise RuntimeError(f"{name}: no busy pipeline sample before the end ({len(samples)} samples)")
        if end[0] < pub.finished:  # the pipeline was starved near the end: it cannot have finished before the bytes came
            end = next((x for x in samples if x[0] >= pub.finished), end)
        m = res["metrics"]
        wall = end[0] - pub.started
        res.update({
            "seconds": round(wall, 3),
            "send_seconds": round(pub.finished - pub.started, 3),
            "events_per_s": round(events / wall),
            "cpu_seconds": round(end[1], 2),
            "cpu_us_per_event": round(end[1] / events * 1e6, 2),
            "peak_rss": benchlib.status_fields(proc.pid).get("VmHWM", 0),
            # The correlator's own measure (builds that publish it): jobs held and their bytes.
            "tracked_jobs": int(m.get("salttap_correlator_tracked_jobs", 0)),
            "settled_jobs": int(m.get("salttap_correlator_settled_jobs", 0)),
            "jobs_bytes": int(m.get("salttap_correlator_jobs_bytes", 0)),
            "drops": drops(m),
            "dropped": sum(drops(m).values()),
            "correlator_events": int(m.get("salttap_correlator_events_total", 0)),
            # What the correlator saw, held against the stream's manifest (make_stream.py's counts).
            "jobs_opened": int(m.get("salttap_correlator_jobs_opened_total", 0)),
            "returns": int(m.get("salttap_correlator_returns_total", 0)),
            "journal_spilled_frames": int(m.get("salttap_tap_journal_spilled_frames_total", 0)),
            "journal_spilled_bytes": int(m.get("salttap_tap_journal_spilled_bytes_total", 0)),
            "journal_drained_frames": int(m.get("salttap_tap_journal_drained_frames_total", 0)),
            "journal_max_bytes_seen": int(max_journal),
            "queue_max_events_seen": int(max_queue),
            "journal_refusing": int(m.get("salttap_tap_journal_refusing", 0)),
            "alerts_tap_journal_full": int(m.get('salttap_alerting_alerts_total{kind="tap_journal_full"}', 0)),
            "spool_bytes": int(m.get("salttap_spool_size_bytes", 0)),
            "spool_pending": int(m.get("salttap_spool_pending_documents", 0)),
            "reconcile_passes": int(m.get("salttap_reconcile_passes_total", 0)),
            "checkpoint_writes": int(m.get("salttap_correlator_checkpoint_writes_total", 0)),
        })
        if engine_up:
            # The process's CPU at the last sample before the engine's last answer.
            cpu_shipped = max((s[1] for s in samples if s[0] <= shipped_at), default=end[1])
            res["shipped_seconds"] = round(max(shipped_at, end[0]) - pub.started, 3)
            res["cpu_seconds_shipped"] = round(max(cpu_shipped, end[1]), 2)
            res["documents_shipped"] = int(res["metrics_shipped"].get("salttap_indexer_documents_shipped_total", 0))
        res["log_alert"] = "tap_journal_full" in errlog.read_text(errors="replace")
    finally:
        sampler.stop()
        benchlib.stop(proc, 60)
        pub.close()
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    shipped_text = (f", shipped in {res['shipped_seconds']} s ({events / res['shipped_seconds']:,.0f} ev/s)"
                    if "shipped_seconds" in res else "")
    log(f"{name}: processed in {res['seconds']} s ({res['events_per_s']:,} ev/s){shipped_text}, "
        f"{res['cpu_us_per_event']} us CPU/ev, peak RSS {res['peak_rss'] / 1e6:.0f} MB, dropped {res['dropped']} "
        f"{res['drops']}, journaled {res['journal_spilled_frames']}, alerts {res['alerts_tap_journal_full']}; "
        f"load {res['load'][0]:.1f}")
    return res


def med(runs: list[dict], key) -> float:
    return median(key(r) if callable(key) else r[key] for r in runs)


def processed_rate(r: dict) -> float:
    """Events the pipeline processed per wall second (a dropped event costs it nothing)."""
    return r["correlator_events"] / r["seconds"]


def shipped_rate(r: dict) -> float:
    return r["correlator_events"] / r["shipped_seconds"]


def cpu_per_processed(r: dict) -> float:
    return r["cpu_seconds"] / max(1, r["correlator_events"]) * 1e6


def cpu_shipped_per_processed(r: dict) -> float:
    return r.get("cpu_seconds_shipped", r["cpu_seconds"]) / max(1, r["correlator_events"]) * 1e6


def cpu_rate(r: dict) -> float:
    """Processed events per second of salttap's CPU time (informational)."""
    return r["correlator_events"] / max(r["cpu_seconds"], 1e-9)


def loads(runs: list[dict]) -> str:
    return ", ".join(f"{r['load'][0]:.1f}" for r in runs if "load" in r)


def incomplete(res):
    """The runs whose correlator did not count every job and return of the stream's manifest
    (runs that dropped events by design, the small journal, excepted)."""
    return [r["name"] for key, runs in res["runs"].items() for r in runs
            if "stream_jobs" in r and not key.split("/")[1].startswith(("small", "old"))
            and (r.get("jobs_opened"), r.get("returns")) != (r["stream_jobs"], r["stream_returns"])]


def report(res: dict) -> None:
    rounds = max(len(runs) for runs in res["runs"].values())
    pinned = (f"salttap pinned to CPU {res['salttap_cpu']} (taskset), the publisher and the engine on the others"
              if res.get("salttap_cpu", -1) >= 0 else "nothing pinned")
    print(f"\nBurst benchmark, {res['date']}, {rounds} of {res['rounds']} rounds (medians), {res['host']}; {pinned}; "
          f"reconcile and checkpoint {'on' if res.get('defaults', False) else 'off'}; "
          f"correlator.missing_after_seconds {res['missing_after']:g}")
    print("streams: " + ", ".join(f"{k} {v['events']:,} events / {v['bytes'] / 1e6:.0f} MB"
                                   for k, v in res["streams"].items()))
    print("\n| scenario | config | runs | events/s until processed (wall) | events/s until shipped (wall) | "
          "CPU µs/event until processed | until shipped | (info) events/s by CPU | peak RSS MB | dropped (median, max) "
          "| journaled (median) | largest journal seen MB | tap_journal_full alerts | load (1 min) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for key, runs in res["runs"].items():
        scen, cfg = key.split("/")
        d = [r["dropped"] for r in runs]
        shipped = "shipped_seconds" in runs[0]
        print(f"| {scen} | {cfg} | {len(runs)} | {med(runs, processed_rate):,.0f} | "
              f"{f'{med(runs, shipped_rate):,.0f}' if shipped else '-'} | {med(runs, cpu_per_processed):.1f} | "
              f"{f'{med(runs, cpu_shipped_per_processed):.1f}' if shipped else '-'} | {med(runs, cpu_rate):,.0f} | "
              f"{med(runs, 'peak_rss') / 1e6:.0f} | {median(d):,.0f} ({max(d):,}) | "
              f"{med(runs, 'journal_spilled_frames'):,.0f} | "
              f"{max(r.get('journal_max_bytes_seen', 0) for r in runs) / 1e6:,.0f} | "
              f"{med(runs, 'alerts_tap_journal_full'):.0f} | "
              f"{loads(runs)} |")
    print("\nMemory: the correlator's own measure once every event was processed (builds that publish it): jobs "
          "held (of them settled, waiting for late returns), the bytes they hold, bytes per job held; peak RSS.")
    for key, runs in res["runs"].items():
        if not any(r.get("tracked_jobs") for r in runs):
            print(f"- {key}: peak RSS {med(runs, 'peak_rss') / 1e6:.0f} MB (no correlator memory metrics)")
            continue
        print(f"- {key}: {med(runs, 'tracked_jobs'):,.0f} jobs held ({med(runs, 'settled_jobs'):,.0f} settled), "
              f"{med(runs, 'jobs_bytes') / 1e6:.1f} MB, "
              f"{med(runs, lambda r: r['jobs_bytes'] / max(r['tracked_jobs'], 1)):,.0f} bytes per job; "
              f"peak RSS {med(runs, 'peak_rss') / 1e6:.0f} MB")
    print("\nCompleteness: jobs opened and returns counted by the correlator against the stream's manifest "
          "(make_stream.py's own counts), per run.")
    for key, runs in res["runs"].items():
        short = incomplete({"runs": {key: runs}})
        print(f"- {key}: " + (f"MISMATCH in {', '.join(short)}" if short else
                              f"every run saw all {runs[0].get('stream_jobs', 0):,} jobs and "
                              f"{runs[0].get('stream_returns', 0):,} returns"))
    print("\nPer run: events/s until processed (until shipped); the seconds the publisher took to send the stream; "
          "frames journaled. A run whose journal took nothing never had the queue full: salttap kept up with the "
          "publisher, and its rate is the publisher's, a lower bound of salttap's.")
    for key, runs in res["runs"].items():
        cells = "; ".join(f"{processed_rate(r):,.0f}" + (f" ({shipped_rate(r):,.0f})" if "shipped_seconds" in r else "")
                          + f", sent in {r['send_seconds']:.1f} s, {r['journal_spilled_frames']:,} journaled"
                          for r in runs)
        print(f"- {key}: {cells}")
    print("\nRatios journal / old (medians):")
    for scen in sorted({k.split("/")[0] for k in res["runs"]}):
        a, b = res["runs"].get(f"{scen}/journal"), res["runs"].get(f"{scen}/old")
        if not a or not b:
            continue
        print(f"- {scen}: processed events/s x{med(a, processed_rate) / med(b, processed_rate):.2f}, "
              f"CPU/event x{med(a, cpu_per_processed) / med(b, cpu_per_processed):.2f}, "
              f"peak RSS x{med(a, 'peak_rss') / med(b, 'peak_rss'):.2f}")
    before = [k for k in res["runs"] if k.endswith("@before")]
    if before:
        print("\nRatios this build / before (medians):")
    for key in before:
        a, b = res["runs"].get(key[: -len("@before")]), res["runs"][key]
        if not a:
            continue
        shipped = "shipped_seconds" in a[0] and "shipped_seconds" in b[0]
        print(f"- {key[: -len('@before')]}: events/s until processed x{med(a, processed_rate) / med(b, processed_rate):.2f}"
              + (f", until shipped x{med(a, shipped_rate) / med(b, shipped_rate):.2f}" if shipped else "")
              + f", CPU/event x{med(a, cpu_per_processed) / med(b, cpu_per_processed):.2f}"
              f", peak RSS x{med(a, 'peak_rss') / med(b, 'peak_rss'):.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--salttap", default=str(ROOT / "build" / "dev" / "salttap"))
    ap.add_argument("--old-salttap", help="an older build, run beside --salttap in the same rounds (@before)")
    ap.add_argument("--streams", default=str(ROOT / "build" / "bench-burst-streams"))
    ap.add_argument("--work", default="/tmp/salttap-burst-bench")
    ap.add_argument("--out", default=str(ROOT / "build" / "bench-results"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scenarios", default="mixed-down,burst-down,mixed-up")
    ap.add_argument("--configs", default="journal,old,small", help="which configurations to run (small: burst only)")
    ap.add_argument("--small-journal", type=int, default=64 << 20, help="tap.journal.max_bytes of `small`")
    ap.add_argument("--missing-after", type=float, default=366 * 86400,
                    help="correlator.missing_after_seconds (0: salttap's deadlines). The streams' _stamps are "
                         "from 2026-12-01: with salttap's deadlines every job is past its deadline when it opens")
    ap.add_argument("--salttap-cpu", type=int, default=(os.cpu_count() or 1) - 1 if (os.cpu_count() or 1) >= 2 else -1,
                    help="the one CPU salttap is pinned to (taskset); this script and the engine get the others "
                         "(-1: nothing pinned)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="unmeasured runs of mixed-up first, when it is among the scenarios (the engine's JIT)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--keep", action="store_true", help="keep each run's directory")
    ap.add_argument("--report", nargs="+", help="print the tables of earlier runs' JSON (several: their runs merged)")
    opts = ap.parse_args()
    if opts.report:
        merged = None
        for f in opts.report:
            res = json.loads(Path(f).read_text())
            if merged is None:
                merged = res
            else:
                merged["rounds"] += res["rounds"]
                for key, runs in res["runs"].items():
                    merged["runs"].setdefault(key, []).extend(runs)
        report(merged)
        return 0
    if opts.salttap_cpu >= 0:
        others = set(range(os.cpu_count() or 1)) - {opts.salttap_cpu}
        if others:  # the publisher (this process's threads) and the engine (a child) off salttap's core
            os.sched_setaffinity(0, others)
    opts.down_host = f"http://127.0.0.1:{benchlib.free_port()}"  # nobody listens there
    streams_dir = Path(opts.streams)
    files = json.loads((streams_dir / "manifest.json").read_text())["files"]
    streams = {"mixed": "mixed.plain.raw", "burst": "small.plain.raw", "pairs": "pairs.plain.raw",
               "wide": "wide.plain.raw", "large": "large.plain.raw", "blend": "blend.plain.raw"}
    info = {key: {"file": str(streams_dir / name), "events": int(files[name]["events"]),
                  "bytes": int(files[name]["bytes"]), "jobs": int(files[name].get("jobs", 0)),
                  "returns": int(files[name].get("returns", 0))}
            for key, name in streams.items() if name in files}
    scenarios = opts.scenarios.split(",")
    binaries = [("", opts.salttap)] + ([("@before", opts.old_salttap)] if opts.old_salttap else [])
    engine = None
    if "mixed-up" in scenarios:
        engine = benchlib.Engine("opensearch", Path(opts.work) / "opensearch")
        engine.start()
    path = benchlib.results_file(opts.out, "burst")
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rounds": opts.rounds,
           "host": f"{os.cpu_count()} CPUs, {benchlib.load_text()} at the start", "streams": info,
           "salttap": opts.salttap, "old_salttap": opts.old_salttap, "missing_after": opts.missing_after,
           "salttap_cpu": opts.salttap_cpu, "defaults": True, "runs": {}}
    try:
        for i in range(opts.warmup if engine else 0):
            benchlib.delete_indices(engine.url, "burstbench-*")
            one_run(opts, Path(info["mixed"]["file"]), info["mixed"]["events"], {}, [engine.url], f"warm-up-{i}",
                    opts.salttap)
        for rnd in range(opts.rounds):
            plan = []
            for scen in scenarios:
                stream = scen.split("-")[0]  # burst, mixed; pairs, wide, large, blend (memory)
                hosts = [engine.url] if scen.endswith("-up") else [opts.down_host]
                cfgs = dict(CONFIGS)
                if scen == "burst-down":
                    cfgs["small"] = {"journal": {"max_bytes": opts.small_journal, "segment_bytes": 4 << 20}}
                for cfg, tap in cfgs.items():
                    if cfg not in opts.configs.split(","):
                        continue
                    for label, binary in binaries:
                        plan.append((scen, cfg + label, stream, hosts, tap, binary))
            plan = plan[rnd % len(plan):] + plan[:rnd % len(plan)]  # rotate the order per round
            for scen, cfg, stream, hosts, tap, binary in plan:
                if engine and scen.endswith("-up"):
                    benchlib.delete_indices(engine.url, "burstbench-*")
                r = one_run(opts, Path(info[stream]["file"]), info[stream]["events"], tap, hosts,
                            f"{scen}-{cfg.replace('@', '-')}-{rnd}", binary)
                r["stream_jobs"], r["stream_returns"] = info[stream]["jobs"], info[stream]["returns"]
                res["runs"].setdefault(f"{scen}/{cfg}", []).append(r)
                benchlib.save_results(path, res)
    finally:
        if engine:
            engine.stop()
    res["host"] += f", {benchlib.load_text()} at the end"
    benchlib.finish(path, res, report)
    short = incomplete(res)
    if short:
        print(f"FAILED: runs that did not see every job and return of their stream: {', '.join(short)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
