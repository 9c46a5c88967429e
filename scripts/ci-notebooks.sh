#!/usr/bin/env bash
# Executes every notebook headless through real Jupyter with the tslab (TypeScript) kernel and
# checks it (scripts/notebooks.ts --check: no cell error, no secret in an output, outputs of the
# kinds stored), after installing what that needs.
#
#   bash scripts/ci-notebooks.sh [--setup] [NODE_BIN_DIR]
#
# --setup only installs. NODE_BIN_DIR (optional) is put first in PATH so the kernel runs on that
# Node (e.g. Node 24). Installs what it needs when missing: Jupyter from Debian packages
# (apt-get, as root), tslab from npm into a scratch prefix (not a project dependency). tslab needs
# zeromq 6, whose npm package ships prebuilt addons for linux-x64 that load on Node 20 and 24 (no
# build, no download). test/notebooks runs the same check, so `npm test` needs the setup first.
set -euo pipefail
cd "$(dirname "$0")/.."

SETUP_ONLY=0
if [ "${1:-}" = "--setup" ]; then
  SETUP_ONLY=1
  shift
fi
if [ "${1:-}" != "" ]; then
  export PATH="$1:$PATH"
fi
PY=/usr/bin/python3

echo "== notebooks: Jupyter + tslab on node $(node --version)"

if ! "$PY" -c 'import nbconvert, nbclient, jupyter_client, ipykernel' 2>/dev/null; then
  if [ "$(id -u)" != "0" ]; then
    echo "ci-notebooks: Jupyter is missing and this is not root; install jupyter-nbconvert python3-nbclient jupyter-client python3-ipykernel" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends \
    jupyter-nbconvert python3-nbclient jupyter-client python3-ipykernel >/dev/null
fi

TSLAB_PREFIX="${TSLAB_PREFIX:-${TMPDIR:-/tmp}/lender-streams-tslab}"
if [ ! -x "$TSLAB_PREFIX/node_modules/.bin/tslab" ]; then
  npm install --prefix "$TSLAB_PREFIX" --no-save --no-audit --no-fund --loglevel=error tslab@1 >/dev/null
fi
export PATH="$TSLAB_PREFIX/node_modules/.bin:$PATH"
# zeromq must load on this Node, or the kernel dies silently at start.
node -e "require('$TSLAB_PREFIX/node_modules/zeromq')" || {
  echo "ci-notebooks: zeromq (tslab's transport) does not load on node $(node --version)" >&2
  exit 1
}
# The kernel spec goes beside tslab, not into the machine's or the user's Jupyter: there it would
# name a tslab only this prefix has, and break the kernel of anyone who opens a notebook later.
# scripts/notebooks.ts points Jupyter at it (JUPYTER_PATH).
tslab install --python="$PY" --prefix="$TSLAB_PREFIX/jupyter" >/dev/null
if [ "$SETUP_ONLY" = "1" ]; then
  exit 0
fi
TSLAB_PREFIX="$TSLAB_PREFIX" node --import tsx scripts/notebooks.ts --check
