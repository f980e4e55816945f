"""The saved searches, visualizations and alert examples on real OpenSearch 2.19,
OpenSearch 3.9 and Elasticsearch 7.17 loaded with every capture.

Each engine gets the captures of both Salt releases through `salttap replay --ship`, in the
order they were recorded (one stream, as one master saw them), under the index prefix "dash":
the exports are used as `salttap setup --dashboards` will use them, with the prefix rule of
scripts/dashboards.py applied, and so are the alert examples' index names.

Kibana, OpenSearch Dashboards, Watcher and the Alerting plugin are not here (no registry this
suite can reach carries them); tests/harness/saved_objects.py builds the _search bodies they
build, and the engines run them. What each object must find is computed independently: from the
documents `salttap replay --output documents` says the engine ends up with (the final version of
each _id), with plain predicates for what each title promises.

salttap binary: $SALTTAP_BIN, else $SALTTAP_BUILD_DIR/salttap, else build/dev/salttap (binaries.py).

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_dashboards_engines.py -v
"""
from __future__ import annotations

import collections
import json
from datetime import datetime, timezone

import pytest

import saved_objects as so
from engine import Engine
from indexed import ok
from saved_objects import dashboards

PREFIX = "dash"
MINUTES_5 = 5 * 60_000


def ms_of(stamp: str) -> int:
    """Epoch milliseconds of a document's date, cut to milliseconds as the engine stores it."""
    whole, _, frac = stamp.rstrip("Z").partition(".")
    t = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return int(t.timestamp()) * 1000 + int((frac + "000")[:3])


DAY = (ms_of("2026-11-29T00:00:00Z"), ms_of("2026-11-30T00:00:00Z"))  # the time picker: the captures' day

# What each title promises, said without the saved objects' queries: (kind, predicate on a document).
SEARCH_PROMISES = {
    "Failed jobs": ("jobs", lambda d: d["status"] == "failed"),
    "Jobs with missing minions": ("jobs", lambda d: d.get("counts", {}).get("missing", 0) > 0),
    "Risky commands": ("jobs", lambda d: d["risk"]["level"] != "none"),
    "Failed states": ("states", lambda d: d["result"] is False),
    "Alerts": ("alerts", lambda d: True),
    "Returns of a minion": ("returns", lambda d: d["minion"] == "minion-a"),
}


def minute(stamp: str) -> int:
    return ms_of(stamp) // 60_000 * 60_000


# Count per bucket path (outer to inner), computed from the documents.
VIS_PROMISES = {
    "Jobs over time by status": lambda docs: collections.Counter(
        (minute(d["@timestamp"]), d["status"]) for d in docs["jobs"].values()),
    "Top failing minions": lambda docs: collections.Counter(
        (d["minion"],) for d in docs["returns"].values() if d["status"] == "failed"),
    # one count per failed state per minion and run: the states index says it independently
    "Top failing states": lambda docs: collections.Counter(
        (d["state_id"],) for d in docs["states"].values() if d["result"] is False),
    "Risky commands by user": lambda docs: collections.Counter(
        (d["user"], d["risk"]["level"]) for d in docs["jobs"].values() if d["risk"]["level"] != "none"),
}


# ---------------------------------------------------------------- salttap, the captures, the documents

@pytest.fixture(scope="module")
def replay_prefix() -> str:
    return PREFIX


@pytest.fixture(scope="module")
def replay_states_index() -> bool:
    return True  # the failed-states objects read the states index


@pytest.fixture(scope="module")
def documents(replayed_documents) -> dict[str, dict[str, dict]]:
    """kind -> _id -> the source the engine keeps (the highest external version, else the first write)."""
    docs = replayed_documents.by_kind(PREFIX)
    assert set(dashboards.INDEX_KINDS) <= set(docs), sorted(docs)
    return docs


@pytest.fixture(scope="module")
def engine(replayed_engine) -> Engine:
    """An engine of each flavor holding every capture's documents under PREFIX."""
    return replayed_engine


def search(eng: Engine, indices: str | list[str], body: dict) -> dict:
    target = indices if isinstance(indices, str) else ",".join(indices)
    return ok(f"{eng.url}/{target}/_search", "POST", body)


def hit_ids(response: dict) -> list[str]:
    return [h["_id"] for h in response["hits"]["hits"]]


@pytest.fixture(scope="module", params=[p.path.parent.name for p in dashboards.PRODUCTS])
def export(request) -> so.Export:
    product = next(p for p in dashboards.PRODUCTS if p.path.parent.name == request.param)
    return so.load_export(product.path, PREFIX)


# ---------------------------------------------------------------- index patterns

def test_index_patterns_cover_their_indices(engine, export, documents):
    """Each prefixed title matches exactly its kind's indices, whose live fields are what the
    patterns say (Dashboards' cached field list, the time field, the formatted fields)."""
    for pattern in export.of_type("index-pattern"):
        a = pattern["attributes"]
        kind = a["title"][len(PREFIX) + 1:-1]
        assert a["title"] == f"{PREFIX}-{kind}*"
        indices = ok(f"{engine.url}/{a['title']}/_count")
        assert indices["count"] == len(documents[kind])
        caps = ok(f"{engine.url}/{a['title']}/_field_caps?fields=*")["fields"]
        live = {name: next(iter(types)) for name, types in caps.items()
                if not name.startswith("_") and "object" not in types}
        assert live[a["timeFieldName"]] == "date"
        for field in json.loads(a["fieldFormatMap"]):
            assert field in live, f"{a['title']}: formatted field {field} not in the live mapping"
        listed = {f["name"]: f for f in json.loads(a["fields"]) if not f["name"].startswith("_")}
        if listed:  # Dashboards: the cached list is what it would read from the engine now
            assert {n: f["esTypes"][0] for n, f in listed.items()} == {
                n: t for n, t in live.items() if t in dashboards.FIELD_TYPES}
            for name, f in listed.items():
                (cap,) = caps[name].values()
                assert f["aggregatable"] == cap["aggregatable"], name


# ---------------------------------------------------------------- saved searches

@pytest.mark.parametrize("title", sorted(SEARCH_PROMISES))
def test_saved_search_finds_what_its_title_promises(engine, export, documents, title):
    kind, promise = SEARCH_PROMISES[title]
    expected = {i for i, d in documents[kind].items() if promise(d)}
    assert expected, f"the captures hold no document for {title!r}: the test would prove nothing"
    if title != "Alerts":
        assert expected != set(documents[kind]), f"{title!r} would hold every {kind} document"
    index, body = so.discover_request(export, export.titled("search", title), *DAY)
    got = search(engine, index, body)
    ids = hit_ids(got)
    assert got["hits"]["total"]["value"] == len(ids)
    assert set(ids) == expected, (f"{title}: {len(set(ids) - expected)} unexpected "
                                  f"{sorted(set(ids) - expected)[:5]}, {len(expected - set(ids))} missing "
                                  f"{sorted(expected - set(ids))[:5]}")
    assert len(ids) == len(expected)
    stamps = [documents[kind][i]["@timestamp"] for i in ids]
    assert stamps == sorted(stamps, reverse=True), "newest first"


# ---------------------------------------------------------------- visualizations

@pytest.mark.parametrize("title", sorted(VIS_PROMISES))
def test_visualization_shows_what_its_title_promises(engine, export, documents, title):
    vis = export.titled("visualization", title)
    expected = VIS_PROMISES[title](documents)
    assert expected, f"the captures give {title!r} nothing to show"
    for depth, agg in enumerate(so.bucket_aggs(vis)):
        if agg["type"] == "terms":  # no top-N cut to argue about: every value fits
            distinct = {key[depth] for key in expected}
            assert len(distinct) <= agg["params"]["size"], f"{title}: {len(distinct)} values of {agg['params']['field']}"
    index, body = so.visualization_request(export, vis, *DAY)
    assert so.bucket_counts(vis, search(engine, index, body)) == dict(expected)


# ---------------------------------------------------------------- the alert examples

def alert_windows(documents) -> list[tuple[int, set[str]]]:
    """(window end, the jobs _ids a 5-minute window ending then must find), around every failed or
    missing job's settle time: ending at it, one ms before, and where its window starts at it and
    one ms later."""
    settled = {i: ms_of(d["settled_at"]) for i, d in documents["jobs"].items()
               if d["status"] in ("failed", "missing")}
    ends = sorted({e for t in settled.values() for e in (t - 1, t, t + MINUTES_5, t + MINUTES_5 + 1)})
    return [(end, {i for i, t in settled.items() if end - MINUTES_5 <= t <= end}) for end in ends]


ALERT_EXAMPLES = {
    "opensearch-monitor.json": so.monitor_request,
    "kibana-rule.json": so.kibana_rule_request,
    "watcher-watch.json": so.watch_request,
}


@pytest.mark.parametrize("example", sorted(ALERT_EXAMPLES))
def test_alert_example_finds_exactly_the_failed_or_missing_jobs(engine, documents, example):
    definition = so.load_alerting(example)
    windows = alert_windows(documents)
    assert any(len(want) >= 2 for _, want in windows) and any(not want for _, want in windows)
    statuses = collections.Counter(documents["jobs"][i]["status"] for _, want in windows for i in want)
    assert statuses["failed"] and statuses["missing"], "the captures must hold both kinds"
    for end, want in windows:
        indices, body = ALERT_EXAMPLES[example](definition, end, PREFIX)
        got = search(engine, indices, body)
        assert got["hits"]["total"]["value"] == len(want), f"{example}, window ending {so.iso_ms(end)}"
        assert set(hit_ids(got)) == want, f"{example}, window ending {so.iso_ms(end)}"
