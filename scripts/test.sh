#!/usr/bin/env bash
# Install everything the tests need, then run every test layer. Exits non-zero on any failure.
# This is the README's test command and exactly what .ci/run runs.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# Debian's chromium drives the browser tests (never `playwright install`: its downloads fail here).
if ! command -v chromium >/dev/null 2>&1; then
  step "installing Debian's chromium"
  # another apt (unattended upgrades, provisioning) may hold the dpkg lock: wait, bounded
  as_root=()
  [ "$(id -u)" = 0 ] || as_root=(sudo)
  "${as_root[@]}" python3 scripts/wait_for_apt_lock.py --timeout 600
  apt_opts=(-qq -o DPkg::Lock::Timeout=600)
  "${as_root[@]}" apt-get "${apt_opts[@]}" update
  "${as_root[@]}" apt-get "${apt_opts[@]}" install -y chromium >/dev/null
fi

step "python environment (.venv) with the test extra"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'

if [ -f js/package.json ]; then
  step "JS unit tests (vitest + jsdom)"
  (cd js && npm ci --no-audit --no-fund --loglevel=error && npm test)
fi

step "ruff (lint and format)"
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks

step "mypy --strict over src/"
.venv/bin/mypy

step "pytest: unit, HTTP, browser and notebook tests"
nb=()
if compgen -G "notebooks/*.ipynb" >/dev/null; then nb=(--nbval-lax notebooks); fi
.venv/bin/python -m pytest tests "${nb[@]}" -p no:cacheprovider --ignore=tests/test_ray_cluster.py

# A driver that already ran a local Ray (tests/test_ray.py's ray.init/shutdown) and then joins
# the two-node cluster lost its objects' owner under CPU load (OwnerDiedError); in a process
# of its own the cluster test passed every time under `stress --cpu 2`.
step "pytest: a two-node Ray cluster on this machine, in a driver process of its own"
.venv/bin/python -m pytest tests/test_ray_cluster.py -p no:cacheprovider
