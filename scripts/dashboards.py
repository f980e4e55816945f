#!/usr/bin/env python3
"""salttap's saved objects for Kibana 8.x and OpenSearch Dashboards 2.x, written from one definition.

    scripts/dashboards.py                    writes deploy/kibana/salttap.ndjson and
                                             deploy/opensearch-dashboards/salttap.ndjson
    scripts/dashboards.py --check            exit 1 when a committed export is not what this writes
    scripts/dashboards.py --prefix P FILE    prints FILE with the index prefix P (the rule below)

Both exports hold the same objects under the same fixed ids: an index pattern per index kind
(jobs, returns, states, events, alerts), six saved searches, four visualizations and the
"Salt jobs" dashboard. Each is written in its product's saved-objects export format (one JSON
object a line, then the export summary line); docs/dashboards.md says what is in them and why
each product gets the shape it gets.

The index prefix rule, which `salttap setup --dashboards` applies for a non-default
`indexer.index_prefix`: the only strings that name indices are the `attributes.title` of the
`index-pattern` objects, each "salt-<kind>*"; its leading "salt" becomes the prefix. Nothing else
changes: ids are fixed, references point at ids, and no query, column or aggregation names an
index. tests/engines/test_dashboards_contract.py keeps it so. ("<prefix>-<kind>*" matches the
daily indices <prefix>-<kind>-YYYY.MM.DD and, with `index_date: false`, <prefix>-<kind>.)

Standard library only.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPPINGS = ROOT / "mappings"
DEFAULT_PREFIX = "salt"
INDEX_KINDS = ("jobs", "returns", "states", "events", "alerts")


# ---------------------------------------------------------------- the index prefix rule

def index_pattern_title(kind: str, prefix: str = DEFAULT_PREFIX) -> str:
    return f"{prefix}-{kind}*"


def with_index_prefix(objects: list[dict], prefix: str) -> list[dict]:
    """The export's objects (summary line included) with `prefix` in place of the default one."""
    out = []
    for obj in objects:
        if obj.get("type") == "index-pattern":
            title = obj["attributes"]["title"]
            if not title.startswith(DEFAULT_PREFIX + "-"):
                raise ValueError(f"index pattern {obj['id']}: title {title!r} does not start with "
                                 f"{DEFAULT_PREFIX}-")
            obj = json.loads(json.dumps(obj))
            obj["attributes"]["title"] = prefix + title[len(DEFAULT_PREFIX):]
        out.append(obj)
    return out


# ---------------------------------------------------------------- the products

@dataclass(frozen=True)
class Product:
    name: str
    path: Path
    # Per type, the newest migration the object's shape already has. Kibana runs the newer ones
    # on import; an object claiming a version the product does not know is refused.
    migration_versions: dict[str, str]
    core_migration_version: str | None  # Kibana only
    summary: dict                       # the export summary line, minus exportedCount
    panel_version: str                  # dashboard panels' "version"
    normalized_interval_param: str      # date_histogram: "use the normalized interval" switch
    kibana_8: bool


# Kibana 8.0 made these types shareable, which is a migration at 8.0.0 for each, so every 8.x
# knows "8.0.0"; 8.8+ moved to typeMigrationVersion and still converts this legacy field.
KIBANA = Product(
    name="Kibana 8.x",
    path=ROOT / "deploy" / "kibana" / "salttap.ndjson",
    migration_versions={t: "8.0.0" for t in ("index-pattern", "search", "visualization", "dashboard")},
    core_migration_version="8.0.0",
    summary={"excludedObjects": [], "excludedObjectsCount": 0, "missingRefCount": 0, "missingReferences": []},
    panel_version="8.0.0",
    normalized_interval_param="useNormalizedEsInterval",
    kibana_8=True,
)
# OpenSearch Dashboards 2.x keeps Kibana 7.10's saved-object migrations: the newest per type.
# Panel versions below 7.3 would be "migrated" from 6.x shapes when a dashboard opens.
DASHBOARDS = Product(
    name="OpenSearch Dashboards 2.x",
    path=ROOT / "deploy" / "opensearch-dashboards" / "salttap.ndjson",
    migration_versions={"index-pattern": "7.6.0", "search": "7.9.3", "visualization": "7.10.0",
                        "dashboard": "7.9.3"},
    core_migration_version=None,
    summary={"missingRefCount": 0, "missingReferences": []},
    panel_version="7.10.2",
    normalized_interval_param="useNormalizedOpenSearchInterval",
    kibana_8=False,
)
PRODUCTS = (KIBANA, DASHBOARDS)


# ---------------------------------------------------------------- what the exports hold

def duration_ms() -> dict:
    return {"id": "duration", "params": {"inputFormat": "milliseconds", "outputFormat": "asSeconds",
                                          "outputPrecision": 3, "showSuffix": True}}


def truncate(length: int) -> dict:
    return {"id": "truncate", "params": {"fieldLength": length}}


# kind -> (id, Kibana data view name, field formats); the time field is @timestamp everywhere
INDEX_PATTERNS = {
    "jobs": ("00559532-f759-4f34-8278-b68956cd5ebc", "salttap jobs",
             {"duration_ms": duration_ms(), "args_text": truncate(256)}),
    "returns": ("685f76d9-cd94-4983-a555-2e89e4df4151", "salttap returns",
                {"states.duration_ms": duration_ms(), "fun_args_text": truncate(256),
                 "return_text": truncate(512)}),
    "states": ("f5988fe6-47ac-4267-8d0a-437de74199ff", "salttap states",
               {"duration_ms": duration_ms(), "changes_text": truncate(512)}),
    "events": ("aaad198b-7b68-4767-b5b4-63ef0aa5386b", "salttap events", {"data_text": truncate(512)}),
    "alerts": ("292aa6cf-fe83-4055-a640-8cb3487029f0", "salttap alerts", {}),
}
TIME_FIELD = "@timestamp"


@dataclass(frozen=True)
class SavedSearch:
    key: str
    id: str
    title: str
    description: str
    kind: str    # the index pattern
    query: str   # Lucene
    columns: tuple[str, ...]


SAVED_SEARCHES = (
    SavedSearch("failed_jobs", "8fbfe44c-af71-4e77-a7cd-e2cd95e238f6", "Failed jobs",
                "Jobs that settled failed: a non-zero retcode, success false, a failed state, a render "
                "error or a missing function on some minion, or a runner or wheel job that did not "
                "succeed (failed wins over missing).",
                "jobs", "status:failed",
                ("jid", "fun", "user", "tgt", "minions.failed", "failed_state_ids", "duration_ms")),
    SavedSearch("missing_jobs", "18e7ffae-72c2-41ea-a4c8-c2db7067d892", "Jobs with missing minions",
                "Jobs in which some targeted minion never returned by the deadline, whatever their status.",
                "jobs", "counts.missing:>0",
                ("jid", "fun", "user", "tgt", "status", "minions.missing", "counts.missing")),
    SavedSearch("risky_jobs", "a0f3c45e-4ee5-4f30-8ec6-13b5eaec559c", "Risky commands",
                "Jobs an audit rule flagged (risk level low or above), with the rules that matched.",
                "jobs", "risk.level:(low OR medium OR high OR critical)",
                ("jid", "risk.level", "risk.reasons", "user", "fun", "tgt", "args_text")),
    SavedSearch("failed_states", "ec460f3f-1cce-4dcb-add2-61eb2339c338", "Failed states",
                "States that failed (result false), one per minion and run; needs states_index: true.",
                "states", "outcome:failed",
                ("minion", "jid", "state_id", "function", "name", "sls", "comment")),
    SavedSearch("alerts", "ac7d52be-f404-422a-82a8-81f465e25753", "Alerts",
                "Every alert salttap raised: one per failed, missing or risky job, and spool_full.",
                "alerts", "alert:*",
                ("alert", "kinds", "jid", "fun", "user", "tgt", "status", "risk.level")),
    SavedSearch("minion_returns", "5ea0f507-95cc-41cf-9eca-a0e098f0c9a3", "Returns of a minion",
                "Every return of one minion; put its id in place of minion-a in the query.",
                "returns", 'minion:"minion-a"',
                ("minion", "jid", "fun", "status", "retcode", "reason", "return_text")),
)
SEARCH_BY_KEY = {s.key: s for s in SAVED_SEARCHES}


def count() -> dict:
    return {"type": "count", "schema": "metric", "params": {}}


def terms(field: str, size: int, schema: str) -> dict:
    return {"type": "terms", "schema": schema,
            "params": {"field": field, "orderBy": "1", "order": "desc", "size": size, "otherBucket": False,
                       "otherBucketLabel": "Other", "missingBucket": False, "missingBucketLabel": "Missing"}}


def date_histogram(field: str) -> dict:
    return {"type": "date_histogram", "schema": "segment",
            "params": {"field": field, "interval": "auto", "min_doc_count": 1, "extended_bounds": {},
                       "scaleMetricValues": False, "drop_partials": False}}


@dataclass(frozen=True)
class Visualization:
    key: str
    id: str
    title: str
    description: str
    vis_type: str         # a classic aggregation-based type, the same in both products
    kind: str | None      # the index pattern, or None when `search` is the source
    query: str            # Lucene, on `kind`
    search: str | None    # the key of the saved search it is built on
    aggs: tuple[dict, ...]  # the first is the count metric, id "1" (orderBy "1" refers to it)
    params: dict


XY = {"addTooltip": True, "addLegend": True, "legendPosition": "right"}
VISUALIZATIONS = (
    Visualization("jobs_over_time", "0b303c05-7b3d-41d8-96cd-f8fd86d433f2", "Jobs over time by status",
                  "Jobs started per interval, stacked by their status.",
                  "histogram", "jobs", "", None,
                  (count(), date_histogram(TIME_FIELD), terms("status", 5, "group")),
                  {"type": "histogram", **XY}),
    Visualization("failing_minions", "91d88e37-b6a6-4c80-9b05-0ab66c123ad1", "Top failing minions",
                  "The minions with the most failed returns.",
                  "horizontal_bar", "returns", "status:failed", None,
                  (count(), terms("minion", 10, "segment")),
                  {"type": "histogram", **XY, "legendPosition": "bottom"}),
    Visualization("failing_states", "d3db262c-7b9b-4f42-bdaa-66d7edd21553", "Top failing states",
                  "The state IDs that failed most often: one count per minion and run (from the returns, "
                  "so it needs no states index).",
                  "table", "returns", "status:failed", None,
                  (count(), terms("failed_state_ids", 10, "bucket")),
                  {"perPage": 10, "showPartialRows": False, "showMetricsAtAllLevels": False, "showTotal": False,
                   "totalFunc": "sum", "percentageCol": ""}),
    Visualization("risky_by_user", "dc248caf-ba89-4a6c-bceb-f2770e3b0ae6", "Risky commands by user",
                  "Flagged jobs per user, split by risk level (the Risky commands search).",
                  "horizontal_bar", None, "", "risky_jobs",
                  (count(), terms("user", 10, "segment"), terms("risk.level", 5, "group")),
                  {"type": "histogram", **XY}),
)
VIS_BY_KEY = {v.key: v for v in VISUALIZATIONS}

DASHBOARD_ID = "5f7db6d5-c6f3-4e92-aaea-45e37d00dfaf"
DASHBOARD_TITLE = "Salt jobs"
# (object type, key, x, y, w, h) on the 48-column grid
DASHBOARD_PANELS = (
    ("visualization", "jobs_over_time", 0, 0, 32, 14),
    ("visualization", "failing_minions", 32, 0, 16, 14),
    ("visualization", "failing_states", 0, 14, 16, 14),
    ("visualization", "risky_by_user", 16, 14, 32, 14),
    ("search", "alerts", 0, 28, 48, 16),
)


# ---------------------------------------------------------------- the objects, per product

def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def mapped_fields(kind: str) -> dict[str, str]:
    """Dotted field name -> mapping type for the indexed fields of mappings/<kind>.json (objects
    kept in _source only and the per-server flat type are left out)."""
    out: dict[str, str] = {}

    def walk(props: dict, prefix: str) -> None:
        for name, spec in props.items():
            path = prefix + name
            if "properties" in spec:
                walk(spec["properties"], path + ".")
            elif spec.get("enabled", True) and not spec["type"].startswith("$"):
                out[path] = spec["type"]

    walk(json.loads((MAPPINGS / f"{kind}.json").read_text())["mappings"]["properties"], "")
    return out


FIELD_TYPES = {"keyword": "string", "text": "string", "date": "date", "long": "number", "double": "number",
               "boolean": "boolean"}
META_FIELDS = (  # what Dashboards lists for every index pattern
    {"name": "_id", "type": "string", "esTypes": ["_id"], "searchable": True, "aggregatable": True},
    {"name": "_index", "type": "string", "esTypes": ["_index"], "searchable": True, "aggregatable": True},
    {"name": "_score", "type": "number", "searchable": False, "aggregatable": False},
    {"name": "_source", "type": "_source", "esTypes": ["_source"], "searchable": False, "aggregatable": False},
    {"name": "_type", "type": "string", "searchable": False, "aggregatable": False},
)


def dashboards_field_list(kind: str) -> list[dict]:
    """The index pattern's cached field list, as Dashboards writes it after reading the mapping:
    with it the pattern works before the first index exists (Kibana 8 keeps no such list)."""
    fields = [{"count": 0, "scripted": False, "readFromDocValues": False, **f} for f in META_FIELDS]
    for name, es_type in sorted(mapped_fields(kind).items()):
        aggregatable = es_type != "text"
        fields.append({"count": 0, "name": name, "type": FIELD_TYPES[es_type], "esTypes": [es_type],
                       "scripted": False, "searchable": True, "aggregatable": aggregatable,
                       "readFromDocValues": aggregatable})
    return fields


def saved_object(product: Product, type_: str, id_: str, attributes: dict, references: list[dict]) -> dict:
    obj = {"attributes": attributes, "id": id_, "migrationVersion": {type_: product.migration_versions[type_]},
           "references": references, "type": type_}
    if product.core_migration_version:
        obj["coreMigrationVersion"] = product.core_migration_version
    return obj


def index_ref(kind: str) -> dict:
    return {"id": INDEX_PATTERNS[kind][0], "name": "kibanaSavedObjectMeta.searchSourceJSON.index",
            "type": "index-pattern"}


def search_source(query: str, indexed: bool) -> dict:
    source = {"query": {"query": query, "language": "lucene"}, "filter": []}
    if indexed:
        source["indexRefName"] = "kibanaSavedObjectMeta.searchSourceJSON.index"
    return {"searchSourceJSON": compact(source)}


def index_pattern(product: Product, kind: str) -> dict:
    id_, name, formats = INDEX_PATTERNS[kind]
    attributes = {"title": index_pattern_title(kind), "timeFieldName": TIME_FIELD,
                  "fieldFormatMap": compact(formats)}
    if product.kibana_8:
        attributes.update(name=name, fields="[]", fieldAttrs="{}", runtimeFieldMap="{}", sourceFilters="[]",
                          typeMeta="{}")
    else:
        attributes["fields"] = compact(dashboards_field_list(kind))
    return saved_object(product, "index-pattern", id_, attributes, [])


def saved_search(product: Product, s: SavedSearch) -> dict:
    attributes = {"title": s.title, "description": s.description, "columns": list(s.columns),
                  "sort": [[TIME_FIELD, "desc"]], "kibanaSavedObjectMeta": search_source(s.query, True)}
    if product.kibana_8:
        attributes.update(grid={}, hideChart=False)
    else:
        attributes.update(hits=0, version=1)
    return saved_object(product, "search", s.id, attributes, [index_ref(s.kind)])


def visualization(product: Product, v: Visualization) -> dict:
    aggs = []
    for n, agg in enumerate(v.aggs, 1):
        params = dict(agg["params"])
        if agg["type"] == "date_histogram":
            params[product.normalized_interval_param] = True
        aggs.append({"id": str(n), "enabled": True, "type": agg["type"], "params": params, "schema": agg["schema"]})
    vis_state = {"title": v.title, "type": v.vis_type, "aggs": aggs, "params": v.params}
    attributes = {"title": v.title, "description": v.description, "version": 1, "uiStateJSON": "{}",
                  "visState": compact(vis_state),
                  "kibanaSavedObjectMeta": search_source(v.query, v.search is None)}
    if v.search is None:
        references = [index_ref(v.kind)]
    else:
        attributes["savedSearchRefName"] = "search_0"
        references = [{"id": SEARCH_BY_KEY[v.search].id, "name": "search_0", "type": "search"}]
    return saved_object(product, "visualization", v.id, attributes, references)


def dashboard(product: Product) -> dict:
    panels, references = [], []
    for n, (type_, key, x, y, w, h) in enumerate(DASHBOARD_PANELS, 1):
        ref_name = f"panel_{n}"
        panel = {"version": product.panel_version, "gridData": {"x": x, "y": y, "w": w, "h": h, "i": str(n)},
                 "panelIndex": str(n), "embeddableConfig": {}, "panelRefName": ref_name}
        if product.kibana_8:
            panel["type"] = type_
        panels.append(panel)
        target = VIS_BY_KEY[key].id if type_ == "visualization" else SEARCH_BY_KEY[key].id
        references.append({"id": target, "name": ref_name, "type": type_})
    attributes = {"title": DASHBOARD_TITLE,
                  "description": "What salttap saw: jobs by status, who fails, what fails, risky commands, "
                                 "recent alerts.",
                  "hits": 0, "version": 1, "timeRestore": False, "panelsJSON": compact(panels),
                  "optionsJSON": compact({"useMargins": True, "hidePanelTitles": False}),
                  "kibanaSavedObjectMeta": search_source("", False)}
    return saved_object(product, "dashboard", DASHBOARD_ID, attributes, references)


def export_objects(product: Product) -> list[dict]:
    """Every object, referenced objects before those that use them, then the summary line."""
    objects = [index_pattern(product, kind) for kind in INDEX_KINDS]
    objects += [saved_search(product, s) for s in SAVED_SEARCHES]
    objects += [visualization(product, v) for v in VISUALIZATIONS]
    objects.append(dashboard(product))
    return objects + [{"exportedCount": len(objects), **product.summary}]


def render(objects: list[dict]) -> str:
    return "".join(json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
                   for obj in objects)


def read_export(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare the committed exports, write nothing")
    ap.add_argument("--prefix", help="print FILE with this index prefix")
    ap.add_argument("file", nargs="?", type=Path)
    a = ap.parse_args(argv)
    if a.prefix is not None:
        if a.file is None:
            ap.error("--prefix needs FILE")
        sys.stdout.write(render(with_index_prefix(read_export(a.file), a.prefix)))
        return 0
    stale = []
    for product in PRODUCTS:
        text = render(export_objects(product))
        rel = product.path.relative_to(ROOT)
        if a.check:
            if not product.path.exists() or product.path.read_text() != text:
                stale.append(str(rel))
        else:
            product.path.parent.mkdir(parents=True, exist_ok=True)
            product.path.write_text(text)
            print(f"wrote {rel}")
    for rel in stale:
        print(f"{rel} is not what scripts/dashboards.py writes; run scripts/dashboards.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
