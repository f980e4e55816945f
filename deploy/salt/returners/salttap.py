"""
A master job cache that answers Salt's ``jobs`` runner from salttap's indices.

Configure it on the master::

    returner_dirs: [/usr/share/salttap/salt/returners]
    master_job_cache: salttap

Writes (``prep_jid``, ``returner``, ``save_load``, ``save_minions``,
``update_endtime``, ``clean_old_jobs``) go to Salt's own ``local_cache``,
through the loader, so the master behaves exactly as with the default cache.
Reads (``get_load``, ``get_jid``, ``get_jids``, ``get_jids_filter``,
``get_endtime``) answer from ``local_cache`` while it still holds the job,
and otherwise from the jobs, returns and events indices ``salttap run``
writes, shaped as ``local_cache`` shapes them. ``get_fun`` and
``get_minions``, which ``local_cache`` lacks, read the returns index.

Engine settings: ``salttap: {config: /etc/salttap/salttap.yaml}`` (its
``indexer:`` and ``elasticsearch:`` sections), else the master's own
``elasticsearch:`` block (Salt's Elasticsearch returner keys). When the engine
is unreachable or answers with an error, every read falls back to the
``local_cache`` answer, with one log line per outage.

Only the standard library and Salt itself are imported: the module runs
inside the master.
"""

import base64
import fnmatch
import json
import logging
import os
import ssl
import sys
import threading
import types
import urllib.error
import urllib.request
from datetime import datetime

import salt.loader
import salt.utils.jid

try:
    import salt.utils.yaml as _yaml
except ImportError:  # pragma: no cover - every supported Salt ships it
    _yaml = None

log = logging.getLogger(__name__)

__virtualname__ = "salttap"

# Documents per search request: a page, never the whole index at once.
PAGE_SIZE = 1000
DEFAULT_TIMEOUT = 10.0

# Salt loads this module again for every loader it makes (each MasterMinion,
# each runner call), so what must last as long as the process lives in a
# module of its own: whether the engine is down (one log line per outage, not
# one per call or per loader) and the outputters already looked up.
_STATE = sys.modules.setdefault("_salttap_returner_state", types.ModuleType("_salttap_returner_state"))
if not hasattr(_STATE, "lock"):
    _STATE.lock = threading.Lock()
    _STATE.engine_down = False
    _STATE.outputters = {}
_state_lock = _STATE.lock
_outputters = _STATE.outputters
_local_loader = {"opts_id": None, "loader": None}


class EngineError(Exception):
    """The engine could not answer (down, refused, an error status, bad JSON)."""


def __virtual__():
    return __virtualname__


# ---------------------------------------------------------------------------
# local_cache, through Salt's loader with the master's own opts
# ---------------------------------------------------------------------------


def _opts():
    opts = __opts__  # noqa: F821 - injected by the loader
    return opts.value() if hasattr(opts, "value") else opts


def _local(fun):
    opts = _opts()
    with _state_lock:
        if _local_loader["opts_id"] != id(opts) or _local_loader["loader"] is None:
            _local_loader["loader"] = salt.loader.returners(
                opts, {}, whitelist=["local_cache"]
            )
            _local_loader["opts_id"] = id(opts)
        loader = _local_loader["loader"]
    return loader[f"local_cache.{fun}"]


def _local_read(fun, empty, *args):
    """local_cache's answer; `empty` when it fails (e.g. no jobs directory yet),
    so that the indices can still answer."""
    try:
        return _local(fun)(*args)
    except Exception as exc:  # pylint: disable=broad-except
        log.debug("salttap returner: local_cache.%s failed: %s", fun, exc)
        return empty


def prep_jid(nocache=False, passed_jid=None, recurse_count=0):
    return _local("prep_jid")(nocache=nocache, passed_jid=passed_jid)


def returner(load):
    return _local("returner")(load)


def save_load(jid, clear_load, minions=None, recurse_count=0):
    # For any job cache but local_cache, the master (salt.utils.job.store_job)
    # calls save_load again with every minion's return load, which would
    # replace the published load; for local_cache it skips that call when the
    # job's load is already there. The same rule here keeps the cache as the
    # default one would be.
    if isinstance(clear_load, dict) and "return" in clear_load and _local_read("get_load", {}, jid):
        return None
    return _local("save_load")(jid, clear_load, minions=minions)


def save_minions(jid, minions, syndic_id=None):
    return _local("save_minions")(jid, minions, syndic_id=syndic_id)


def update_endtime(jid, time):
    return _local("update_endtime")(jid, time)


def clean_old_jobs():
    # keep_jobs applies to the master's own cache; the indices have their
    # own retention (indexer.retention_days).
    return _local("clean_old_jobs")()


# ---------------------------------------------------------------------------
# engine settings
# ---------------------------------------------------------------------------


def _as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _secret(block, name):
    """block[name], or the value of block[name_env], or the file block[name_file]."""
    if block.get(name):
        return str(block[name])
    if block.get(f"{name}_env"):
        return os.environ.get(str(block[f"{name}_env"]))
    if block.get(f"{name}_file"):
        with open(block[f"{name}_file"], encoding="utf-8") as fh:
            return fh.read().rstrip("\n")
    return None


def _settings():
    """The engine settings, as salttap reads them (see docs/returner.md)."""
    opts = _opts()
    own = opts.get("salttap") or {}
    conf = {}
    if own.get("config"):
        if _yaml is None:
            raise EngineError("salt.utils.yaml is not available")
        with open(own["config"], encoding="utf-8") as fh:
            conf = _yaml.safe_load(fh) or {}
    returner_block = conf.get("elasticsearch") if own.get("config") else opts.get("elasticsearch")
    indexer = conf.get("indexer") or {}
    if own.get("config") and not returner_block and not indexer:
        returner_block = opts.get("elasticsearch")
    returner_block = returner_block or {}

    s = {
        "hosts": [],
        "prefix": "salt",
        "verify": True,
        "ca_file": None,
        "client_cert": None,
        "client_key": None,
        "username": None,
        "password": None,
        "api_key": None,
        "timeout": DEFAULT_TIMEOUT,
        "master": own.get("master_id") or conf.get("master_id") or opts.get("id"),
        "fleet": own.get("fleet_id") or conf.get("fleet_id"),
        "page_size": int(own.get("page_size", PAGE_SIZE)),
    }
    # Salt's returner block first, salttap's indexer section refines it.
    scheme = "https://" if returner_block.get("use_ssl") else "http://"
    for host in _as_list(returner_block.get("hosts")):
        s["hosts"].append(host if "://" in host else scheme + host)
    if "verify_certs" in returner_block:
        s["verify"] = bool(returner_block["verify_certs"])
    s["ca_file"] = returner_block.get("ca_certs") or None
    s["username"] = returner_block.get("username")
    s["password"] = returner_block.get("password")
    s["api_key"] = returner_block.get("api_key")
    if returner_block.get("timeout"):
        s["timeout"] = float(returner_block["timeout"])

    if indexer.get("hosts"):
        s["hosts"] = [h if "://" in h else "http://" + h for h in _as_list(indexer["hosts"])]
    if indexer.get("index_prefix"):
        s["prefix"] = indexer["index_prefix"]
    tls = indexer.get("tls") or {}
    if "verify" in tls:
        s["verify"] = bool(tls["verify"])
    for key in ("ca_file", "client_cert", "client_key"):
        if tls.get(key):
            s[key] = tls[key]
    auth = indexer.get("auth") or {}
    if auth.get("username"):
        s["username"] = auth["username"]
        s["password"] = _secret(auth, "password")
    api_key = _secret(auth, "api_key")
    if api_key:
        s["api_key"] = api_key
    bulk = indexer.get("bulk") or {}
    if bulk.get("request_timeout_ms"):
        s["timeout"] = min(s["timeout"], bulk["request_timeout_ms"] / 1000.0)
    if own.get("timeout"):
        s["timeout"] = float(own["timeout"])
    if not s["hosts"]:
        s["hosts"] = ["http://127.0.0.1:9200"]
    s["hosts"] = [h.rstrip("/") for h in s["hosts"]]
    s["fleet"] = s["fleet"] or s["master"]
    return s


# ---------------------------------------------------------------------------
# the engine
# ---------------------------------------------------------------------------


def _ssl_context(s):
    ctx = ssl.create_default_context(cafile=s["ca_file"]) if s["ca_file"] else ssl.create_default_context()
    if not s["verify"]:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if s["client_cert"]:
        ctx.load_cert_chain(s["client_cert"], s["client_key"])
    return ctx


def _headers(s):
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if s["api_key"]:
        headers["Authorization"] = f"ApiKey {s['api_key']}"
    elif s["username"]:
        pair = f"{s['username']}:{s['password'] or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    return headers


def _post(s, path, body):
    """POST JSON to the first host that answers; EngineError when none does."""
    data = json.dumps(body).encode()
    errors = []
    for host in s["hosts"]:
        url = host + path
        req = urllib.request.Request(url, data=data, headers=_headers(s), method="POST")
        ctx = _ssl_context(s) if url.startswith("https://") else None
        try:
            with urllib.request.urlopen(req, timeout=s["timeout"], context=ctx) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            # The engine answered: another host would answer the same.
            detail = exc.read()[:300].decode("utf-8", "replace")
            raise EngineError(f"{host}: HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            errors.append(f"{host}: {getattr(exc, 'reason', exc)}")
            continue
        try:
            return json.loads(raw)
        except ValueError:
            raise EngineError(f"{host}: the answer is not JSON") from None
    raise EngineError("; ".join(errors) or "no hosts")


def _search_pages(s, kind, filters, sort, source, must_not=None):
    """Every hit of <prefix>-<kind>-* matching filters, a page at a time."""
    path = f"/{s['prefix']}-{kind}-*/_search?ignore_unavailable=true&allow_no_indices=true"
    after = None
    while True:
        body = {
            "size": s["page_size"],
            "query": {"bool": {"filter": filters, "must_not": must_not or []}},
            "sort": [{field: order} for field, order in sort],
            "_source": source,
            "track_total_hits": False,
        }
        if after is not None:
            body["search_after"] = after
        answer = _post(s, path, body)
        if not isinstance(answer, dict) or "hits" not in answer:
            raise EngineError(f"unexpected search answer: {str(answer)[:200]}")
        hits = answer["hits"].get("hits") or []
        for hit in hits:
            yield hit.get("_source") or {}
        if len(hits) < s["page_size"]:
            return
        after = hits[-1].get("sort")
        if after is None:
            return


def _master_filter(s):
    return [{"term": {"master": s["master"]}}] if s["master"] else []


def _fleet_filter(s):
    """The documents of this master's fleet: those with its `fleet`, and this
    master's own from before documents carried one."""
    if not s["master"]:
        return []
    return [{"bool": {"should": [
        {"term": {"fleet": s["fleet"]}},
        {"bool": {"filter": [{"term": {"master": s["master"]}}],
                  "must_not": [{"exists": {"field": "fleet"}}]}},
    ], "minimum_should_match": 1}}]


def _engine(what, fallback, read):
    """read(settings), or fallback when the engine cannot answer (logged once)."""
    try:
        s = _settings()
        got = read(s)
    except Exception as exc:  # pylint: disable=broad-except
        with _state_lock:
            first = not _STATE.engine_down
            _STATE.engine_down = True
        if first:
            log.warning(
                "salttap returner: the engine cannot answer (%s: %s); answering "
                "from local_cache until it can",
                what,
                exc,
            )
        return fallback
    with _state_lock:
        if _STATE.engine_down:
            log.warning("salttap returner: the engine answers again")
        _STATE.engine_down = False
    return got


# ---------------------------------------------------------------------------
# documents -> local_cache shapes
# ---------------------------------------------------------------------------

JOB_SOURCE = ["jid", "kind", "fun", "args", "args_text", "tgt", "tgt_type", "user", "master", "fleet",
              "started_at", "settled_at", "syndics", "minions.expected", "counts.expected"]


def _load_from_job(s, doc, with_minions=True):
    """The load local_cache keeps for this job (the keys Salt's tools read)."""
    if doc.get("kind") in ("runner", "wheel"):
        # A runner's load is stored by the master as {id, tgt: the master's id,
        # jid, return, fun, user}: no arg and no tgt_type.
        load = {"jid": doc.get("jid"), "id": doc.get("master"), "tgt": doc.get("master"),
                "fun": doc.get("fun"), "user": doc.get("user")}
        return {k: v for k, v in load.items() if v is not None}
    load = {"jid": doc.get("jid"), "fun": doc.get("fun"), "arg": doc.get("args") or [],
            "tgt": doc.get("tgt"), "tgt_type": doc.get("tgt_type"), "user": doc.get("user")}
    load = {k: v for k, v in load.items() if v is not None}
    if load.get("tgt_type") == "list" and isinstance(load.get("tgt"), str):
        # salttap joins a list target with commas; the master kept the list
        load["tgt"] = load["tgt"].split(",") if load["tgt"] else []
    if with_minions:
        minions = (doc.get("minions") or {}).get("expected") or []
        expected = (doc.get("counts") or {}).get("expected")
        if isinstance(expected, int) and expected > len(minions):
            # The job document caps its lists; every expected minion has a
            # returns document (a missing one too).
            minions = [r.get("minion") for r in _search_pages(
                s, "returns", [{"term": {"jid": doc["jid"]}}] + _masters_filter(s, doc),
                [("minion", "asc")], ["minion"])]
        if minions:
            load["Minions"] = sorted(set(minions))
    return load


def _masters_filter(s, doc):
    """The masters whose documents make up this (merged) job."""
    masters = doc.get("_seen_by") if doc else None
    return [{"terms": {"master": masters}}] if masters else _master_filter(s)


def _without_new(doc):
    return doc.get("kind") in ("orphan", "scheduled")


def _merge_jobs(s, docs):
    """The job documents of one jid in this master's fleet, merged as salttap
    merges them (history/job_merge.h, docs/masters.md): the documents that
    agree with this master's own on the function and arguments (the
    collision guard; a document without arguments agrees with any), the
    publisher's document (the earliest with the `new` event's user) with the
    union of the expected minions, less the syndics that only stood in."""
    if not docs:
        return None
    own = next((d for d in docs if d.get("master") == s["master"] and not _without_new(d)), None)
    own = own or next((d for d in docs if d.get("master") == s["master"]), None)
    with_new = sorted((d for d in docs if not _without_new(d) and d.get("user")),
                      key=lambda d: (d.get("started_at") or "", d.get("master") or ""))
    anchor = own or (with_new[0] if with_new else docs[0])

    def agrees(d):
        a, b = anchor.get("args_text"), d.get("args_text")
        return d.get("fun") == anchor.get("fun") and (not a or not b or a == b)

    group = [d for d in docs if agrees(d)]
    publishers = [d for d in with_new if d in group]
    merged = dict(publishers[0] if publishers else anchor)
    syndics = {n for d in group for n in (d.get("syndics") or [])}
    expected, counted = set(), 0
    for d in group:
        expected.update((d.get("minions") or {}).get("expected") or [])
        count = (d.get("counts") or {}).get("expected")
        counted = max(counted, count if isinstance(count, int) else 0)
    expected -= syndics
    merged["minions"] = {"expected": sorted(expected)}
    # A list cut at list_cap (the count is larger): _load_from_job reads every returns document instead.
    merged["counts"] = {"expected": max(len(expected), counted)}
    merged["_seen_by"] = sorted({d.get("master") for d in group if d.get("master")})
    settled = [d.get("settled_at") for d in group if d.get("settled_at")]
    merged["settled_at"] = max(settled) if settled else None
    return merged


def _job_doc(s, jid):
    docs = list(_search_pages(s, "jobs", [{"term": {"jid": str(jid)}}] + _fleet_filter(s),
                              [("master", "asc")], JOB_SOURCE))
    return _merge_jobs(s, docs)


def _outputter(fun):
    """The outputter a minion names for fun (a module's __outputter__), or None."""
    if not isinstance(fun, str) or "." not in fun:
        return None
    if fun in _outputters:
        return _outputters[fun]
    mod_name, func = fun.rsplit(".", 1)
    out = None
    try:
        import importlib

        mod = importlib.import_module(f"salt.modules.{mod_name}")
        aliases = {v: k for k, v in (getattr(mod, "__func_alias__", {}) or {}).items()}
        table = getattr(mod, "__outputter__", {}) or {}
        out = table.get(aliases.get(func, func))
        if not isinstance(out, str):
            out = None
    except Exception:  # pylint: disable=broad-except
        out = None
    _outputters[fun] = out
    return out


def _returns_from_engine(s, jid, doc):
    if doc and doc.get("kind") in ("runner", "wheel"):
        # A runner's return is its salt/run/<jid>/ret event, kept whole by the
        # master under its own id.
        tag = f"salt/{'run' if doc['kind'] == 'runner' else 'wheel'}/{jid}/ret"
        for ev in _search_pages(s, "events", [{"term": {"tag": tag}}] + _master_filter(s),
                                [("@timestamp", "asc")], ["data"]):
            data = ev.get("data")
            if isinstance(data, dict):
                return {doc.get("master"): {"return": data}}
        return {}
    ret, rank = {}, {}
    for r in _search_pages(s, "returns", [{"term": {"jid": str(jid)}}] + _masters_filter(s, doc),
                           [("minion", "asc")],
                           ["minion", "status", "return", "retcode", "success", "fun", "late"],
                           must_not=[{"term": {"status": "missing"}}]):
        # One return per minion: the best any master of the job indexed
        # (on time before late, succeeded before failed).
        better = (not r.get("late"), r.get("status") == "succeeded")
        if r.get("minion") in rank and rank[r.get("minion")] >= better:
            continue
        rank[r.get("minion")] = better
        entry = {"return": r.get("return")}
        for key in ("retcode", "success"):
            if key in r and r[key] is not None:
                entry[key] = r[key]
        out = _outputter(r.get("fun"))
        if out:
            entry["out"] = out
        ret[r.get("minion")] = entry
    return ret


def _all_jobs(s, newest_first=False, limit=None, skip_funs=(), before=None):
    """(jid, load) of every job document of this master, paged; with `before`,
    only the jobs whose jid sorts before it."""
    order = "desc" if newest_first else "asc"
    must_not = [{"terms": {"fun": list(skip_funs)}}] if skip_funs else []
    filters = _master_filter(s)
    if before is not None:
        filters = filters + [{"range": {"jid": {"lt": before}}}]
    n = 0
    for doc in _search_pages(s, "jobs", filters, [("jid", order)],
                             ["jid", "kind", "fun", "args", "tgt", "tgt_type", "user", "master"],
                             must_not=must_not):
        if not doc.get("jid"):
            continue
        yield doc["jid"], _load_from_job(s, doc, with_minions=False)
        n += 1
        if limit is not None and n >= limit:
            return


def _jid_time_text(iso):
    """An ISO time of the engine as Salt writes job times ('2026, Dec 01 ...')."""
    t = datetime.strptime(iso.rstrip("Z")[:26], "%Y-%m-%dT%H:%M:%S.%f")
    return salt.utils.jid.jid_to_time(t.strftime("%Y%m%d%H%M%S%f"))


# ---------------------------------------------------------------------------
# reads
# ---------------------------------------------------------------------------


def get_load(jid):
    local = _local_read("get_load", {}, jid)
    if local:
        return local

    def read(s):
        doc = _job_doc(s, jid)
        return _load_from_job(s, doc) if doc else {}

    return _engine("get_load", local, read)


def get_jid(jid):
    local = _local_read("get_jid", {}, jid)
    if local:
        return local
    return _engine("get_jid", local, lambda s: _returns_from_engine(s, jid, _job_doc(s, jid)))


def get_jids():
    local = _local_read("get_jids", {})

    def read(s):
        # The cache holds every job since its oldest one (local_cache purges
        # by age, oldest first), so only older jobs are read from the engine:
        # with the cache full, list_jobs costs what it costs without salttap.
        oldest = min(local) if local else None
        merged = {}
        for jid, load in _all_jobs(s, before=oldest):
            if jid not in local:
                merged[jid] = salt.utils.jid.format_jid_instance(jid, load)
        merged.update(local)
        return merged

    return _engine("get_jids", local, read)


def get_jids_filter(count, filter_find_job=True):
    local = _local_read("get_jids_filter", [], count, filter_find_job)

    def read(s):
        have = {job["JID"] for job in local}
        skip = ("saltutil.find_job",) if filter_find_job else ()
        rows = list(local)
        for jid, load in _all_jobs(s, newest_first=True, limit=count, skip_funs=skip):
            if jid not in have:
                rows.append(salt.utils.jid.format_jid_instance_ext(jid, load))
        rows.sort(key=lambda job: job["JID"])
        return rows[-count:] if count else []

    return _engine("get_jids_filter", local, read)


def get_endtime(jid):
    local = _local_read("get_endtime", False, jid)
    if local:
        return local

    def read(s):
        doc = _job_doc(s, jid)
        if doc and doc.get("settled_at"):
            return _jid_time_text(doc["settled_at"])
        return False

    return _engine("get_endtime", local, read)


def get_fun(fun):
    """{minion: the newest jid in which it returned fun} (glob patterns allowed)."""

    def read(s):
        query = {"wildcard": {"fun": fun}} if any(c in fun for c in "*?[") else {"term": {"fun": fun}}
        ret = {}
        for r in _search_pages(s, "returns", [query] + _master_filter(s),
                               [("jid", "asc"), ("minion", "asc")], ["jid", "minion", "fun"],
                               must_not=[{"term": {"status": "missing"}}]):
            if fnmatch.fnmatch(r.get("fun", ""), fun):
                ret[r["minion"]] = r["jid"]
        return ret

    return _engine("get_fun", {}, read)


def get_minions():
    """Every minion with a return in the indices, sorted."""

    def read(s):
        path = f"/{s['prefix']}-returns-*/_search?ignore_unavailable=true&allow_no_indices=true"
        minions, after = [], None
        while True:
            composite = {"size": s["page_size"], "sources": [{"minion": {"terms": {"field": "minion"}}}]}
            if after:
                composite["after"] = after
            answer = _post(s, path, {
                "size": 0,
                "query": {"bool": {"filter": _master_filter(s),
                                   "must_not": [{"term": {"status": "missing"}}]}},
                "aggs": {"m": {"composite": composite}},
            })
            agg = (answer.get("aggregations") or {}).get("m") or {}
            buckets = agg.get("buckets") or []
            minions.extend(b["key"]["minion"] for b in buckets)
            after = agg.get("after_key")
            if not buckets or not after:
                return sorted(minions)

    return _engine("get_minions", [], read)
