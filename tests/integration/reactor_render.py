"""Renders a reactor SLS the way a master's reactor does, for a list of events.

Run by a Salt virtualenv's python (not the test tools'):
  python reactor_render.py ROOT SLS EVENTS_JSON MASTER_OPTS_JSON
EVENTS_JSON: [[tag, data], ...]. Prints one JSON line per event: the reactions
Salt's own Reactor.render_reaction made of it (what the master would run).
State the SLS keeps (the `data` store) lives under ROOT and carries over
between events and runs.
"""
import json
import os
import sys

import salt.config
import salt.utils.reactor


def main() -> int:
    root, sls, events, extra = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
    opts = salt.config.master_config(None)
    opts.update({"root_dir": root, "cachedir": os.path.join(root, "c"), "sock_dir": os.path.join(root, "s"),
                 "pki_dir": os.path.join(root, "pki"), "log_file": os.path.join(root, "master.log"),
                 "file_roots": {"base": [root]}, "pillar_roots": {"base": [root]}})
    opts.update(extra)
    os.makedirs(opts["cachedir"], exist_ok=True)
    reactor = salt.utils.reactor.Reactor(opts)
    for tag, data in events:
        print(json.dumps(reactor.render_reaction(sls, tag, data), default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
