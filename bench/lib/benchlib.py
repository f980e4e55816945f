"""What the benchmark scripts share, so that each figure means the same in every table.

- percentile: ONE definition, the nearest rank. The p-th percentile of n values is the
  ceil(p / 100 * n)-th smallest: the smallest measured value with at least p % of the
  values at or below it. Always a value that was measured, never one interpolated
  between two (p95 of 100 values is the 95th smallest; of 20, the 19th).
- median (statistics.median: the mean of the two middle values of an even count).
- log lines on stderr, and the machine's load (/proc/loadavg) to print beside figures.
- process CPU and memory, read from /proc by one reader (stat_fields, status_fields).
- timed child processes (wait4: wall, user and system CPU, peak RSS), stopping one, free
  ports, directory sizes, results files (named, saved, reported).
- the search engine: the test engines' launcher (tests/harness/engine.py, imported here
  and nowhere else in bench/) and the few index helpers the benchmarks need.

Scripts in bench/ import it with:

    sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
    import benchlib
"""
from __future__ import annotations

import datetime
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The one import of the test engines' launcher in bench/.
sys.path.insert(0, str(ROOT / "tests" / "harness"))
from engine import Engine  # noqa: E402,F401
from http_calls import call as engine_call  # noqa: E402,F401

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------- statistics

def percentile(values, p: float) -> float:
    """Nearest rank: the ceil(p/100 * n)-th smallest of the values (p in 0..100)."""
    s = sorted(values)
    if not s:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} outside 0..100")
    rank = max(1, math.ceil(p / 100 * len(s)))
    return s[rank - 1]


def median(values) -> float:
    return statistics.median(values)


# ---------------------------------------------------------------- log lines, the machine

def logger(name: str):
    """A function printing `[name HH:MM:SS] message` on stderr."""
    def log(msg: str) -> None:
        print(f"[{name} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
    return log


def loadavg() -> tuple[float, float, float]:
    """The machine's load averages over 1, 5 and 15 minutes (/proc/loadavg)."""
    with open("/proc/loadavg") as fh:
        one, five, fifteen = fh.read().split()[:3]
    return float(one), float(five), float(fifteen)


def load_text() -> str:
    one, five, fifteen = loadavg()
    return f"load {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) on {os.cpu_count()} CPUs"


def utc_stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def save_results(path: Path, res) -> None:
    """The raw figures, as indented JSON (rewritten after every run: a partial run can be reported)."""
    path.write_text(json.dumps(res, indent=1) + "\n")


def finish(path: Path, res, report) -> None:
    """A benchmark's end: its raw figures saved, its tables printed, where the figures are."""
    save_results(path, res)
    report(res)
    print(f"\nraw results: {path}")


def results_file(out_dir: Path | str, kind: str) -> Path:
    """OUT/<kind>-<UTC time>.json, its directory made."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return out / f"{kind}-{utc_stamp()}.json"


# ---------------------------------------------------------------- /proc: the one reader

def stat_fields(pid: int, tid: int | None = None) -> list[str] | None:
    """/proc/<pid>[/task/<tid>]/stat after the command name (field 3 is [0]), None once gone."""
    path = f"/proc/{pid}/task/{tid}/stat" if tid is not None else f"/proc/{pid}/stat"
    try:
        with open(path) as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def cpu_seconds(pid: int, tid: int | None = None) -> float | None:
    """utime + stime of a process (or one of its threads), seconds; None once gone."""
    f = stat_fields(pid, tid)
    return None if f is None else (int(f[11]) + int(f[12])) / CLK_TCK


def run_ns(pid: int, tid: int) -> int | None:
    """Nanoseconds one thread has run (/proc/<pid>/task/<tid>/schedstat: finer than stat's
    clock ticks), None once gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def thread_ids(pid: int) -> list[int]:
    """The threads of a process alive now ([] once it is gone)."""
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def status_fields(pid: int, keys=("VmRSS", "VmHWM", "RssAnon", "RssFile")) -> dict[str, int]:
    """Memory lines of /proc/<pid>/status in bytes ({} once gone)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                k, _, v = line.partition(":")
                if k in keys:
                    out[k] = int(v.split()[0]) * 1024
    except OSError:
        return {}
    return out


def read_chars(pid: int) -> int:
    """Bytes the process has read (rchar of /proc/<pid>/io)."""
    with open(f"/proc/{pid}/io") as fh:
        for line in fh:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def tree_pids(root: int) -> list[int]:
    """A process and all its descendants alive now."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit() and (f := stat_fields(int(d))):
            parent[int(d)] = int(f[1])
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(c for c, pp in parent.items() if pp == p)
    return out


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system) of a process and all its descendants alive now."""
    return sum(c for c in map(cpu_seconds, tree_pids(root)) if c is not None)


def tree_rss(root: int) -> int:
    """Resident bytes of a process and all its descendants alive now."""
    return sum(int(f[21]) * PAGE_SIZE for f in map(stat_fields, tree_pids(root)) if f)


# ---------------------------------------------------------------- processes, ports, files

@dataclass
class Measured:
    """One child process, timed by the harness and its rusage from wait4."""
    seconds: float
    user_s: float
    sys_s: float
    max_rss_bytes: int
    returncode: int
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_lines: int | None = None  # with count_lines: newlines written to stdout
    stdout_bytes: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


def run_measured(cmd: list[str], *, stdout=subprocess.DEVNULL, stderr=None, capture: bool = False,
                 count_lines: bool = False, env: dict | None = None) -> Measured:
    """Runs cmd; wall seconds from start to exit, CPU and peak RSS of it and the descendants it
    reaped (wait4). capture: stdout and stderr kept. count_lines: stdout read through a pipe
    by the harness, which counts its newlines and bytes (1 MiB reads; the output is kept
    nowhere), so that a benchmark checks what the command wrote."""
    pipe_out = capture or count_lines
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE if pipe_out else stdout,
                            stderr=subprocess.PIPE if capture else stderr, env=env)
    got: dict = {"lines": 0, "bytes": 0, "out": [], "err": []}

    def drain_counting(stream):
        fd = stream.fileno()
        while chunk := os.read(fd, 1 << 20):
            got["lines"] += chunk.count(b"\n")
            got["bytes"] += len(chunk)

    def drain_keeping(stream, key):
        got[key].append(stream.read())

    readers = []
    if count_lines:
        readers.append(threading.Thread(target=drain_counting, args=(proc.stdout,), daemon=True))
    elif capture:
        readers.append(threading.Thread(target=drain_keeping, args=(proc.stdout, "out"), daemon=True))
    if capture:
        readers.append(threading.Thread(target=drain_keeping, args=(proc.stderr, "err"), daemon=True))
    for t in readers:
        t.start()
    # wait4 reaps the child itself (its rusage alone), so its pipes are drained by threads meanwhile.
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    for t in readers:
        t.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for s in (proc.stdout, proc.stderr):
        if s:
            s.close()
    return Measured(seconds=seconds, user_s=usage.ru_utime, sys_s=usage.ru_stime,
                    max_rss_bytes=usage.ru_maxrss * 1024, returncode=proc.returncode,
                    stdout=b"".join(got["out"]), stderr=b"".join(got["err"]),
                    stdout_lines=got["lines"] if count_lines else None,
                    stdout_bytes=got["bytes"] if count_lines else None)


def stop(proc: subprocess.Popen, timeout: float) -> None:
    """SIGTERM to a child still running, then SIGKILL if it has not exited within timeout."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def dir_bytes(path: Path | str) -> int:
    """Bytes of the regular files under path (0 if it does not exist; files vanishing meanwhile skipped)."""
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(dirpath, f)).st_size
            except FileNotFoundError:
                pass
    return total


# ---------------------------------------------------------------- the search engine

def http(method: str, url: str, body: bytes | None = None, headers: dict | None = None,
         timeout: float = 300) -> tuple[int, bytes]:
    """(status, body) of one request; HTTP errors are answers, not exceptions."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def http_json(method: str, url: str, body=None, timeout: float = 300):
    """The JSON answer of one request; anything but 2xx raises."""
    data = json.dumps(body).encode() if body is not None else None
    status, raw = http(method, url, data, {"Content-Type": "application/json"} if data else None, timeout)
    if status >= 300:
        raise RuntimeError(f"{method} {url}: {status} {raw[:300]!r}")
    return json.loads(raw) if raw else None


def delete_indices(url: str, pattern: str) -> None:
    """Deletes every index matching pattern (hidden and closed ones too), by name, 50 at a
    time: a wildcard DELETE is refused where action.destructive_requires_name is set."""
    rows = http_json("GET", f"{url}/_cat/indices/{pattern}?format=json&h=index&expand_wildcards=all")
    names = [r["index"] for r in rows]
    for i in range(0, len(names), 50):
        http_json("DELETE", f"{url}/{','.join(names[i:i + 50])}")


def refresh(url: str, pattern: str) -> None:
    http_json("POST", f"{url}/{pattern}/_refresh?expand_wildcards=all&ignore_unavailable=true&allow_no_indices=true")


def count(url: str, pattern: str, query: str = "") -> int:
    """Documents in the indices matching pattern (0 when none exist); query: e.g. `q=status:failed`."""
    status, raw = http("GET", f"{url}/{pattern}/_count?ignore_unavailable=true&allow_no_indices=true"
                              + (f"&{query}" if query else ""))
    if status == 404:
        return 0
    if status != 200:
        raise RuntimeError(f"_count {pattern}: {status} {raw[:300]!r}")
    return json.loads(raw)["count"]
