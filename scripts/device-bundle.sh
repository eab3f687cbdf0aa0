#!/usr/bin/env bash
# Packs what bench/device/providers.ts needs on another x86-64 Linux host that has no Node.js, no npm
# access and none of this checkout's build: this Node.js binary, onnxruntime-node for linux-x64 only, the
# bench compiled into one file (its session worker beside it) and the two built-in detectors. Out:
# .dev/bundle.tar.xz (git-ignored). On the host:
#   tar -xJf bundle.tar.xz -C /tmp/sf && cd /tmp/sf && ./node providers.js --models models
# A GPU provider: onnxruntime-node does not ship one (its install script downloads it), and its library must
# come from the same ONNX Runtime release as the core it loads into. ORT_NODE_TGZ / ORT_COMMON_TGZ name
# `npm pack` tarballs of another onnxruntime-node / onnxruntime-common release to pack instead of the
# installed ones (the release a provider was built for); the provider libraries themselves (a CUDA one is
# ~230 MB) travel apart and are copied next to the binding on the host:
#   cp libonnxruntime_providers_*.so /tmp/sf/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/
# and the CUDA libraries they need (cuBLAS, cuDNN, the CUDA runtime of the provider's major version) must be
# on LD_LIBRARY_PATH there.
# The CUDA provider of ONNX Runtime 1.29 (CUDA 13) is on the npm registry in a Unity package
# (com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9, Plugins/Linux/x64; pack onnxruntime-node@1.29.0 and
# onnxruntime-common@1.29.0 for ORT_NODE_TGZ / ORT_COMMON_TGZ). To fit a 64 MiB transfer, keep only the target
# GPU's kernels (scripts/fatbin-keep-arch.ts, sm_90 for an H100/H200: xz then makes ~38 MB of it) and send it
# in its own call before the bundle (~44 MB), unpacking both outside the work tree on the same warm machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.dev/stage
rm -rf .dev && mkdir -p "$out/node_modules/onnxruntime-node/bin/napi-v6/linux" "$out/models"
cp "$(readlink -f "$(command -v node)")" "$out/node"
ort=node_modules/onnxruntime-node
common=node_modules/onnxruntime-common
if [[ -n "${ORT_NODE_TGZ:-}" ]]; then
  mkdir -p .dev/ort-node .dev/ort-common
  tar -xzf "$ORT_NODE_TGZ" -C .dev/ort-node && ort=.dev/ort-node/package
  tar -xzf "${ORT_COMMON_TGZ:?with ORT_NODE_TGZ, name the matching onnxruntime-common tarball}" -C .dev/ort-common
  common=.dev/ort-common/package
fi
cp -r "$ort/package.json" "$ort/dist" "$out/node_modules/onnxruntime-node/"
cp -r "$ort/bin/napi-v6/linux/x64" "$out/node_modules/onnxruntime-node/bin/napi-v6/linux/"
mkdir -p "$out/node_modules/onnxruntime-common" && cp -r "$common/." "$out/node_modules/onnxruntime-common/"
for m in centernet-coco yolov8n-int8; do cp -r "data/models/$m" "$out/models/"; done
npx tsx bench/device/inputs.ts "$out/models"
esb=(npx esbuild --bundle --platform=node --format=esm --target=node20 --log-level=warning --external:onnxruntime-node
  "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);")
"${esb[@]}" bench/device/providers.ts --outfile="$out/providers.js"
"${esb[@]}" src/inference/session-worker.ts --outfile="$out/session-worker.js"
tar -C "$out" -cf - . | xz -T0 -6 > .dev/bundle.tar.xz
rm -rf "$out" .dev/ort-node .dev/ort-common
ls -la .dev/bundle.tar.xz
