"""The saved-object exports and alert examples, checked without an engine.

- Export format, per product (deploy/kibana/salttap.ndjson for Kibana 8.x,
  deploy/opensearch-dashboards/salttap.ndjson for OpenSearch Dashboards 2.x): every line one JSON
  object with exactly the product's keys (type, id, attributes, references, migrationVersion, and
  coreMigrationVersion on Kibana; no `version`, which would make an overwriting import a
  concurrency-checked update), the product's migration versions, fixed UUIDs unique in the file,
  references that resolve to objects in the file and are each used, the JSON held in strings
  (searchSourceJSON, visState, panelsJSON, fieldFormatMap, fields) parsing, and the summary line.
- Field contract: every field a saved object names (time fields, field formats, Dashboards' field
  list, queries, columns, sorts, aggregations) and every field the alert examples query is mapped
  in mappings/ with a type that can do it (keyword for terms, date for a date histogram, ...).
- The index prefix rule (scripts/dashboards.py): only index-pattern titles name indices.
- The committed exports are what scripts/dashboards.py writes.

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_dashboards_contract.py -v
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import saved_objects as so
from saved_objects import dashboards

PRODUCTS = {p.path.parent.name: p for p in dashboards.PRODUCTS}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
TYPES = ("index-pattern", "search", "visualization", "dashboard")
REF_INDEX = "kibanaSavedObjectMeta.searchSourceJSON.index"


def mapping(kind: str) -> dict[str, dict]:
    """Dotted field -> its mapping, read independently of the generator."""
    out = {}

    def walk(props: dict, prefix: str) -> None:
        for name, spec in props.items():
            if "properties" in spec:
                walk(spec["properties"], f"{prefix}{name}.")
            else:
                out[prefix + name] = spec

    walk(json.loads((so.ROOT / "mappings" / f"{kind}.json").read_text())["mappings"]["properties"], "")
    return out


KIND_OF_TITLE = {f"salt-{k}*": k for k in dashboards.INDEX_KINDS}
EXACT = {"keyword", "long", "double", "boolean"}     # term, phrase and group clauses, terms aggs
ORDERED = {"long", "double", "date"}                 # range clauses
SORTABLE = {"keyword", "long", "double", "date", "boolean"}
FORMAT_TYPES = {"duration": {"long", "double"}, "truncate": {"keyword", "text"}}


def field_type(kind: str, field: str, what: str) -> str:
    spec = mapping(kind).get(field)
    assert spec is not None, f"{what}: field {field!r} is not mapped in mappings/{kind}.json"
    assert spec.get("enabled", True), f"{what}: {field!r} is kept in _source only (enabled: false)"
    return spec["type"]


def kind_of(pattern: dict) -> str:
    return KIND_OF_TITLE[pattern["attributes"]["title"]]


@pytest.fixture(scope="module", params=sorted(PRODUCTS))
def product(request):
    return PRODUCTS[request.param]


@pytest.fixture(scope="module")
def export(product):
    return so.load_export(product.path)


# ---------------------------------------------------------------- the files

def test_committed_exports_are_generated():
    r = subprocess.run([sys.executable, str(so.ROOT / "scripts" / "dashboards.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_lines_are_json_objects(product):
    text = product.path.read_text()
    assert text.endswith("\n") and "\n\n" not in text
    lines = text.splitlines()
    assert len(lines) >= 2
    for n, line in enumerate(lines, 1):
        assert isinstance(json.loads(line), dict), f"{product.path.name}:{n} is not a JSON object"


def test_summary_line(product, export):
    assert export.summary == {"exportedCount": len(export.objects), **product.summary}


def test_object_keys_and_migration_versions(product, export):
    keys = {"attributes", "id", "migrationVersion", "references", "type"}
    if product.kibana_8:
        keys.add("coreMigrationVersion")
    for obj in export.objects:
        assert set(obj) == keys, f"{obj.get('type')} {obj.get('id')}: keys {sorted(obj)}"
        assert obj["type"] in TYPES
        assert obj["migrationVersion"] == {obj["type"]: product.migration_versions[obj["type"]]}
        if product.kibana_8:
            assert obj["coreMigrationVersion"] == "8.0.0"
        assert isinstance(obj["attributes"], dict) and obj["attributes"]["title"]


def test_ids_are_fixed_unique_uuids(export):
    ids = [o["id"] for o in export.objects]
    assert all(UUID.match(i) for i in ids), ids
    assert len(set(ids)) == len(ids)


def test_same_objects_under_the_same_ids_in_both_products():
    exports = [so.load_export(p.path) for p in dashboards.PRODUCTS]
    catalogs = [{(o["type"], o["id"]): o["attributes"]["title"] for o in e.objects} for e in exports]
    assert catalogs[0] == catalogs[1]


def test_references_resolve_and_are_used(export):
    for obj in export.objects:
        names = [r["name"] for r in obj["references"]]
        assert len(set(names)) == len(names), f"{obj['id']}: duplicate reference names"
        for ref in obj["references"]:
            assert set(ref) == {"id", "name", "type"}
            target = export.get(ref["type"], ref["id"])  # raises when absent
            assert target["type"] == ref["type"]
        used = set()
        a = obj["attributes"]
        if "kibanaSavedObjectMeta" in a:
            src = so.search_source(obj)
            assert src["query"]["language"] == "lucene" and isinstance(src["query"]["query"], str)
            assert src["filter"] == []
            if "indexRefName" in src:
                used.add(src["indexRefName"])
        if "savedSearchRefName" in a:
            used.add(a["savedSearchRefName"])
        if obj["type"] == "dashboard":
            used |= {p["panelRefName"] for p in json.loads(a["panelsJSON"])}
        assert used == set(names), f"{obj['type']} {a['title']}: references {names}, used {sorted(used)}"
        if obj["type"] == "search":
            assert export.get("index-pattern", obj["references"][0]["id"])
            assert obj["references"][0]["name"] == REF_INDEX


def test_index_patterns(product, export):
    patterns = export.of_type("index-pattern")
    assert sorted(p["attributes"]["title"] for p in patterns) == sorted(KIND_OF_TITLE)
    for p in patterns:
        kind, a = kind_of(p), p["attributes"]
        assert field_type(kind, a["timeFieldName"], f"{kind} time field") == "date"
        for field, fmt in json.loads(a["fieldFormatMap"]).items():
            t = field_type(kind, field, f"{kind} field format")
            assert t in FORMAT_TYPES[fmt["id"]], f"{kind}.{field}: format {fmt['id']} on a {t}"
        fields = json.loads(a["fields"])
        if product.kibana_8:
            assert fields == []  # Kibana 8 reads the fields from the engine; it keeps none
            assert a["name"].startswith("salttap ")
            continue
        listed = {f["name"]: f for f in fields if not f["name"].startswith("_")}
        expected = {name: spec["type"] for name, spec in mapping(kind).items()
                    if spec.get("enabled", True) and not spec["type"].startswith("$")}
        assert set(listed) == set(expected), f"{kind}: the field list differs from mappings/{kind}.json"
        for name, f in listed.items():
            assert f["esTypes"] == [expected[name]], name
            assert f["aggregatable"] == (expected[name] != "text"), name
            assert f["type"] == dashboards.FIELD_TYPES[expected[name]], name


def test_saved_searches(export):
    searches = export.of_type("search")
    assert sorted(s["attributes"]["title"] for s in searches) == sorted(
        ["Failed jobs", "Jobs with missing minions", "Risky commands", "Failed states", "Alerts",
         "Returns of a minion"])
    for s in searches:
        pattern, queries = so.source_of(export, s)
        kind, what = kind_of(pattern), f"search {s['attributes']['title']!r}"
        check_queries(kind, queries, what)
        for column in s["attributes"]["columns"]:
            field_type(kind, column, f"{what} column")
        for field, order in s["attributes"]["sort"]:
            assert order in ("asc", "desc")
            assert field_type(kind, field, f"{what} sort") in SORTABLE


def check_queries(kind: str, queries: list[str], what: str) -> None:
    for query in queries:
        for field, how in so.lucene_clauses(query):
            t = field_type(kind, field, f"{what} query")
            if how == "range":
                assert t in ORDERED, f"{what}: range on {field} ({t})"
            elif how != "exists":
                assert t in EXACT, f"{what}: exact match on {field}, a {t} (analyzed text does not match exactly)"


def test_visualizations(export):
    for vis in export.of_type("visualization"):
        state, what = so.vis_state(vis), f"visualization {vis['attributes']['title']!r}"
        assert state["title"] == vis["attributes"]["title"]
        assert state["type"] in ("histogram", "horizontal_bar", "line", "area", "pie", "table")
        pattern, queries = so.source_of(export, vis)
        kind = kind_of(pattern)
        check_queries(kind, queries, what)
        ids = [a["id"] for a in state["aggs"]]
        assert len(set(ids)) == len(ids)
        assert state["aggs"][0] == {"id": "1", "enabled": True, "type": "count", "params": {}, "schema": "metric"}
        for agg in state["aggs"][1:]:
            field = agg["params"]["field"]
            t = field_type(kind, field, f"{what} {agg['type']}")
            if agg["type"] == "terms":
                assert t in EXACT, f"{what}: terms on {field}, a {t}"
                assert agg["params"]["orderBy"] == "1"
            elif agg["type"] == "date_histogram":
                assert t == "date", f"{what}: date_histogram on {field}, a {t}"
            else:
                pytest.fail(f"{what}: unexpected aggregation {agg['type']}")


def test_dashboard(product, export):
    [board] = export.of_type("dashboard")
    assert board["attributes"]["title"] == "Salt jobs"
    panels = json.loads(board["attributes"]["panelsJSON"])
    titles = []
    for panel in panels:
        g = panel["gridData"]
        assert g["i"] == panel["panelIndex"] and 0 <= g["x"] and g["x"] + g["w"] <= 48 and g["h"] > 0
        assert panel["version"] == product.panel_version
        target = export.reference(board, panel["panelRefName"])
        if product.kibana_8:
            assert panel["type"] == target["type"]
        titles.append(target["attributes"]["title"])
    assert len({p["panelIndex"] for p in panels}) == len(panels)
    assert titles == ["Jobs over time by status", "Top failing minions", "Top failing states",
                      "Risky commands by user", "Alerts"]
    assert json.loads(board["attributes"]["optionsJSON"])["useMargins"] is True


# ---------------------------------------------------------------- the index prefix rule

def strings(value):
    """Every string in a JSON value, also inside strings that hold JSON."""
    if isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, str):
        yield value
        if value[:1] in "[{":
            try:
                yield from strings(json.loads(value))
            except ValueError:
                pass


def test_only_index_pattern_titles_name_indices(export):
    titles = {p["attributes"]["title"] for p in export.of_type("index-pattern")}
    naming = [s for o in export.objects for s in strings(o) if "salt-" in s.lower()]
    assert sorted(naming) == sorted(titles)


def test_prefix_rule_rewrites_only_the_titles(product):
    before = dashboards.read_export(product.path)
    after = dashboards.with_index_prefix(before, "acme")
    for old, new in zip(before, after):
        if old.get("type") == "index-pattern":
            assert new["attributes"]["title"] == "acme" + old["attributes"]["title"][len("salt"):]
            old = dict(old, attributes=dict(old["attributes"], title=new["attributes"]["title"]))
        assert new == old
    r = subprocess.run([sys.executable, str(so.ROOT / "scripts" / "dashboards.py"), "--prefix", "acme",
                        str(product.path)], capture_output=True, text=True, check=True)
    assert r.stdout == dashboards.render(after)
    assert sorted(o["attributes"]["title"] for o in after if o.get("type") == "index-pattern") == sorted(
        f"acme-{k}*" for k in dashboards.INDEX_KINDS)


def test_prefix_rule_refuses_a_title_it_cannot_rewrite():
    with pytest.raises(ValueError, match="does not start with salt-"):
        dashboards.with_index_prefix([{"type": "index-pattern", "id": "x", "attributes": {"title": "logs-*"}}],
                                     "acme")


# ---------------------------------------------------------------- the alert examples

ALERT_SOURCE = ("master", "jid", "fun", "user", "tgt", "status", "settled_at", "minions.failed", "minions.missing")


def check_failed_or_missing_search(body: dict, what: str) -> None:
    """The search every alert example runs: status failed or missing, settled in the window."""
    filters = body["query"]["bool"]["filter"]
    assert filters[0] == {"terms": {"status": ["failed", "missing"]}}, what
    assert field_type("jobs", "status", what) == "keyword"
    if len(filters) > 1:
        (field, _), = filters[1]["range"].items()
        assert field_type("jobs", field, what) == "date"
    for field in body.get("_source", []):
        field_type("jobs", field, f"{what} _source")
    for sort in body.get("sort", []):
        (field, _), = sort.items()
        assert field_type("jobs", field, f"{what} sort") in SORTABLE


def test_opensearch_monitor_shape():
    m = so.load_alerting("opensearch-monitor.json")
    assert m["type"] == "monitor" and m["monitor_type"] == "query_level_monitor"
    assert m["schedule"] == {"period": {"interval": 1, "unit": "MINUTES"}}
    search = m["inputs"][0]["search"]
    assert search["indices"] == ["salt-jobs*"]
    check_failed_or_missing_search(search["query"], "monitor")
    assert search["query"]["query"]["bool"]["filter"][1] == {"range": {"settled_at": {
        "gte": "{{period_end}}||-5m", "lte": "{{period_end}}", "format": "epoch_millis"}}}
    [trigger] = m["triggers"]
    assert trigger["condition"]["script"] == {"source": "ctx.results[0].hits.total.value > 0", "lang": "painless"}


def test_kibana_rule_shape():
    r = so.load_alerting("kibana-rule.json")
    assert r["rule_type_id"] == ".es-query" and r["schedule"] == {"interval": "1m"}
    p = r["params"]
    # Kibana 8.0's parameters only (config-schema refuses unknown keys; later ones default well)
    assert set(p) == {"index", "timeField", "esQuery", "size", "threshold", "thresholdComparator",
                      "timeWindowSize", "timeWindowUnit"}
    assert p["index"] == ["salt-jobs*"] and (p["timeWindowSize"], p["timeWindowUnit"]) == (5, "m")
    assert (p["threshold"], p["thresholdComparator"]) == ([0], ">")
    assert field_type("jobs", p["timeField"], "rule timeField") == "date"
    check_failed_or_missing_search(json.loads(p["esQuery"]), "rule")


def test_watcher_watch_shape():
    w = so.load_alerting("watcher-watch.json")
    assert w["trigger"] == {"schedule": {"interval": "1m"}}
    request = w["input"]["search"]["request"]
    assert request["indices"] == ["salt-jobs*"]
    check_failed_or_missing_search(request["body"], "watch")
    assert request["body"]["query"]["bool"]["filter"][1] == {"range": {"settled_at": {
        "gte": "{{ctx.trigger.scheduled_time}}||-5m", "lte": "{{ctx.trigger.scheduled_time}}"}}}
    assert w["condition"] == {"compare": {"ctx.payload.hits.total": {"gt": 0}}}
    assert "logging" in w["actions"]["log"]


def test_lucene_subset_reader():
    assert so.lucene_clauses('status:failed AND NOT (minion:"a b" OR counts.missing:>0) OR risk.level:(low OR high) '
                             "OR alert:*") == [("status", "term"), ("minion", "phrase"), ("counts.missing", "range"),
                                               ("risk.level", "group"), ("alert", "exists")]
    for bad in ("failed", "status:failed OR boom", "(status:failed", "status:failed)", "status:[1 TO 2]"):
        with pytest.raises(ValueError):
            so.lucene_clauses(bad)
