#!/usr/bin/env python3
"""Wait (bounded) until no other process holds apt's and dpkg's locks, so an install can start.

`scripts/test.sh` runs this before `apt-get`: on a fresh machine another apt (unattended
upgrades, a provisioning step) often holds the dpkg lock, and apt-get would fail at once.
dpkg and apt take fcntl locks, so this tries the same lock (non-blocking) and lets go at once.
Exit 0 when free, 1 when still held after --timeout seconds. Stdlib only.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys
import time

LOCKS = (
    "/var/lib/dpkg/lock-frontend",
    "/var/lib/dpkg/lock",
    "/var/lib/apt/lists/lock",
    "/var/cache/apt/archives/lock",
)


def held(path: str) -> bool:
    """Whether another process holds an fcntl lock on ``path`` (missing or unreadable: no)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("locks", nargs="*", default=list(LOCKS), help="lock files to watch")
    parser.add_argument("--timeout", type=float, default=600, help="seconds (default 600)")
    parser.add_argument("--poll", type=float, default=2, help="seconds between checks")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.timeout
    told = False
    while True:
        busy = [path for path in args.locks if held(path)]
        if not busy:
            if told:
                print("apt/dpkg lock released: going on", file=sys.stderr, flush=True)
            return 0
        if time.monotonic() >= deadline:
            print(
                f"another apt/dpkg process still holds {', '.join(busy)} after "
                f"{args.timeout:g}s: wait for it to finish (ps aux | grep -E 'apt|dpkg') and retry",
                file=sys.stderr,
            )
            return 1
        if not told:
            print(
                f"waiting for another apt/dpkg process to release {', '.join(busy)} "
                f"(up to {args.timeout:g}s) ...",
                file=sys.stderr,
                flush=True,
            )
            told = True
        time.sleep(min(args.poll, max(0.0, deadline - time.monotonic())))


if __name__ == "__main__":
    sys.exit(main())
