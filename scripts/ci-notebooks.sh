#!/usr/bin/env bash
# Executes every notebook headless through real Jupyter with the tslab (TypeScript) kernel, fails
# on any cell error, and fails when an executed output holds a secret of the notebook's session.
#
#   bash scripts/ci-notebooks.sh [NODE_BIN_DIR]
#
# NODE_BIN_DIR (optional) is put first in PATH so the kernel runs on that Node (e.g. Node 24).
# Installs what it needs when missing: Jupyter from Debian packages (apt-get, as root), tslab from
# npm into a scratch prefix (not a project dependency). tslab needs zeromq 6, whose npm package
# ships prebuilt addons for linux-x64 that load on Node 20 and 24 (no build, no download).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

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
if [ "$(id -u)" = "0" ]; then
  tslab install --python="$PY" >/dev/null
else
  tslab install --python="$PY" --user >/dev/null
fi
# Debian's python warns about frozen modules under a debugger; it is noise here.
export PYDEVD_DISABLE_FILE_VALIDATION=1

WORK="$(mktemp -d)"
chmod 700 "$WORK"
# The executed copy sits beside the originals: Jupyter starts the kernel in the notebook's folder,
# and the notebooks load the library relative to it.
COPY_PREFIX="notebooks/.ci-$$-"
trap 'rm -rf "$WORK" "$COPY_PREFIX"*' EXIT

status=0
for nb in notebooks/*.ipynb; do
  name="$(basename "$nb")"
  # A copy with one extra last cell that hands the session's secret values to the scan below
  # (through a private file in $WORK), so it can look for the real password in the outputs.
  copy="$COPY_PREFIX$name"
  "$PY" - "$nb" "$copy" "$WORK/$name.secrets" <<'PY'
import json, sys
src, dst, secrets = sys.argv[1:4]
nb = json.load(open(src))
code = ("require('node:fs').writeFileSync(%s, JSON.stringify(session.knownSecrets()), { mode: 0o600 });" % json.dumps(secrets))
nb["cells"].append({"cell_type": "code", "id": "ci-secrets", "metadata": {}, "execution_count": None, "outputs": [], "source": [code]})
json.dump(nb, open(dst, "w"))
PY
  mkdir -p "$WORK/out"
  if ! "$PY" -m jupyter nbconvert --to notebook --execute \
      --ExecutePreprocessor.kernel_name=tslab --ExecutePreprocessor.timeout=180 \
      --output-dir "$WORK/out" --output "$name" "$copy" >"$WORK/$name.log" 2>&1; then
    echo "FAIL $name: a cell failed under Jupyter/tslab" >&2
    grep -v 'Debugger\|frozen\|PYDEVD\|^0.00s' "$WORK/$name.log" | tail -40 >&2 || true
    status=1
    continue
  fi
  if ! "$PY" - "$WORK/out/$name" "$WORK/$name.secrets" <<'PY'
import json, re, sys
executed, secrets_file = sys.argv[1:3]
nb = json.load(open(executed))
secrets = [s for s in json.load(open(secrets_file)) if len(s) >= 6]
jwt = re.compile(r"eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}")
errors, leaks = [], []
for i, cell in enumerate(nb["cells"]):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            errors.append(i)
        text = json.dumps(out)
        if any(s in text for s in secrets) or jwt.search(text):
            leaks.append(i)
if errors:
    print("cells with errors: %s" % errors, file=sys.stderr); sys.exit(1)
if leaks:
    print("cells whose output holds a secret: %s" % leaks, file=sys.stderr); sys.exit(1)
if not secrets:
    print("no session secrets were collected", file=sys.stderr); sys.exit(1)
PY
  then
    echo "FAIL $name: executed outputs" >&2
    status=1
    continue
  fi
  rm -f "$copy"
  echo "ok   $name"
done
exit "$status"
