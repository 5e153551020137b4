#!/bin/sh
# Prepares .device-webgpu/ (ignored by git through .git/info/exclude) for scripts/device/webgpu-session.ts, to
# carry to a GPU machine, which reaches no registry (scripts/device/README.md):
#   webgpu-session.mjs                          the script, bundled with the app's converter and onnxruntime-web
#   ort-wasm-simd-threaded.asyncify.wasm.gz     onnxruntime-web's WebGPU build's runtime, from node_modules
#   dawn.node.gz                                Dawn for Node (linux-x64), from the `webgpu` npm package
# and, with WITH_NODE=1, .device-node/node.xz.00 and .01: Node 24 (the official Linux x64 build, lts-node.sh's)
# for a machine without Node, in two halves, each carried in a call of its own (README.md): whole, with the
# working tree, it passes the 64 MiB a call carries. Compressed; scripts/device/run-webgpu-session.sh unpacks them.
set -eu
cd "$(dirname "$0")/../.."
out=.device-webgpu
for ignored in /.device-webgpu/ /.device-node/; do
  grep -qx "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >>.git/info/exclude
done
rm -rf "$out" && mkdir -p "$out"
npx esbuild scripts/device/webgpu-session.ts --bundle --platform=node --format=esm --target=node20 \
  --outfile="$out/webgpu-session.mjs" --log-level=warning \
  --banner:js="import { createRequire as __lookoutRequire } from 'node:module'; const require = __lookoutRequire(import.meta.url);"
gzip -9 -c node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm >"$out/ort-wasm-simd-threaded.asyncify.wasm.gz"
tmp=$(mktemp -d)
(cd "$tmp" && npm pack --silent "webgpu@${WEBGPU_VERSION:-0.6.2}" >/dev/null && tar xzf webgpu-*.tgz package/dist/linux-x64/dawn.node)
gzip -9 -c "$tmp/package/dist/linux-x64/dawn.node" >"$out/dawn.node.gz"
rm -rf "$tmp"
if [ "${WITH_NODE:-0}" = 1 ]; then
  node_bin="$(LOOKOUT_NODE_FORCE=1 sh scripts/lts-node.sh)/node"
  rm -rf .device-node && mkdir -p .device-node
  xz -9 -T0 -c "$node_bin" >.device-node/node.xz
  split -n 2 -d .device-node/node.xz .device-node/node.xz.
  rm .device-node/node.xz
  du -sh .device-node/*
fi
du -sh "$out"/*
