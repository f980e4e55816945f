"""What Kibana and OpenSearch Dashboards send to the engine for salttap's saved objects, and what
the three alerting products send for the examples in deploy/alerting/.

Neither Kibana nor Dashboards (nor Watcher, nor the Alerting plugin) can run here, so the tests
build the same _search bodies the products build and run them on real engines:

- Discover, for a saved search: the Lucene query as `query_string` (with the products' default
  `analyze_wildcard: true`; an empty query is `match_all`) in `bool.must`, the time picker's range
  on the index pattern's time field in `bool.filter`, the saved sort;
- a classic visualization: the same query part (its own, or its saved search's), the bucket
  aggregations nested in the order of `visState.aggs` (`terms` ordered by the count metric,
  `date_histogram` at a fixed interval instead of "auto");
- the OpenSearch Alerting monitor: its search body with `{{period_end}}` rendered (epoch ms);
- the Kibana Elasticsearch-query rule: `esQuery`'s query in `bool.filter` with the rule's time
  window as a range on `timeField`;
- the Watcher watch: its search body with `{{ctx.trigger.scheduled_time}}` rendered (ISO 8601).

Also a reader for the Lucene subset the saved objects use, so the contract test can see every
field a query names. Standard library only.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import dashboards  # scripts/dashboards.py (on the engine suite's path): the generator and the prefix rule

ROOT = Path(__file__).resolve().parents[2]
ALERTING = ROOT / "deploy" / "alerting"


# ---------------------------------------------------------------- the export files

@dataclass
class Export:
    objects: list[dict]  # the saved objects, in file order
    summary: dict        # the last line

    def get(self, type_: str, id_: str) -> dict:
        for obj in self.objects:
            if obj["type"] == type_ and obj["id"] == id_:
                return obj
        raise KeyError(f"no {type_} {id_} in the export")

    def of_type(self, type_: str) -> list[dict]:
        return [o for o in self.objects if o["type"] == type_]

    def titled(self, type_: str, title: str) -> dict:
        found = [o for o in self.of_type(type_) if o["attributes"]["title"] == title]
        assert len(found) == 1, f"{len(found)} {type_} objects titled {title!r}"
        return found[0]

    def reference(self, obj: dict, name: str) -> dict:
        found = [r for r in obj["references"] if r["name"] == name]
        assert len(found) == 1, f"{obj['type']} {obj['id']}: {len(found)} references named {name!r}"
        return self.get(found[0]["type"], found[0]["id"])


def load_export(path: Path, prefix: str = dashboards.DEFAULT_PREFIX) -> Export:
    lines = dashboards.read_export(path)
    if prefix != dashboards.DEFAULT_PREFIX:
        lines = dashboards.with_index_prefix(lines, prefix)
    return Export(lines[:-1], lines[-1])


def search_source(obj: dict) -> dict:
    return json.loads(obj["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])


def vis_state(obj: dict) -> dict:
    return json.loads(obj["attributes"]["visState"])


def source_of(export: Export, obj: dict) -> tuple[dict, list[str]]:
    """(index pattern, Lucene queries) a search or visualization runs: a visualization built on a
    saved search adds its own query to the search's."""
    queries = [search_source(obj)["query"]["query"]]
    if obj["type"] == "visualization" and "savedSearchRefName" in obj["attributes"]:
        search = export.reference(obj, obj["attributes"]["savedSearchRefName"])
        pattern, more = source_of(export, search)
        return pattern, more + queries
    return export.reference(obj, search_source(obj)["indexRefName"]), queries


# ---------------------------------------------------------------- Lucene, the subset in use

CLAUSE = re.compile(r"""
    \s*(?:
      (?P<op>AND|OR|NOT)(?=[\s(])
    | (?P<open>\()
    | (?P<close>\))
    | (?P<field>[A-Za-z_@][\w.@]*):(?:
          (?P<phrase>"[^"\\]*")
        | \((?P<group>[\w.\-]+(?:\s+OR\s+[\w.\-]+)*)\)
        | (?P<range>[<>]=?-?\d+(?:\.\d+)?)
        | (?P<exists>\*)
        | (?P<term>[\w.\-]+)
      )
    )""", re.X)


def lucene_clauses(query: str) -> list[tuple[str, str]]:
    """(field, how) for each clause: how is term, phrase, group (a parenthesised OR of terms),
    range or exists. Anything outside this subset, a bare term (which would search every field)
    among it, is a ValueError."""
    out, pos, depth = [], 0, 0
    while pos < len(query):
        if not query[pos:].strip():
            break
        m = CLAUSE.match(query, pos)
        if not m:
            raise ValueError(f"Lucene query {query!r}: not in the supported subset at {query[pos:]!r}")
        if m["open"]:
            depth += 1
        elif m["close"]:
            depth -= 1
            if depth < 0:
                raise ValueError(f"Lucene query {query!r}: unbalanced parentheses")
        elif m["field"]:
            how = next(k for k in ("phrase", "group", "range", "exists", "term") if m[k] is not None)
            out.append((m["field"], how))
        pos = m.end()
    if depth:
        raise ValueError(f"Lucene query {query!r}: unbalanced parentheses")
    return out


def lucene_to_dsl(query: str) -> dict:
    """What the products' Lucene language sends: luceneStringToDsl, then decorateQuery with the
    default query:queryString:options ({"analyze_wildcard": true})."""
    if not query.strip():
        return {"match_all": {}}
    return {"query_string": {"query": query, "analyze_wildcard": True}}


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def time_range(field: str, start_ms: int, end_ms: int) -> dict:
    return {"range": {field: {"gte": iso_ms(start_ms), "lte": iso_ms(end_ms),
                              "format": "strict_date_optional_time"}}}


# ---------------------------------------------------------------- Discover and visualizations

def discover_request(export: Export, search: dict, start_ms: int, end_ms: int) -> tuple[str, dict]:
    """(index pattern title, _search body) Discover sends for a saved search over a time range."""
    pattern, queries = source_of(export, search)
    time_field = pattern["attributes"]["timeFieldName"]
    body = {"size": 10000, "track_total_hits": True, "_source": False,
            "query": {"bool": {"must": [lucene_to_dsl(q) for q in queries],
                               "filter": [time_range(time_field, start_ms, end_ms)]}},
            "sort": [{field: {"order": order, "unmapped_type": "boolean"}}
                     for field, order in search["attributes"]["sort"]]}
    return pattern["attributes"]["title"], body


def bucket_aggs(vis: dict) -> list[dict]:
    """The bucket aggregations of a visualization, in nesting order."""
    aggs = [a for a in vis_state(vis)["aggs"] if a["schema"] != "metric"]
    for a in vis_state(vis)["aggs"]:
        if a["schema"] == "metric" and a["type"] != "count":
            raise ValueError(f"{vis['attributes']['title']}: only the count metric is supported here")
    return aggs


def visualization_request(export: Export, vis: dict, start_ms: int, end_ms: int,
                          interval: str = "1m") -> tuple[str, dict]:
    """(index pattern title, _search body) for a classic visualization: count per bucket path."""
    pattern, queries = source_of(export, vis)
    time_field = pattern["attributes"]["timeFieldName"]
    tree: dict = {}
    node = tree
    for agg in bucket_aggs(vis):
        p = agg["params"]
        if agg["type"] == "terms":
            assert p["orderBy"] == "1", "terms ordered by the count metric"
            dsl = {"terms": {"field": p["field"], "size": p["size"], "order": {"_count": p["order"]}}}
        elif agg["type"] == "date_histogram":
            dsl = {"date_histogram": {"field": p["field"], "fixed_interval": interval,
                                      "min_doc_count": p["min_doc_count"]}}
        else:
            raise ValueError(f"aggregation {agg['type']} not supported here")
        node[agg["id"]] = dsl
        node = dsl.setdefault("aggs", {})
    body = {"size": 0, "track_total_hits": True, "aggs": tree,
            "query": {"bool": {"must": [lucene_to_dsl(q) for q in queries],
                               "filter": [time_range(time_field, start_ms, end_ms)]}}}
    return pattern["attributes"]["title"], body


def bucket_counts(vis: dict, response: dict) -> dict[tuple, int]:
    """Leaf doc counts of a visualization's response, keyed by the bucket keys from outer to inner."""
    ids = [a["id"] for a in bucket_aggs(vis)]
    out: dict[tuple, int] = {}

    def walk(aggs: dict, depth: int, path: tuple) -> None:
        for bucket in aggs[ids[depth]]["buckets"]:
            key = path + (bucket["key"],)
            if depth + 1 == len(ids):
                out[key] = bucket["doc_count"]
            else:
                walk(bucket, depth + 1, key)

    walk(response["aggregations"], 0, ())
    return out


# ---------------------------------------------------------------- the alert examples

def load_alerting(name: str) -> dict:
    return json.loads((ALERTING / name).read_text())


def render(template, values: dict[str, str]):
    """Mustache placeholders {{name}} in every string of a JSON value."""
    if isinstance(template, dict):
        return {k: render(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [render(v, values) for v in template]
    if isinstance(template, str):
        return re.sub(r"\{\{\s*([\w.]+)\s*\}\}", lambda m: values[m[1]], template)
    return template


def with_alerting_prefix(indices: list[str], prefix: str) -> list[str]:
    """The examples name their indices as the saved objects' titles do: the same rule."""
    assert all(i.startswith(dashboards.DEFAULT_PREFIX + "-") for i in indices), indices
    return [prefix + i[len(dashboards.DEFAULT_PREFIX):] for i in indices]


def monitor_request(monitor: dict, period_end_ms: int, prefix: str) -> tuple[list[str], dict]:
    """The OpenSearch Alerting query-level monitor's search at a run whose period ends then."""
    search = monitor["inputs"][0]["search"]
    return (with_alerting_prefix(search["indices"], prefix),
            render(search["query"], {"period_end": str(period_end_ms)}))


def kibana_rule_request(rule: dict, end_ms: int, prefix: str) -> tuple[list[str], dict]:
    """The Elasticsearch-query rule's search: its esQuery filtered to [end - window, end] on timeField."""
    p = rule["params"]
    window_ms = p["timeWindowSize"] * {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}[p["timeWindowUnit"]]
    query = json.loads(p["esQuery"])["query"]
    body = {"size": p["size"], "track_total_hits": True,
            "sort": [{p["timeField"]: {"order": "desc"}}],
            "query": {"bool": {"filter": [query, time_range(p["timeField"], end_ms - window_ms, end_ms)]}}}
    return with_alerting_prefix(p["index"], prefix), body


def watch_request(watch: dict, scheduled_ms: int, prefix: str) -> tuple[list[str], dict]:
    """The Watcher watch's search input at a trigger scheduled then."""
    request = watch["input"]["search"]["request"]
    return (with_alerting_prefix(request["indices"], prefix),
            render(request["body"], {"ctx.trigger.scheduled_time": iso_ms(scheduled_ms)}))
