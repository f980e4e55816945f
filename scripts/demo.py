#!/usr/bin/env python3
"""The main job, locally: a real salt-master with two minions on loopback,
salttap watching its event bus (one line per job: who ran what, who failed,
who never returned, how risky; alerts in the log), and a few real jobs so
there is something to see. Point salttap at your own master instead with:

    build/dev/salttap watch --jobs                # reads /etc/salt/master
    build/dev/salttap watch --fun 'state.*' --format json

Run through scripts/demo (which installs and builds first). Stops everything it
started (by PID) on exit; Ctrl-C ends it.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "integration"))
import saltlab  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--salt-version", default=os.environ.get("SALTTAP_DEMO_SALT", "3008.5"))
    ap.add_argument("--format", default="pretty", choices=["pretty", "json"])
    ap.add_argument("--events", action="store_true",
                    help="show every event (salttap watch) instead of one line per job (salttap watch --jobs)")
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop after this long (default: run until Ctrl-C)")
    args = ap.parse_args()

    salttap = REPO / "build" / "dev" / "salttap"
    saltlab.ensure_salt(args.salt_version)
    print(f"== starting a real salt-master {args.salt_version} with minion-a and minion-b on 127.0.0.1",
          flush=True)
    with saltlab.SaltLab(args.salt_version) as lab:
        master_config = lab.master_conf_dir / "master"
        argv = [str(salttap), "watch", "--master-config", str(master_config), "--format", args.format]
        if not args.events:
            argv += ["--jobs", "--missing-after", "15"]  # short deadlines so the demo shows a missing minion soon
        print("== " + " ".join(argv[1:]), flush=True)
        watch = subprocess.Popen(argv, start_new_session=True)
        try:
            time.sleep(1.0)
            jobs = [
                ["*", "test.ping"],
                ["*", "cmd.run", "echo hello from $(hostname)"],
                ["*", "cmd.run", "exit 3"],                         # fails on every minion
                ["minion-a", "state.apply", "fail"],               # failing states, named
                ["*", "cmd.run", "rm -rf /tmp/salttap-demo-nothing"],  # a risky command (audited)
            ]
            for job in jobs:
                print(f"\n== salt {' '.join(job)}", file=sys.stderr, flush=True)
                lab.salt(job, check=False)
            print("\n== stopping minion-b, then salt '*' test.ping: minion-b will be missing", file=sys.stderr,
                  flush=True)
            lab.stop_minion("minion-b")
            lab.salt(["--async", "*", "test.ping"], check=False)
            subprocess.run([str(salttap), "fire", "--master-config", str(master_config),
                            "--tag", "salttap/demo/hello", "--data", '{"from": "scripts/demo"}'],
                           check=False)
            print("\n== jobs done; salttap keeps watching (Ctrl-C to stop)", file=sys.stderr, flush=True)
            deadline = None if args.seconds is None else time.monotonic() + args.seconds
            while deadline is None or time.monotonic() < deadline:
                time.sleep(0.5)
                if watch.poll() is not None:
                    return watch.returncode
        except KeyboardInterrupt:
            pass
        finally:
            saltlab.stop_process_group(watch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
