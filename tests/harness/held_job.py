"""A real Salt job that stays open on its minions until the test lets it end.

A test that needs a job still running at a later step (salttap restarted, its config reloaded,
a deadline passed) holds one instead of guessing how long a `test.sleep` outlasts that step on
a busy machine: each minion runs `cmd.run` of a shell loop that waits for a gate file, and
returns (retcode 0, empty output) once release() has created it. Release it in a `finally`
too, so no minion keeps a job waiting after a failure.
"""
from __future__ import annotations

import uuid
from pathlib import Path


class HeldJob:
    def __init__(self, directory: Path):
        # The minions run on this machine, as the test's user: they see the test's files.
        self.gate = directory / f"release-{uuid.uuid4().hex[:12]}"

    @property
    def command(self) -> str:
        """The shell command each minion runs: it ends once the gate file exists."""
        return f"until test -e {self.gate}; do sleep 0.2; done"

    def args(self, tgt: str = "*") -> list[str]:
        """The `salt` arguments of the job on `tgt`."""
        return [tgt, "cmd.run", self.command]

    def release(self) -> None:
        self.gate.touch()
