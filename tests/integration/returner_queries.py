"""Ask Salt's `jobs` runner questions in-process, inside a Salt virtualenv.

    <salt venv>/bin/python returner_queries.py MASTER_CONFIG OVERRIDES_JSON QUERIES_JSON

Loads the master's opts from MASTER_CONFIG (master.d included), lays
OVERRIDES_JSON over them (e.g. {"master_job_cache": "local_cache"} to ask the
stock cache), and calls each query, [runner function, args, kwargs], through
Salt's runner loader: the same code `salt-run` runs, without storing a job of
its own. Prints {"results": [...], "log": [the returners' WARNING+ lines]}.
"""

import json
import logging
import sys

import salt.config
import salt.loader


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        if "returners" in record.name or record.name.endswith("salttap"):
            self.lines.append(record.getMessage())


def main():
    opts = salt.config.master_config(sys.argv[1])
    opts.update(json.loads(sys.argv[2]))
    queries = json.loads(sys.argv[3])
    handler = _Collect()
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.WARNING)
    runners = salt.loader.runner(opts, utils=salt.loader.utils(opts))
    results = []
    for fun, args, kwargs in queries:
        try:
            results.append({"ok": runners[fun](*args, **kwargs)})
        except Exception as exc:  # pylint: disable=broad-except
            results.append({"error": f"{type(exc).__name__}: {exc}"})
    # sort_keys: dict order is not part of an answer
    print(json.dumps({"results": results, "log": handler.lines}, default=repr, sort_keys=True))


if __name__ == "__main__":
    main()
