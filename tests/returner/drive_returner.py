"""Run returner calls inside a Salt virtualenv, through Salt's own loader.

    <salt venv>/bin/python drive_returner.py OPTS_JSON CALLS_JSON

OPTS_JSON: master opts laid over Salt's defaults (cachedir, returner_dirs,
elasticsearch, salttap, ...). CALLS_JSON: [[returner, function, args], ...],
e.g. [["salttap", "get_load", ["2026..."]], ["local_cache", "get_load", [...]]];
["new-loader", "", []] makes a new loader, as every MasterMinion does.
Prints one JSON document: {"results": [...], "log": [the returners' WARNING+ lines]}.
Tuples and bytes come out as JSON would print them (lists, text).
"""

import copy
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
        if record.name.endswith(("salttap", "local_cache")):
            self.lines.append(record.getMessage())


def main():
    overrides = json.loads(sys.argv[1])
    calls = json.loads(sys.argv[2])
    opts = copy.deepcopy(salt.config.DEFAULT_MASTER_OPTS)
    opts.update(overrides)
    handler = _Collect()
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.WARNING)
    returners = salt.loader.returners(opts, {})
    results = []
    for name, fun, args in calls:
        if name == "new-loader":  # what each MasterMinion does: the module loaded again
            returners = salt.loader.returners(opts, {})
            results.append({"ok": None})
            continue
        try:
            results.append({"ok": returners[f"{name}.{fun}"](*args)})
        except Exception as exc:  # pylint: disable=broad-except
            results.append({"error": f"{type(exc).__name__}: {exc}"})
    print(json.dumps({"results": results, "log": handler.lines}, default=repr))


if __name__ == "__main__":
    main()
