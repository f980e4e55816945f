#!/usr/bin/env python3
"""Burst benchmark: `salttap run` behind a fake master publisher that sends a whole
bench/make_stream.py stream at full speed, with the tap journal and with the old queue
(docs/tap-journal.md).

A fake publisher (plain sockets) listens on <sock_dir>/master_event_pub.ipc, a real Unix
socket, as the master does; `salttap run` finds it from a master config naming that
sock_dir (`--master-config`), connects, and the publisher writes the stream's bytes as
fast as the socket takes them, in the stream's own framing (plain or len32, detected by
salttap per connection). The reader never waits for the pipeline, so what the pipeline
cannot keep up with is held in memory, journaled or dropped.

Configurations, in the same run and the same rounds (their order rotates per round):
  journal   the defaults: a 50,000-event / 16 MiB queue, then the tap journal
  old       the queue before the journal: 200,000 events / 512 MiB, no journal
  small     the journal with tap.journal.max_bytes --small-journal (too small for the
            1M burst): drops counted, a tap_journal_full alert (only on the 1M burst)

Scenarios:
  mixed-down  the mixed stream (test.ping, cmd.run, state runs, grains, large returns),
              engine down: every document goes to the spool
  burst-down  the 1M-event burst (test.ping jobs, fresh jids), engine down
  mixed-up    the mixed stream with a real OpenSearch node up (tests/engines/engine.py)

The streams' _stamps are from 2026-12-01, so with salttap's deadlines every job would be
past its deadline when it opens (every minion missing, every return late: about twice the
documents of a live burst); --missing-after (default a year) sets correlator.missing_after_seconds
so that jobs settle on their returns as on a live master (0: salttap's deadlines).
--old-salttap runs an older build beside --salttap in the same rounds (config `<name>@before`),
--configs picks configurations (journal,old,small).

Per run: the time from the first byte sent until the pipeline had seen every event
(salttap_correlator_events_total plus the drops reach the stream's events, the queue
and the journal are empty; /metrics is refreshed once a second, so the end is taken as
the last moment salttap's CPU time grew before that sample), events/s over it, CPU
(user+sys from /proc/PID/stat) per event and events/s by CPU (events / CPU seconds: the rate
on one core), with the engine up also the CPU until the spool has shipped everything, peak RSS (VmHWM), drops by reason, the spool
and journal sizes, and tap_journal_full alerts. Medians over --rounds; raw figures in
OUT/burst-<UTC time>.json. `--report FILE.json` prints the tables of an earlier run.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "harness"))

CLK_TCK = os.sysconf("SC_CLK_TCK")

CONFIGS = {
    "journal": {},
    "old": {"queue_max_events": 200000, "queue_max_bytes": 512 << 20, "journal": {"enabled": False}},
}


def log(msg: str) -> None:
    print(f"[burst-bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


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


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


class Publisher:
    """The master's pub socket: accepts salttap and writes the stream to it at full speed."""

    def __init__(self, path: Path, stream: Path):
        self.path, self.stream = path, stream
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        self.started = self.finished = None
        self.error = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
            with conn, open(self.stream, "rb") as fh:
                self.started = time.perf_counter()
                while chunk := fh.read(1 << 20):
                    conn.sendall(chunk)
                self.finished = time.perf_counter()
                # Keep the connection open (a master does): salttap must not see a disconnect.
                while not self.done.wait(0.2):
                    pass
        except OSError as e:
            self.error = repr(e)

    done = threading.Event()

    def close(self) -> None:
        self.done.set()
        self.thread.join(timeout=10)
        self.sock.close()


def write_configs(work: Path, sock_dir: Path, hosts: list[str], tap: dict, missing_after: float) -> tuple[Path, Path]:
    master = work / "master"
    master.write_text(f"id: bench-master\nsock_dir: {sock_dir}\ncachedir: {work / 'cache'}\n")
    cfg = {"master_id": "bench",
           "reconcile": {"enabled": False},
           "checkpoint": {"enabled": False},
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


def one_run(opts, stream: Path, events: int, tap: dict, hosts: list[str], name: str, salttap: str) -> dict:
    work = Path(opts.work) / name
    shutil.rmtree(work, ignore_errors=True)
    sock_dir = work / "sock"
    sock_dir.mkdir(parents=True)
    master, config = write_configs(work, sock_dir, hosts, tap, opts.missing_after)
    pub = Publisher(sock_dir / "master_event_pub.ipc", stream)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    errlog = work / "run.log"
    with open(errlog, "wb") as err:
        proc = subprocess.Popen([salttap, "run", "--config", str(config), "--master-config", str(master),
                                 "--metrics-listen", f"127.0.0.1:{port}", "--drain-seconds", "1"],
                                stdout=subprocess.DEVNULL, stderr=err)
    res = {"name": name, "events": events, "salttap": salttap}
    try:
        deadline = time.monotonic() + opts.timeout
        last_cpu, last_grow = 0.0, None
        done_at = None
        last_fetch = 0.0
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"salttap run exited {proc.returncode}: {errlog}")
            if pub.error:
                raise RuntimeError(f"publisher: {pub.error}")
            cpu = cpu_seconds(proc.pid)
            now = time.perf_counter()
            if cpu > last_cpu:
                last_cpu, last_grow = cpu, now
            # /metrics is refreshed once a second: asked 4 times a second (each answer costs salttap CPU).
            if pub.finished is not None and now - last_fetch >= 0.25:
                last_fetch = now
                m = metrics(url)
                lost = sum(drops(m).values())
                seen = m.get("salttap_correlator_events_total", 0)
                idle = m.get("salttap_tap_queue_events", 1) == 0 and m.get("salttap_tap_journal_frames", 1) == 0
                if m and seen + lost + m.get('salttap_tap_skipped_frames_total{reason="undecodable"}', 0) >= events \
                        and idle:
                    done_at = min(now, last_grow or now)
                    res["metrics"] = m
                    break
            time.sleep(0.05)
        if done_at is None:
            raise RuntimeError(f"{name}: the pipeline did not see every event within {opts.timeout}s ({errlog})")
        m = res["metrics"]
        wall = done_at - pub.started
        res.update({
            "seconds": round(wall, 3),
            "send_seconds": round(pub.finished - pub.started, 3),
            "events_per_s": round(events / wall),
            "cpu_seconds": round(last_cpu, 2),
            "cpu_us_per_event": round(last_cpu / events * 1e6, 2),
            "peak_rss": peak_rss(proc.pid),
            "drops": drops(m),
            "dropped": sum(drops(m).values()),
            "correlator_events": int(m.get("salttap_correlator_events_total", 0)),
            "journal_spilled_frames": int(m.get("salttap_tap_journal_spilled_frames_total", 0)),
            "journal_spilled_bytes": int(m.get("salttap_tap_journal_spilled_bytes_total", 0)),
            "journal_drained_frames": int(m.get("salttap_tap_journal_drained_frames_total", 0)),
            "journal_refusing": int(m.get("salttap_tap_journal_refusing", 0)),
            "alerts_tap_journal_full": int(m.get('salttap_alerting_alerts_total{kind="tap_journal_full"}', 0)),
            "spool_bytes": int(m.get("salttap_spool_size_bytes", 0)),
            "spool_pending": int(m.get("salttap_spool_pending_documents", 0)),
        })
        if hosts and hosts[0] != opts.down_host:
            # Engine up: until the spool has shipped everything (informational).
            t = time.monotonic()
            while time.monotonic() - t < opts.timeout:
                if metrics(url).get("salttap_spool_pending_documents", 1) == 0:
                    break
                time.sleep(0.2)
            res["shipped_seconds"] = round(time.perf_counter() - pub.started, 1)
            # CPU until every document was shipped: the engine's share of the work too.
            res["cpu_seconds_shipped"] = round(cpu_seconds(proc.pid), 2)
        res["log_alert"] = "tap_journal_full" in errlog.read_text(errors="replace")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        pub.close()
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    log(f"{name}: {res['seconds']} s, {res['events_per_s']} ev/s, {res['cpu_us_per_event']} us CPU/ev, "
        f"peak RSS {res['peak_rss'] / 1e6:.0f} MB, dropped {res['dropped']} {res['drops']}, "
        f"journaled {res['journal_spilled_frames']}, alerts {res['alerts_tap_journal_full']}")
    return res


def med(runs: list[dict], key) -> float:
    return statistics.median(key(r) if callable(key) else r[key] for r in runs)


def processed_rate(r: dict) -> float:
    """Events the pipeline processed per second (a dropped event costs it nothing)."""
    return r["correlator_events"] / r["seconds"]


def cpu_per_processed(r: dict) -> float:
    return r["cpu_seconds"] / max(1, r["correlator_events"]) * 1e6


def cpu_shipped_per_processed(r: dict) -> float:
    return r.get("cpu_seconds_shipped", r["cpu_seconds"]) / max(1, r["correlator_events"]) * 1e6


def cpu_rate(r: dict) -> float:
    """Processed events per second of salttap's CPU time: the rate on one core."""
    return r["correlator_events"] / max(r["cpu_seconds"], 1e-9)


def report(res: dict) -> None:
    rounds = max(len(runs) for runs in res["runs"].values())
    print(f"\nBurst benchmark, {res['date']}, {rounds} of {res['rounds']} rounds (medians), {res['host']}")
    print("streams: " + ", ".join(f"{k} {v['events']:,} events / {v['bytes'] / 1e6:.0f} MB"
                                   for k, v in res["streams"].items()))
    print("\n| scenario | config | runs | processed events/s | events/s by CPU | CPU µs/event | "
          "CPU µs/event until shipped | peak RSS MB | dropped (median, max) | journaled | tap_journal_full alerts | "
          "spool MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key, runs in res["runs"].items():
        scen, cfg = key.split("/")
        d = [r["dropped"] for r in runs]
        print(f"| {scen} | {cfg} | {len(runs)} | {med(runs, processed_rate):,.0f} | {med(runs, cpu_rate):,.0f} | "
              f"{med(runs, cpu_per_processed):.1f} | "
              f"{(f'{med(runs, cpu_shipped_per_processed):.1f}' if 'cpu_seconds_shipped' in runs[0] else '-')} | "
              f"{med(runs, 'peak_rss') / 1e6:.0f} | {statistics.median(d):,.0f} ({max(d):,}) | "
              f"{med(runs, 'journal_spilled_frames'):,.0f} | {med(runs, 'alerts_tap_journal_full'):.0f} | "
              f"{med(runs, 'spool_bytes') / 1e6:.0f} |")
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
        print(f"- {key[: -len('@before')]}: events/s by CPU x{med(a, cpu_rate) / med(b, cpu_rate):.2f}, "
              f"CPU/event x{med(a, cpu_per_processed) / med(b, cpu_per_processed):.2f}, "
              f"processed events/s x{med(a, processed_rate) / med(b, processed_rate):.2f}, "
              f"peak RSS x{med(a, 'peak_rss') / med(b, 'peak_rss'):.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--salttap", default=str(ROOT / "build" / "dev" / "salttap"))
    ap.add_argument("--old-salttap", help="an older build, run beside --salttap in the same rounds (@before)")
    ap.add_argument("--streams", default=str(ROOT / "build" / "bench-burst-streams"))
    ap.add_argument("--work", default="/tmp/salttap-burst-bench")
    ap.add_argument("--out", default=str(ROOT / "build" / "bench-results"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scenarios", default="mixed-down,burst-down,mixed-up")
    ap.add_argument("--configs", default="journal,old,small", help="which configurations to run (small: burst only)")
    ap.add_argument("--small-journal", type=int, default=64 << 20, help="tap.journal.max_bytes of `small`")
    ap.add_argument("--missing-after", type=float, default=366 * 86400,
                    help="correlator.missing_after_seconds (0: salttap's deadlines). The streams' _stamps are "
                         "from 2026-12-01: with salttap's deadlines every job is past its deadline when it opens")
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
    opts.down_host = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    streams_dir = Path(opts.streams)
    manifest = json.loads((streams_dir / "manifest.json").read_text())
    files = manifest["files"]
    streams = {"mixed": "mixed.plain.raw", "burst": "small.plain.raw"}
    info = {key: {"file": str(streams_dir / name), "events": int(files[name]["events"]),
                  "bytes": int(files[name]["bytes"])} for key, name in streams.items()}
    scenarios = opts.scenarios.split(",")
    binaries = [("", opts.salttap)] + ([("@before", opts.old_salttap)] if opts.old_salttap else [])
    engine = None
    if "mixed-up" in scenarios:
        from engine import Engine
        engine = Engine("opensearch", Path(opts.work) / "opensearch")
        engine.start()
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"burst-{datetime.datetime.utcnow().strftime('%Y%m%dT%H%M%SZ')}.json"
    res = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "rounds": opts.rounds,
           "host": f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start", "streams": info,
           "salttap": opts.salttap, "old_salttap": opts.old_salttap, "missing_after": opts.missing_after, "runs": {}}
    try:
        for rnd in range(opts.rounds):
            plan = []
            for scen in scenarios:
                stream = "burst" if scen.startswith("burst") else "mixed"
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
                    from urllib.request import Request, urlopen
                    try:
                        urlopen(Request(f"{engine.url}/burstbench-*", method="DELETE"), timeout=60).read()
                    except OSError:
                        pass
                r = one_run(opts, Path(info[stream]["file"]), info[stream]["events"], tap, hosts,
                            f"{scen}-{cfg.replace('@', '-')}-{rnd}", binary)
                res["runs"].setdefault(f"{scen}/{cfg}", []).append(r)
                path.write_text(json.dumps(res, indent=1) + "\n")  # after every run: a partial run can be reported
    finally:
        if engine:
            engine.stop()
    path.write_text(json.dumps(res, indent=1) + "\n")
    report(res)
    print(f"\nraw figures: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
