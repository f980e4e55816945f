#!/usr/bin/env python3
"""The systemd unit (deploy/systemd/salttap.service), checked by systemd itself:

  - it is Type=notify with a watchdog, reloads with SIGHUP, and runs salttap
    as its own user (the lines below, checked first: they need no systemd);
  - `systemd-analyze verify` accepts it, with ExecStart pointing at the
    salttap binary just built (verify insists that the command exists);
  - `systemd-analyze security --offline=yes` rates its exposure at most
    MAX_EXPOSURE.

Exit 1 on any problem, a missing systemd-analyze or one older than systemd
252 (no --offline) among them: scripts/install-deps installs it.
  check_systemd_unit.py UNIT SALTTAP_BINARY
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

MAX_EXPOSURE = 2.0
REQUIRED = [
    "Type=notify",
    "ExecStart=/usr/bin/salttap run --config /etc/salttap/salttap.yaml",
    "ExecReload=/bin/kill -HUP $MAINPID",
    "Restart=on-failure",
    "User=salttap",
    "SupplementaryGroups=salt",
    "StateDirectory=salttap",
    "ProtectSystem=strict",
    "NoNewPrivileges=yes",
    "CapabilityBoundingSet=",
    "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
    "SystemCallFilter=@system-service",
]


def static_problems(text):
    lines = set(text.splitlines())
    problems = [f"missing line: {line}" for line in REQUIRED if line not in lines]
    if not re.search(r"^WatchdogSec=\d+s$", text, re.M):
        problems.append("missing WatchdogSec=<N>s")
    return problems


def analyze_problems(analyze, unit, text, binary):
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / unit.name
        copy.write_text(text.replace("ExecStart=/usr/bin/salttap ", f"ExecStart={binary.resolve()} "))
        verify = subprocess.run([analyze, "verify", str(copy)], capture_output=True, text=True)
        if verify.returncode != 0 or verify.stderr.strip():
            problems.append(f"systemd-analyze verify: rc {verify.returncode}: {verify.stderr.strip()}")
        security = subprocess.run([analyze, "security", "--offline=yes", str(copy)], capture_output=True, text=True)
    if "--offline" in security.stderr and security.returncode != 0:
        return problems + [f"systemd-analyze has no --offline (systemd older than 252; scripts/install-deps):\n"
                           f"{security.stderr}"]
    score = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", security.stdout)
    if not score:
        problems.append(f"no exposure level in: {security.stdout[-500:]} {security.stderr}")
    elif float(score.group(1)) > MAX_EXPOSURE:
        problems.append(f"exposure {score.group(1)} > {MAX_EXPOSURE}:\n{security.stdout}")
    else:
        print(f"exposure {score.group(1)} (at most {MAX_EXPOSURE})")
    return problems


def main():
    unit, binary = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    text = unit.read_text()
    problems = static_problems(text)
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        problems.append("systemd-analyze is not installed (Debian's systemd package; scripts/install-deps)")
    else:
        problems += analyze_problems(analyze, unit, text, binary)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
