#!/usr/bin/env bash
# What the test suite drives for real beyond npm's packages, installed when missing (Debian's
# packages, as root; otherwise it names what to install and exits 1):
#   - util-linux `script`, through which the REPL test drives a real pseudo-terminal;
#   - PostgreSQL's server binaries, from which the tests start throwaway clusters (the package's own
#     cluster is not wanted, and not created);
#   - Jupyter and the tslab kernel, through which the notebook tests execute the notebooks.
# `npm test` runs it before the whole suite, on the Node first in PATH (the notebook kernel's).
#
#   bash scripts/test-setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

need_root() {
  if [ "$(id -u)" != "0" ]; then
    echo "test-setup: $1 is missing and this is not root; install it with: apt-get install -y $2" >&2
    exit 1
  fi
}

if ! command -v script >/dev/null; then
  need_root "util-linux's script" bsdutils
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bsdutils
fi

if [ -z "${LENDER_PG_BINDIR:-}" ] && ! command -v initdb >/dev/null && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  need_root "PostgreSQL's server (initdb, pg_ctl, postgres)" postgresql
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    mkdir -p /etc/postgresql-common
    echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf
  fi
  # UCF_FORCE_CONFFOLD keeps that setting when the package's scripts install their own version of it.
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 apt-get install -y -qq postgresql
fi

bash scripts/ci-notebooks.sh --setup
