#!/usr/bin/env bash
# Packs what bench/device/providers.ts needs on another x86-64 Linux host that has no Node.js, no npm
# access and none of this checkout's build: this Node.js binary, onnxruntime-node for linux-x64 only, the
# bench compiled into one file (its session worker beside it) and the two built-in detectors. Out:
# .dev/bundle.tar.xz (git-ignored). On the host:
#   tar -xJf bundle.tar.xz -C /tmp/sf && cd /tmp/sf && ./node providers.js --models models
set -euo pipefail
cd "$(dirname "$0")/.."
out=.dev/stage
rm -rf .dev && mkdir -p "$out/node_modules/onnxruntime-node/bin/napi-v6/linux" "$out/models"
cp "$(readlink -f "$(command -v node)")" "$out/node"
ort=node_modules/onnxruntime-node
cp -r "$ort/package.json" "$ort/dist" "$out/node_modules/onnxruntime-node/"
cp -r "$ort/bin/napi-v6/linux/x64" "$out/node_modules/onnxruntime-node/bin/napi-v6/linux/"
cp -r node_modules/onnxruntime-common "$out/node_modules/"
for m in centernet-coco yolov8n-int8; do cp -r "data/models/$m" "$out/models/"; done
esb=(npx esbuild --bundle --platform=node --format=esm --target=node20 --log-level=warning --external:onnxruntime-node
  "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);")
"${esb[@]}" bench/device/providers.ts --outfile="$out/providers.js"
"${esb[@]}" src/inference/session-worker.ts --outfile="$out/session-worker.js"
tar -C "$out" -cf - . | xz -T0 -6 > .dev/bundle.tar.xz
rm -rf "$out"
ls -la .dev/bundle.tar.xz
