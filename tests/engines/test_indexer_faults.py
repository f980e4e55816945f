"""The indexer under faults, through the CLI: `salttap replay --ship` against a real engine.

  a. the engine is stopped mid-stream for DOWN_SECONDS (default 60; env
     SALTTAP_FAULT_DOWN_SECONDS for quick local runs), then restarted on the same port and
     data dir: the replay finishes, every document is there exactly once, job docs final;
  b. salttap is SIGKILLed and started again on the same spool: (i) with the engine down,
     right after everything was spooled (the rerun has an empty capture); (ii) mid-shipping,
     while its requests hang on a SIGSTOPped engine (the rerun replays the same capture);
  c. a document the engine rejects (mapping conflict) lands in the dead-letter index with
     the server's reason and the original document as text; the replay still exits 0.

No fault races the replay: where one must strike mid-stream, the capture is split in two
around a FIFO (`Gate`); salttap ships the head, then blocks opening the FIFO until the
test, with the fault in place, lets it read the tail. However fast the machine, the replay
cannot finish early.

Every test compares the engine's contents with the expected (_index, _id) set computed by
`salttap replay --output documents` on the same capture and config, and with the
generator's own ground truth (which jobs failed, which minions never returned).

The outage test runs against OpenSearch 2.19 only (it costs DOWN_SECONDS); the others
against OpenSearch 2.19 and Elasticsearch 7.17. One engine per flavor for the module;
each test writes under its own index prefix.

salttap binary: $SALTTAP_BIN, else $SALTTAP_BUILD_DIR/salttap, else build/dev/salttap (binaries.py).

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_indexer_faults.py -v
"""
from __future__ import annotations

import collections
import errno
import json
import os
import random
import re
import signal
import subprocess
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from engine import FLAVORS, ROOT, Engine, suite_flavors
from indexed import Expected, assert_ids_present, counts_by_index, expected_documents, ok, search_all, total_count

DOWN_SECONDS = float(os.environ.get("SALTTAP_FAULT_DOWN_SECONDS", "60"))
MASTER = "fault-master"
DAY = "2026.11.29"
MINIONS = [f"minion-{i}" for i in range(5)]
BIG_JOBS = 3000         # x 5 minions: ~25,000 documents (~31,000 writes), seconds of shipping
MID_JOBS = 1000         # ~8,500 documents: the SIGKILL tests
SMALL_JOBS = 40
SPOOLED = "documents spooled; waiting for the engine to acknowledge"
ACKED = "all acknowledged by the engine"


# ---------------------------------------------------------------- the salttap binary

# ---------------------------------------------------------------- captures and expectations

def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")


STATES = ("pkg_|-vim_|-vim_|-installed", "file_|-motd_|-/etc/motd_|-managed")


def state_return(ok_: bool, i: int) -> dict:
    out = {}
    for n, key in enumerate(STATES):
        good = ok_ or n == 0
        out[key] = {"name": key.split("_|-")[2], "result": good, "changes": {} if good else {"x": i},
                    "comment": "ok" if good else "failed on purpose", "__sls__": "web",
                    "__run_num__": n, "__id__": key.split("_|-")[1], "start_time": "12:00:00.000000",
                    "duration": 1.5}
    return out


def make_capture(path: Path, jobs: int, seed: int, jid_base: str = "2026112912000000") -> dict:
    """A JSON-lines capture of `jobs` jobs on MINIONS (test.ping, cmd.run, state.apply),
    some returns failing (retcode 1), some minions never returning. Returns the ground
    truth: {jid: {"status", "failed": [...], "missing": [...]}}."""
    rng = random.Random(seed)
    t0 = datetime(2026, 11, 29, 12, 0, 0)
    truth = {}
    with open(path, "w") as out:
        for i in range(jobs):
            jid = f"{jid_base}{i:04d}"
            start = t0 + timedelta(milliseconds=200 * i)
            kind = i % 10
            fun, arg = (("state.apply", ["web"]) if kind == 3 else
                        ("cmd.run", ["uptime"]) if kind == 7 else ("test.ping", []))
            # Salt's bare-jid event, and now and then a custom one: the events index
            # (salt/job/*/new and /ret/ are not indexed as raw events by default)
            out.write(json.dumps({"tag": jid, "data": {"minions": MINIONS, "_stamp": stamp(start)}}) + "\n")
            if i % 5 == 0:
                out.write(json.dumps({"tag": f"fault/deploy/{i}", "data": {
                    "id": MINIONS[i % len(MINIONS)], "release": i, "_stamp": stamp(start)}}) + "\n")
            out.write(json.dumps({"tag": f"salt/job/{jid}/new", "data": {
                "jid": jid, "tgt_type": "glob", "tgt": "minion-*", "user": "root", "fun": fun,
                "arg": arg, "minions": MINIONS, "missing": [], "_stamp": stamp(start)}}) + "\n")
            missing = [m for m in MINIONS if rng.random() < 0.03]
            failed = [m for m in MINIONS if m not in missing and rng.random() < 0.04]
            for k, m in enumerate(MINIONS):
                if m in missing:
                    continue
                good = m not in failed
                ret = (state_return(good, i) if fun == "state.apply" else
                       (" 12:00:00 up 1 day" if good else "uptime: boom") if fun == "cmd.run" else
                       (True if good else "ERROR: test.ping failed"))
                out.write(json.dumps({"tag": f"salt/job/{jid}/ret/{m}", "data": {
                    "cmd": "_return", "id": m, "success": good, "return": ret,
                    "retcode": 0 if good else 1, "jid": jid, "fun": fun, "fun_args": arg,
                    "user": "root", "_stamp": stamp(start + timedelta(milliseconds=20 + 10 * k))}})
                    + "\n")
            truth[jid] = {"status": "failed" if failed else "missing" if missing else "succeeded",
                          "failed": failed, "missing": missing}
    return truth


def write_config(path: Path, url: str, prefix: str, spool: Path, max_docs: int = 200,
                 in_flight: int = 2) -> Path:
    path.write_text(
        f"master_id: {MASTER}\n"
        "correlator: {missing_after_seconds: 30}\n"
        "indexer:\n"
        f"  hosts: [\"{url}\"]\n"
        f"  index_prefix: {prefix}\n"
        "  states_index: true\n"
        f"  spool: {{dir: {spool}}}\n"
        f"  bulk: {{max_docs: {max_docs}, max_wait_ms: 200, in_flight: {in_flight}, "
        "backoff_initial_ms: 200, backoff_max_ms: 2000, connect_timeout_ms: 2000, "
        "request_timeout_ms: 20000}\n")
    return path


def shipping(salttap: Path, url: str, capture: Path, tmp_path: Path, prefix: str,
             **bulk) -> tuple[Path, Path, Expected]:
    """A replay of `capture` shipping to `url` under `prefix` (with write_config's `bulk`
    settings): its spool, its config, and the documents it must deliver."""
    spool = tmp_path / "spool"
    config = write_config(tmp_path / "salttap.yaml", url, prefix, spool, **bulk)
    return spool, config, expected_documents(salttap, capture, config)


# ---------------------------------------------------------------- processes

class Replay:
    """`salttap replay FILE... --ship --config C` in its own process group; output to a log.
    `captures`: one file, or several read in order as one stream."""

    def __init__(self, salttap: Path, captures: Path | list[Path], config: Path, log: Path,
                 timeout: float = 300):
        self.log = log
        files = [captures] if isinstance(captures, Path) else captures
        self.argv = [str(salttap), "replay", *map(str, files), "--ship", "--config", str(config),
                     "--ship-timeout", str(timeout)]
        with open(log, "ab") as out:
            out.write(f"==== {' '.join(self.argv)}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def running(self) -> bool:
        return self.proc.poll() is None

    def wait_log(self, needle: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            assert self.running(), f"replay exited (rc={self.proc.returncode}) before {needle!r}:\n" \
                                   f"{self.text()[-4000:]}"
            assert time.monotonic() < deadline, f"no {needle!r} within {timeout}s:\n{self.text()[-4000:]}"
            time.sleep(0.05)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"replay --ship still running after {timeout}s:\n{self.text()[-4000:]}")

    def kill(self) -> None:
        """SIGKILL, the process only (as a crash would)."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)


@pytest.fixture
def replays():
    """start(capture, config, log) -> Replay; every replay still running is killed at teardown;
    the logs' tails are printed (pytest shows them for a failed test)."""
    started: list[Replay] = []

    def start(salttap, captures, config, log, timeout=300) -> Replay:
        r = Replay(salttap, captures, config, log, timeout)
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()
        print(f"--- {r.log}\n{r.text()[-6000:]}")  # shown when the test failed


def split_capture(capture: Path, into: Path, fraction: float) -> tuple[Path, Path]:
    """The capture's first `fraction` of lines and the rest, as two files in `into`: read
    one after the other they are the same event stream."""
    lines = capture.read_text().splitlines(keepends=True)
    cut = int(len(lines) * fraction)
    head, tail = into / f"head-{capture.name}", into / f"tail-{capture.name}"
    head.write_text("".join(lines[:cut]))
    tail.write_text("".join(lines[cut:]))
    return head, tail


class Gate:
    """A FIFO placed between two capture files: `salttap replay HEAD GATE TAIL` reads HEAD,
    then blocks opening GATE until open() is called, so it can neither finish nor read
    TAIL before the test lets it. Opened and closed without a byte, GATE adds no events."""

    def __init__(self, path: Path):
        self.path = path
        os.mkfifo(path)

    def open(self, replay: Replay, timeout: float = 120) -> None:
        """Once the replay waits at the gate (every file before it read), opens and closes
        the write end: the replay reads an empty file and goes on."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno != errno.ENXIO:  # ENXIO: no reader at the gate yet
                    raise
                assert replay.running(), f"replay exited (rc={replay.proc.returncode}) before the " \
                                         f"gate:\n{replay.text()[-4000:]}"
                assert time.monotonic() < deadline, f"the replay did not reach the gate within " \
                                                     f"{timeout}s:\n{replay.text()[-4000:]}"
                time.sleep(0.05)
                continue
            os.close(fd)
            return


def wait_for_documents(url: str, prefix: str, replay: Replay, timeout: float = 120) -> int:
    """Until the engine holds at least one document under `prefix`; their number."""
    deadline = time.monotonic() + timeout
    while (n := total_count(url, prefix)) < 1:
        assert replay.running(), f"replay exited before shipping anything:\n{replay.text()[-4000:]}"
        assert time.monotonic() < deadline, f"nothing reached the engine:\n{replay.text()[-4000:]}"
        time.sleep(0.1)
    return n


class EngineBox:
    """The module's engine; restartable on the same port and data dir."""

    def __init__(self, flavor: str, directory: Path):
        self.flavor = flavor
        self.dir = directory
        self.eng = Engine(flavor, directory).start()
        self.port = self.eng.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.eng is not None:
            self.eng.stop()
            self.eng = None

    def start(self) -> None:
        assert self.eng is None
        self.eng = Engine(self.flavor, self.dir, port=self.port).start()
        assert self.eng.port == self.port

    def pause(self) -> None:
        """SIGSTOP the JVM: connections are still accepted (by the kernel) and requests
        sent, but none is answered until resume()."""
        os.killpg(self.eng.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.killpg(self.eng.pid, signal.SIGCONT)


@pytest.fixture(scope="module", params=suite_flavors())
def engine(request, tmp_path_factory):
    box = EngineBox(request.param, tmp_path_factory.mktemp(f"faults-{request.param}"))
    request.addfinalizer(box.stop)
    return box


@pytest.fixture(scope="module")
def big_capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("capture") / "big.jsonl"
    return path, make_capture(path, BIG_JOBS, seed=20261129)


@pytest.fixture(scope="module")
def mid_capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("capture") / "mid.jsonl"
    return path, make_capture(path, MID_JOBS, seed=1129)


# ---------------------------------------------------------------- checks

def assert_delivered(url: str, prefix: str, exp: Expected, truth: dict, spool: Path) -> None:
    """The engine holds exactly the expected documents, job docs final, no dead letters."""
    got = counts_by_index(url, prefix)
    want = exp.per_index()
    assert got == want, f"documents per index: engine {got} != expected {want}"
    for index in want:
        assert_ids_present(url, index, exp.ids(index))
    assert not any("deadletter" in ix for ix in got), got
    dead = spool / "dead"
    assert not dead.exists() or not any(dead.iterdir()), f"dead-letter files: {list(dead.iterdir())}"

    # job documents: the final write of each job (external versions: the newest wins)
    jobs = {h["_id"]: h["_source"] for h in search_all(
        url, f"{prefix}-jobs-*", {"match_all": {}}, ["jid", "status", "update", "counts", "minions"])}
    final = exp.of_kind(prefix, "jobs")
    assert len(jobs) == len(final) == len(truth), (len(jobs), len(final), len(truth))
    wrong = []
    for _id, src in jobs.items():
        f = final[_id]
        t = truth[src["jid"]]
        if (src["status"], src["update"], src["counts"]) != (f["status"], f["update"], f["counts"]) \
                or src["status"] != t["status"] \
                or sorted(src["minions"]["missing"]) != t["missing"] \
                or sorted(src["minions"]["failed"]) != t["failed"]:
            wrong.append((_id, src, f["status"], f["update"], t))
    assert not wrong, f"{len(wrong)} job docs not final, e.g. {wrong[:3]}"
    statuses = collections.Counter(s["status"] for s in jobs.values())
    assert statuses["missing"] > 0 and statuses["failed"] > 0 and statuses["succeeded"] > 0, statuses

    # the returns of the minions that never answered: status missing
    missing = search_all(url, f"{prefix}-returns-*", {"term": {"status": "missing"}}, False)
    want_missing = {f"{MASTER}/{jid}/{m}" for jid, t in truth.items() for m in t["missing"]}
    assert {h["_id"] for h in missing} == want_missing


# ---------------------------------------------------------------- a. engine outage

# The outage costs DOWN_SECONDS: it runs on the OpenSearch flavors only (the module's
# engine, indirectly parametrized), so Elasticsearch has no instance of it.
@pytest.mark.parametrize("engine", [f for f in suite_flavors() if FLAVORS[f]["product"] == "opensearch"],
                         indirect=True)
def test_engine_down_mid_stream(engine, salttap, big_capture, replays, tmp_path):
    capture, truth = big_capture
    prefix = "fa"
    spool, config, exp = shipping(salttap, engine.url, capture, tmp_path, prefix, max_docs=100, in_flight=1)
    total = len(exp.docs)
    assert total > 20000, total

    # The head ships, the engine goes down, and only then is the tail read: the outage
    # strikes mid-stream on any machine.
    head, tail = split_capture(capture, tmp_path, 1 / 3)
    gate = Gate(tmp_path / "gate")
    r = replays(salttap, [head, gate.path, tail], config, tmp_path / "replay.log")
    n = wait_for_documents(engine.url, prefix, r)
    engine.stop()
    down_at = time.monotonic()
    print(f"engine stopped with at least {n} of {total} documents searchable")
    assert r.running() and ACKED not in r.text(), r.text()[-4000:]
    gate.open(r)
    r.wait_log(SPOOLED, timeout=120)  # the tail too, while nothing can be acknowledged
    while time.monotonic() - down_at < DOWN_SECONDS:
        assert r.running(), f"replay gave up while the engine was down:\n{r.text()[-4000:]}"
        time.sleep(0.5)
    engine.start()
    rc = r.wait(timeout=180)
    log = r.text()
    assert rc == 0, f"replay --ship rc={rc}:\n{log[-4000:]}"
    assert ACKED in log, log[-4000:]
    assert_delivered(engine.url, prefix, exp, truth, spool)


# ---------------------------------------------------------------- b. salttap SIGKILLed

def test_kill_after_spooling_engine_down(engine, salttap, mid_capture, replays, tmp_path):
    """(i) Engine down: everything is spooled, salttap is SIGKILLed; with the engine back,
    `replay --ship` of an empty capture on the same spool delivers all of it."""
    capture, truth = mid_capture
    prefix = "fbi"
    spool, config, exp = shipping(salttap, engine.url, capture, tmp_path, prefix)

    engine.stop()
    try:
        r = replays(salttap, capture, config, tmp_path / "replay-1.log")
        r.wait_log(SPOOLED, timeout=120)
        m = re.search(r"replay --ship: (\d+) documents spooled; waiting for the engine to acknowledge (\d+)",
                      r.text())
        assert m and int(m.group(1)) == exp.writes, (m and m.group(0), exp.writes)
        r.kill()
    finally:
        engine.start()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r2 = replays(salttap, empty, config, tmp_path / "replay-2.log")
    rc = r2.wait(timeout=180)
    log = r2.text()
    assert rc == 0, f"replay --ship (empty capture) rc={rc}:\n{log[-4000:]}"
    assert re.search(rf"spool \S+ holds {exp.writes} unacknowledged documents", log), log[-4000:]
    assert ACKED in log, log[-4000:]
    assert_delivered(engine.url, prefix, exp, truth, spool)


def test_kill_mid_shipping(engine, salttap, mid_capture, replays, tmp_path):
    """(ii) salttap is SIGKILLed while shipping (its requests hang on the paused engine); the
    same replay again on the same spool: every document once, job docs final."""
    capture, truth = mid_capture
    prefix = "fbii"
    spool, config, exp = shipping(salttap, engine.url, capture, tmp_path, prefix, max_docs=100, in_flight=1)
    total = len(exp.docs)

    # The head ships; the engine is paused (requests hang, none is answered); the tail is
    # read and spooled; salttap is killed with at least the tail's documents unacknowledged.
    head, tail = split_capture(capture, tmp_path, 1 / 3)
    gate = Gate(tmp_path / "gate")
    r = replays(salttap, [head, gate.path, tail], config, tmp_path / "replay-1.log")
    wait_for_documents(engine.url, prefix, r)
    engine.pause()
    try:
        gate.open(r)
        r.wait_log(SPOOLED, timeout=120)
        r.kill()
    finally:
        engine.resume()
    n = total_count(engine.url, prefix)
    assert 0 < n < total, f"not killed mid-shipping: {n} of {total} in the engine"
    print(f"salttap killed with {n} of {total} documents searchable")

    r2 = replays(salttap, capture, config, tmp_path / "replay-2.log")
    rc = r2.wait(timeout=180)
    log = r2.text()
    assert rc == 0, f"replay --ship (rerun) rc={rc}:\n{log[-4000:]}"
    m = re.search(r"spool \S+ holds (\d+) unacknowledged documents", log)
    assert m and int(m.group(1)) > 0, log[-4000:]
    assert ACKED in log, log[-4000:]
    assert_delivered(engine.url, prefix, exp, truth, spool)


# ---------------------------------------------------------------- c. mapping rejection

def test_mapping_rejection_dead_letters(engine, salttap, replays, tmp_path):
    prefix = "fc"
    capture = tmp_path / "small.jsonl"
    truth = make_capture(capture, SMALL_JOBS, seed=7)
    spool, config, exp = shipping(salttap, engine.url, capture, tmp_path, prefix)
    events_index = f"{prefix}-events-{DAY}"
    events = {i: d for (ix, i), d in exp.docs.items() if ix == events_index}
    assert events, exp.per_index()
    # `tag` as a number: every event document fails with mapper_parsing_exception
    ok(f"{engine.url}/{events_index}", "PUT",
       {"settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {"properties": {"tag": {"type": "long"}}}})

    r = replays(salttap, capture, config, tmp_path / "replay.log")
    rc = r.wait(timeout=120)
    log = r.text()
    assert rc == 0, f"replay --ship rc={rc}:\n{log[-4000:]}"
    assert ACKED in log, log[-4000:]

    got = counts_by_index(engine.url, prefix)
    dl_indices = [ix for ix in got if ix.startswith(f"{prefix}-deadletter-")]
    assert len(dl_indices) == 1, got
    want = {ix: n for ix, n in exp.per_index().items() if ix != events_index}
    want[dl_indices[0]] = len(events)
    assert got == want, f"engine {got} != expected {want}"
    for index in want:
        if index not in dl_indices:
            assert_ids_present(engine.url, index, exp.ids(index))

    dead = search_all(engine.url, dl_indices[0], {"match_all": {}}, True)
    assert {h["_id"] for h in dead} == {f"{events_index}/{i}" for i in events}
    for h in dead:
        d = h["_source"]
        orig = events[d["doc_id"]]
        assert d["index"] == events_index, d
        assert d["status"] == 400, d
        assert d["error_type"] == "mapper_parsing_exception", d
        assert "[tag]" in d["reason"] and "long" in d["reason"], d["reason"]
        assert isinstance(d["document"], str), d
        assert json.loads(d["document"]) == orig["source"], (d["document"], orig["line"])
    dead_dir = spool / "dead"
    assert not dead_dir.exists() or not any(dead_dir.iterdir()), list(dead_dir.iterdir())
    # the jobs are all there and final, dead letters notwithstanding
    jobs = {h["_source"]["jid"]: h["_source"]["status"] for h in search_all(
        engine.url, f"{prefix}-jobs-*", {"match_all": {}}, ["jid", "status"])}
    assert jobs == {jid: t["status"] for jid, t in truth.items()}


def test_every_real_capture_indexes_without_a_rejection(engine, salttap, replays, tmp_path):
    """Every capture in tests/captures (real Salt 3006.25 and 3006.26 bus bytes: state runs,
    binary and non-UTF-8 returns, a 1 MB return, runners, wheels, key events...) goes through
    the real spool and shipper: the engine holds exactly the expected documents, none rejected."""
    captures = sorted((ROOT / "tests" / "captures").glob("*/*.raw"))
    if not captures:
        pytest.fail("no captures under tests/captures")
    prefix = "fr"
    spool = tmp_path / "spool"
    config = write_config(tmp_path / "salttap.yaml", engine.url, prefix, spool)
    argv = [str(salttap), "replay", *map(str, captures), "--output", "documents", "--config", str(config)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    exp = Expected(r.stdout)

    log = tmp_path / "replay.log"
    with open(log, "wb") as out:
        proc = subprocess.run([str(salttap), "replay", *map(str, captures), "--ship", "--config", str(config),
                               "--ship-timeout", "240"], stdout=out, stderr=subprocess.STDOUT, timeout=300)
    text = log.read_text(errors="replace")
    assert proc.returncode == 0, text[-4000:]
    got = counts_by_index(engine.url, prefix)
    assert not any("deadletter" in ix for ix in got), (got, text[-4000:])
    assert got == exp.per_index(), f"engine {got} != expected {exp.per_index()}"
    for index in got:
        assert_ids_present(engine.url, index, exp.ids(index))
    dead = spool / "dead"
    assert not dead.exists() or not any(dead.iterdir())
    assert "dead-letter" not in text.lower(), text[-4000:]
