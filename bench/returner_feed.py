"""Feed every return of a bus stream to Salt's own elasticsearch returner, through Salt's loader.

    <salt 3006 venv>/bin/python bench/returner_feed.py [--workers N] STREAM URL [DOC_TYPE]
    <salt 3006 venv>/bin/python bench/returner_feed.py --count STREAM

Run with PYTHONPATH naming a directory that holds the `elasticsearch` client from PyPI
(bench/lib/prepare.sh: prepare_returner_client). What a master with
`master_job_cache: elasticsearch` (or a minion with `return: elasticsearch`) does per
return, in one process: `salt.loader.returners(opts, salt.loader.minion_mods(opts))`,
then `returners["elasticsearch.returner"](ret)` with each `salt/job/<jid>/ret/<minion>`
event's data, in stream order, one after the other; with --workers N, N such processes
side by side, the k-th taking every N-th return (a master runs returners in its
`worker_threads` MWorker processes, 5 by default). The returner's options are all its
defaults (no index template, no index_date, no states_count...); the only setting is
`elasticsearch: {hosts: [URL]}`, and, for an engine without mapping types (OpenSearch 2),
`doc_type: _doc` where its default `default` is refused.

--count prints what the stream holds, counted here and not by salttap, for the benchmark
to check both stores against: returns (all, and by function), returns the returner
skips by its own rule (no `return`), and the states of state runs (each map value of a
dict return of state.apply / state.sls / state.highstate: one salttap state document).

Otherwise prints one JSON line: returns fed, returner calls that raised (by message, a few samples),
wall and CPU seconds of the feeding.
"""

import collections
import copy
import subprocess
import json
import sys
import time

import msgpack
import salt.config
import salt.loader

TAGEND = b"\n\n"


def returns(path):
    """(tag, data) of every ret event of a plain-framed stream."""
    with open(path, "rb") as fh:
        unpacker = msgpack.Unpacker(fh, raw=False, strict_map_key=False, max_buffer_size=0)
        for frame in unpacker:
            tag, _, body = frame["body"].partition(TAGEND)
            parts = tag.decode().split("/")
            if len(parts) == 5 and parts[:2] == ["salt", "job"] and parts[3] == "ret":
                yield msgpack.unpackb(body, raw=False, strict_map_key=False)


STATE_FUNS = {"state.apply", "state.sls", "state.highstate"}


def count(stream):
    by_fun, states, no_return, n = collections.Counter(), 0, 0, 0
    for ret in returns(stream):
        n += 1
        by_fun[ret.get("fun")] += 1
        value = ret.get("return")
        if ret.get("data") is None and value is None:
            no_return += 1
        if ret.get("fun") in STATE_FUNS and isinstance(value, dict):
            states += sum(1 for v in value.values() if isinstance(v, dict))
    print(json.dumps({"returns": n, "by_fun": dict(by_fun), "states": states, "no_return": no_return}))


def fan_out(workers, args):
    """N feeding processes at once; their answers summed."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, "--part", f"{k}/{workers}", *args],
                              stdout=subprocess.PIPE, text=True) for k in range(workers)]
    outs = [json.loads(p.communicate()[0].splitlines()[-1]) for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit("a feeding process failed")
    kinds, samples = collections.Counter(), {}
    for o in outs:
        kinds.update(o["error_kinds"])
        samples.update(o["error_samples"])
    print(json.dumps({"fed": sum(o["fed"] for o in outs), "errors": sum(o["errors"] for o in outs),
                      "error_kinds": dict(kinds), "error_samples": samples, "workers": workers,
                      "seconds": time.perf_counter() - t0, "cpu_s": sum(o["cpu_s"] for o in outs)}))


def main():
    args = sys.argv[1:]
    if args[0] == "--count":
        count(args[1])
        return
    part, parts = 0, 1
    if args[0] == "--workers":
        fan_out(int(args[1]), args[2:])
        return
    if args[0] == "--part":
        part, parts = map(int, args[1].split("/"))
        args = args[2:]
    stream, url = args[0], args[1]
    doc_type = args[2] if len(args) > 2 else None
    opts = copy.deepcopy(salt.config.DEFAULT_MASTER_OPTS)
    opts["elasticsearch"] = {"hosts": [url]}
    if doc_type:
        opts["elasticsearch"]["doc_type"] = doc_type
    funcs = salt.loader.minion_mods(opts, whitelist=["elasticsearch", "config"])
    rets = salt.loader.returners(opts, funcs, whitelist=["elasticsearch"])
    returner = rets["elasticsearch.returner"]
    fed, errors, samples = 0, collections.Counter(), {}
    t0, c0 = time.perf_counter(), time.process_time()
    for i, ret in enumerate(returns(stream)):
        if i % parts != part:
            continue
        fed += 1
        try:
            returner(ret)
        except Exception as exc:  # pylint: disable=broad-except
            key = f"{type(exc).__name__}: {str(exc)[:600]}"
            errors[key.split(" with message")[0][:120]] += 1
            samples.setdefault(ret.get("fun"), key)
    print(json.dumps({"fed": fed, "errors": sum(errors.values()), "error_kinds": dict(errors),
                      "error_samples": samples, "seconds": time.perf_counter() - t0,
                      "cpu_s": time.process_time() - c0}))


if __name__ == "__main__":
    main()
