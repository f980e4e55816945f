"""What the engine holds, and what `salttap replay --output documents` says it must hold.

Shared by the engine tests that ship through `salttap replay --ship` (test_indexer_faults.py,
test_tls_auth_engines.py, and the engines loaded with every capture: conftest.py's
replayed_engine, test_ui_browser.py), and by the real-Salt tests that compare what the engine
holds of some jobs before and after (snapshot). Standard library and pytest only.
"""
from __future__ import annotations

import collections
import json
import subprocess
from pathlib import Path

import pytest

from http_calls import call, hits


def ok(url: str, method: str = "GET", body=None):
    status, got = call(url, method, body)
    assert 200 <= status < 300, f"{method} {url}: {status} {json.dumps(got)[:2000]}"
    return got


def counts_by_index(url: str, prefix: str) -> dict[str, int]:
    """Searchable documents per index under `<prefix>-*` (after a refresh)."""
    ok(f"{url}/{prefix}-*/_refresh", "POST")
    body = {"size": 0, "track_total_hits": True,
            "aggs": {"i": {"terms": {"field": "_index", "size": 1000}}}}
    got = ok(f"{url}/{prefix}-*/_search", "POST", body)
    return {b["key"]: b["doc_count"] for b in got["aggregations"]["i"]["buckets"]}


def total_count(url: str, prefix: str) -> int:
    try:
        call(f"{url}/{prefix}-*/_refresh", "POST", timeout=10)
        status, got = call(f"{url}/{prefix}-*/_count", timeout=10)
    except OSError:
        return -1
    return got["count"] if status == 200 else -1


def search_all(url: str, index: str, query: dict, source) -> list[dict]:
    """Every hit of `query` (at most 10,000)."""
    got = ok(f"{url}/{index}/_search", "POST",
             {"size": 10000, "track_total_hits": True, "query": query, "_source": source})
    assert got["hits"]["total"]["value"] <= 10000, "more hits than one page"
    return got["hits"]["hits"]


def assert_ids_present(url: str, index: str, ids: list[str]) -> None:
    """Every id is in `index` (an ids query per chunk). With the index's count equal to
    len(ids) this proves the exact set."""
    for i in range(0, len(ids), 2000):
        chunk = ids[i:i + 2000]
        got = ok(f"{url}/{index}/_search", "POST",
                 {"size": 0, "track_total_hits": True, "query": {"ids": {"values": chunk}}})
        found = got["hits"]["total"]["value"]
        if found != len(chunk):
            hits = search_all(url, index, {"ids": {"values": chunk}}, False)
            absent = sorted(set(chunk) - {h["_id"] for h in hits})
            pytest.fail(f"{index}: {len(chunk) - found} of {len(chunk)} expected ids absent, "
                        f"e.g. {absent[:5]}")


class Expected:
    """What `replay --output documents` says the engine must end up with."""

    def __init__(self, ndjson: str):
        lines = ndjson.splitlines()
        assert lines and len(lines) % 2 == 0, f"odd NDJSON: {len(lines)} lines"
        self.docs: dict[tuple[str, str], dict] = {}  # (index, id) -> the winning write
        self.writes = len(lines) // 2
        for action_line, source_line in zip(lines[::2], lines[1::2]):
            (op, meta), = json.loads(action_line).items()
            key = (meta["_index"], meta["_id"])
            version = meta.get("version", 0)
            prev = self.docs.get(key)
            if prev is None or (meta.get("version_type") == "external" and version > prev["version"]):
                self.docs[key] = {"op": op, "version": version, "line": source_line,
                                  "source": json.loads(source_line)}

    def per_index(self) -> dict[str, int]:
        return dict(collections.Counter(index for index, _ in self.docs))

    def ids(self, index: str) -> list[str]:
        return sorted(i for ix, i in self.docs if ix == index)

    def of_kind(self, prefix: str, kind: str) -> dict[str, dict]:
        """_id -> source of the final write, for one kind of index."""
        want = f"{prefix}-{kind}-"
        return {i: d["source"] for (ix, i), d in self.docs.items() if ix.startswith(want)}

    def by_kind(self, prefix: str) -> dict[str, dict[str, dict]]:
        """kind (jobs, returns, ...) -> _id -> source of the final write, for every index under `prefix`."""
        out: dict[str, dict[str, dict]] = collections.defaultdict(dict)
        for (index, id_), d in self.docs.items():
            out[index[len(prefix) + 1:].split("-")[0]][id_] = d["source"]
        return dict(out)


def expected_documents(salttap: Path, capture: Path | list[Path], config: Path) -> Expected:
    """`salttap replay CAPTURE... --output documents`: what the engine must end up with."""
    files = [capture] if isinstance(capture, Path) else capture
    r = subprocess.run([str(salttap), "replay", *map(str, files), "--output", "documents", "--config",
                        str(config)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"replay --output documents: rc={r.returncode}\n{r.stderr[-3000:]}"
    return Expected(r.stdout)


def replay_config(path: Path, url: str, spool: Path, prefix: str, states_index: bool = False) -> Path:
    """The config the engines loaded with captures are shipped with: master salt-01, quick batches."""
    path.write_text(
        "master_id: salt-01\n"
        "indexer:\n"
        f"  hosts: [\"{url}\"]\n"
        f"  index_prefix: {prefix}\n"
        + ("  states_index: true\n" if states_index else "")
        + f"  spool: {{dir: {spool}}}\n"
        "  bulk: {max_wait_ms: 200, backoff_initial_ms: 200, backoff_max_ms: 2000}\n")
    return path


def ship(salttap: Path, captures: list[Path], config: Path, timeout: float = 240) -> None:
    """`salttap replay CAPTURE... --ship`: every document of the captures acknowledged by the engine."""
    r = subprocess.run([str(salttap), "replay", *map(str, captures), "--ship", "--config", str(config),
                        "--ship-timeout", str(timeout)], capture_output=True, text=True, timeout=timeout + 60)
    assert r.returncode == 0, f"replay --ship: rc={r.returncode}\n{r.stderr[-4000:]}"


def snapshot(url: str, jids: list[str]) -> dict:
    """(index, _id) -> (_version, _source) of every job, return, state and alert document of the jids."""
    out = {}
    for kind in ("jobs", "returns", "states", "alerts"):
        for h in hits(url, f"salt-{kind}-*", {"terms": {"jid": jids}}, size=1000, version=True):
            out[(h["_index"], h["_id"])] = (h.get("_version"), h["_source"])
    return out
