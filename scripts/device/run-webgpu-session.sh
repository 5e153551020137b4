#!/bin/sh
# Runs on the GPU machine, from the repository root, with .device-webgpu carried (scripts/device/README.md):
#   sh .device-webgpu/run.sh
# Unpacks what prepare-webgpu-session.sh packed, uses the machine's Node when it has one (20 or later), else the
# carried one, and writes the table to stdout and webgpu-session.json (and the GPU's name) to $OUT.
set -eu
dir=.device-webgpu
# The Vulkan loader, where the machine has none (the device README's .gl folder, carried too).
if [ -d .gl ] && ! ldconfig -p | grep -q libvulkan; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && [ -z "${VK_DRIVER_FILES:-}" ] && export VK_DRIVER_FILES="$icd"
# Node's halves, copied to /tmp/lookout by earlier calls (README.md; a warm machine keeps /tmp).
if [ ! -x /tmp/lookout-node ] && [ -f /tmp/lookout/node.xz.00 ] && [ -f /tmp/lookout/node.xz.01 ]; then
  cat /tmp/lookout/node.xz.00 /tmp/lookout/node.xz.01 | xz -dc >/tmp/lookout-node && chmod +x /tmp/lookout-node
fi
gunzip -kf "$dir/ort-wasm-simd-threaded.asyncify.wasm.gz" "$dir/dawn.node.gz"
node=$(command -v node || true)
if [ -n "$node" ] && [ "$("$node" -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then node=; fi
if [ -z "$node" ]; then
  [ -x /tmp/lookout-node ] || { echo "no Node 20+ here and none carried: see scripts/device/README.md" >&2; exit 3; }
  node=/tmp/lookout-node
fi
"$node" --version
ldconfig -p | grep -q libvulkan || echo "warning: no Vulkan loader here (Dawn needs one): carry .gl" >&2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"${OUT:-/tmp}/gpu.txt" 2>/dev/null || true
"$node" "$dir/webgpu-session.mjs"
