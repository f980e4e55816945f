"""salttap against a real 3-node OpenSearch 2.19 cluster: faults of the cluster while it ships.

One cluster for the module (engine.Cluster: three JVMs on 127.0.0.1, each its own data dir,
HTTP and transport ports, -Xmx384m). Each test ships a capture with `salttap replay --ship`,
`indexer.hosts` listing the three nodes, one replica per shard, and strikes mid-stream:

  a. kill -9 the node holding the primary of the returns index being written, ship the rest
     while it is gone, start it again on the same data dir and ports;
  b. stop two of the three nodes (no elected cluster-manager: writes blocked, the cluster
     health red), ship the rest into the spool, start them again;
  c. change the replica count (1 -> 2 -> 0) while shipping.

As in test_indexer_faults.py the capture is split around a FIFO (Gate): salttap ships the
head, then cannot read the tail before the test, with the fault in place, lets it. After
each: the replay exits 0 with everything acknowledged by the engine, and the cluster holds
exactly the documents `salttap replay --output documents` computes for the capture: per
index the same count as expected ids, every expected id present (an ids query) - 0 lost,
0 duplicated (salttap's _ids are deterministic: a batch sent again to another node is the
same documents again, never new ones).

Also checked: salttap's cluster-health poll (indexer.cluster_health_interval_ms) logs what it
sees (red without a cluster-manager, green or yellow again after), and before any fault the
bulk requests went to every node (each node's REST action counts in _nodes/usage; the test
sends no _bulk itself).

Waits poll conditions (cluster health, counts, log lines) with bounds; no fixed sleeps.

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_cluster_engines.py -v
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from engine import Cluster, EngineError
from indexed import Expected, assert_ids_present, counts_by_index, expected_documents, ok, total_count
from test_indexer_faults import ACKED, SPOOLED, Gate, Replay, make_capture, split_capture

JOBS = 600  # x 5 minions: ~5,000 documents per test


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster("opensearch", tmp_path_factory.mktemp("cluster"), size=3, heap="384m")
    c.start()
    yield c
    c.stop()


@pytest.fixture
def replays():
    started: list[Replay] = []

    def start(salttap, captures, config, log) -> Replay:
        r = Replay(salttap, captures, config, log, timeout=240)
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()
        print(f"--- {r.log}\n{r.text()[-6000:]}")


def write_config(path: Path, urls: list[str], prefix: str, spool: Path, replicas: int = 1) -> Path:
    hosts = ", ".join(f'"{u}"' for u in urls)
    path.write_text(
        "master_id: cluster-master\n"
        "correlator: {missing_after_seconds: 30}\n"
        "indexer:\n"
        f"  hosts: [{hosts}]\n"
        f"  index_prefix: {prefix}\n"
        f"  number_of_replicas: {replicas}\n"
        "  cluster_health_interval_ms: 1000\n"
        f"  spool: {{dir: {spool}}}\n"
        "  bulk: {max_docs: 100, max_wait_ms: 200, in_flight: 2, backoff_initial_ms: 200, "
        "backoff_max_ms: 2000, connect_timeout_ms: 2000, request_timeout_ms: 15000}\n")
    return path


def wait_until(what: str, check, timeout: float, replay: Replay | None = None, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if replay is not None:
            assert replay.running() or what.startswith("replay"), \
                f"replay exited (rc={replay.proc.returncode}) while waiting for {what}:\n{replay.text()[-4000:]}"
        assert time.monotonic() < deadline, f"no {what} within {timeout}s" + \
            (f":\n{replay.text()[-4000:]}" if replay else "")
        time.sleep(interval)


def url(cluster: Cluster) -> str:
    return cluster.urls[cluster.running()[0]]


def primary_node(cluster: Cluster, index_pattern: str) -> tuple[str, int]:
    """The index written and the cluster's node holding its (first) primary."""
    rows = ok(f"{url(cluster)}/_cat/shards/{index_pattern}?format=json&h=index,shard,prirep,state,node")
    started = [r for r in rows if r["prirep"] == "p" and r["state"] == "STARTED"]
    assert started, rows
    row = sorted(started, key=lambda r: (r["index"], r["shard"]))[0]
    return row["index"], cluster.node_names.index(row["node"])


def bulks_by_node(cluster: Cluster) -> dict[str, int]:
    """_bulk requests each running node served since it started (_nodes/usage)."""
    nodes = ok(f"{url(cluster)}/_nodes/usage")["nodes"].values()
    got = {n.get("name", str(i)): sum(c for a, c in n.get("rest_actions", {}).items() if "bulk" in a)
           for i, n in enumerate(nodes)}
    assert len(got) == len(cluster.running()), got
    return got


def assert_exactly_once(cluster: Cluster, prefix: str, exp: Expected) -> None:
    """Every expected document once: per index the engine's count equals the expected ids,
    and each of them is there (ids queries) - nothing lost, nothing twice."""
    u = url(cluster)
    got = counts_by_index(u, prefix)
    want = exp.per_index()
    assert got == want, f"documents per index: engine {got} != expected {want}"
    for index in want:
        assert_ids_present(u, index, exp.ids(index))
    assert not any("deadletter" in ix for ix in got), got


def finish(r: Replay, cluster: Cluster, prefix: str, exp: Expected, spool: Path) -> str:
    rc = r.wait(timeout=240)
    log = r.text()
    assert rc == 0, f"replay --ship rc={rc}:\n{log[-4000:]}"
    assert ACKED in log, log[-4000:]
    cluster.wait_health("green", nodes=cluster.size, timeout=120)
    assert_exactly_once(cluster, prefix, exp)
    dead = spool / "dead"
    assert not dead.exists() or not any(dead.iterdir()), f"dead-letter files: {list(dead.iterdir())}"
    return log


def start_shipping(cluster, salttap, replays, tmp_path, prefix, seed, replicas=1, gates=1):
    """The replay of a fresh capture, its first part shipped; with gates=2 the rest is split in
    two more parts, each behind its own gate (then a list of the two)."""
    cluster.wait_health("green", nodes=cluster.size, timeout=120)
    capture = tmp_path / "capture.jsonl"
    make_capture(capture, JOBS, seed=seed, jid_base=f"20261129{seed % 100:02d}0000")
    spool = tmp_path / "spool"
    config = write_config(tmp_path / "salttap.yaml", cluster.urls, prefix, spool, replicas)
    exp = expected_documents(salttap, capture, config)
    assert len(exp.docs) > 4000, len(exp.docs)
    head, tail = split_capture(capture, tmp_path, 1 / 3)
    if gates == 1:
        gate = Gate(tmp_path / "gate")
        files = [head, gate.path, tail]
    else:
        middle, last = split_capture(tail, tmp_path, 1 / 2)
        gate = [Gate(tmp_path / "gate-1"), Gate(tmp_path / "gate-2")]
        files = [head, gate[0].path, middle, gate[1].path, last]
    r = replays(salttap, files, config, tmp_path / "replay.log")
    n = wait_until(f"documents under {prefix}-*", lambda: max(total_count(url(cluster), prefix), 0), 120, r)
    return r, gate, exp, spool, n


# ---------------------------------------------------------------- a. kill -9 the primary's node

def test_kill_the_primary_node_mid_stream(cluster, salttap, replays, tmp_path):
    prefix = "ca"
    r, gate, exp, spool, n = start_shipping(cluster, salttap, replays, tmp_path, prefix, seed=11)
    # Round robin: before any fault, bulk requests reached every node (the REST actions each
    # node served; the test itself sends no _bulk). Sticking to one host would leave two at 0.
    wait_until("a bulk request on every node", lambda: all(v > 0 for v in bulks_by_node(cluster).values()), 60, r)
    index, victim = primary_node(cluster, f"{prefix}-returns-*")
    print(f"kill -9 {cluster.node_names[victim]} (primary of {index}) with {n} documents searchable")
    cluster.kill(victim)
    assert r.running() and ACKED not in r.text(), r.text()[-4000:]
    gate.open(r)
    # The two nodes left elect a cluster-manager if needed and promote the replicas in sync
    # (an index created moments before may have none yet: red until the node is back).
    cluster.wait_health(nodes=2, timeout=90)
    r.wait_log(SPOOLED, timeout=120)
    cluster.start_node(victim)
    log = finish(r, cluster, prefix, exp, spool)
    assert "engine host failed" in log, "the killed node's requests went to another host"


# ---------------------------------------------------------------- b. two of three stopped

def test_two_of_three_stopped_then_recovered(cluster, salttap, replays, tmp_path):
    prefix = "cb"
    r, gate, exp, spool, n = start_shipping(cluster, salttap, replays, tmp_path, prefix, seed=22)
    stopped = [1, 2]
    for i in stopped:
        cluster.kill(i)
    print(f"killed {[cluster.node_names[i] for i in stopped]} with {n} documents searchable")
    gate.open(r)
    # No elected cluster-manager: salttap's health poll says red, documents wait in the spool.
    r.wait_log(SPOOLED, timeout=120)
    wait_until("salttap seeing the cluster red", lambda: re.search(r"engine cluster red", r.text()), 60, r)
    assert r.running() and ACKED not in r.text(), r.text()[-4000:]
    for i in stopped:
        cluster.start_node(i)
    log = finish(r, cluster, prefix, exp, spool)
    red = log.index("engine cluster red")
    assert re.search(r"engine cluster (green|yellow)", log[red:]), log[red:][-3000:]


# ---------------------------------------------------------------- c. replicas changed while shipping

def test_replica_count_changed_while_shipping(cluster, salttap, replays, tmp_path):
    """1 -> 2 replicas as the second third ships, 2 -> 0 as the last third does."""
    prefix = "cc"
    r, gate, exp, spool, _ = start_shipping(cluster, salttap, replays, tmp_path, prefix, seed=33, gates=2)
    u = url(cluster)

    def copies() -> bool:
        h = ok(f"{u}/_cluster/health/{prefix}-*")
        return h["active_shards"] == 3 * h["active_primary_shards"] and h["initializing_shards"] == 0

    gate[0].open(r)
    ok(f"{u}/{prefix}-*/_settings", "PUT", {"index": {"number_of_replicas": 2}})
    wait_until("a copy of every shard on every node", copies, 90, r)
    gate[1].open(r)
    ok(f"{u}/{prefix}-*/_settings", "PUT", {"index": {"number_of_replicas": 0}})
    finish(r, cluster, prefix, exp, spool)
