#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh and bench/device/providers.ts need on another x86-64 Linux host that has no
# Node.js, no npm access and none of this checkout's build: this Node.js binary (stripped), onnxruntime-node
# for linux-x64 only, the bench and the check compiled into single files (the session worker beside them),
# the reference script and the C++ reference (scripts/lib/stage-reference.sh), the native ONNX Runtime engine
# (scripts/lib/build-ort-engine.sh), gpu-check.sh itself, the two
# built-in detectors (each with a real photo's input), and the server for the HTTP rows
# (scripts/lib/stage-server.sh), and the video part for the camera rows: the addon built with FFmpeg, an FFmpeg
# with NVDEC built here from Debian's source, the camera's clip (scripts/lib/stage-video.sh).
#   bash scripts/device-bundle.sh [--gpu] [--stage DIR]
# Out: .dev/bundle.tar.xz, .dev/server.tar.xz (the server for the HTTP and camera rows) and .dev/video.tar.xz
# (git-ignored). On the host:
#   tar -xJf server.tar.xz -C /tmp/sf && tar -xJf video.tar.xz -C /tmp/sf && tar -xJf bundle.tar.xz -C /tmp/sf \
#     && /tmp/sf/gpu-check.sh --out "$OUT"
# --stage DIR: only lay the bundle out in DIR, no archive (gpu-check.sh --dry-run runs the check from there); its
# video part has no FFmpeg of its own unless one is built already (.dev/ffmpeg), so the addon loads this
# machine's.
# --gpu: the CUDA provider too, as .dev/provider.tar.xz, packed apart: onnxruntime-node does not ship one (its
# install script downloads it), its library must come from the same ONNX Runtime release as the core it loads
# into, and with it the whole no longer fits one 64 MiB transfer (docs/capacity.md, "The GPU check"). The
# provider of ONNX Runtime 1.29 (CUDA 13) is on the npm registry in a Unity package
# (com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9, Plugins/Linux/x64); --gpu packs onnxruntime-node@1.29.0
# and onnxruntime-common@1.29.0 to match it, and keeps only the target GPU's kernels in the provider
# (scripts/fatbin-keep-arch.ts, GPU_ARCH, default 90: an H100/H200). On the host, before the check:
#   tar -xJf provider.tar.xz -C /tmp/sf-provider && /tmp/sf/gpu-check.sh --provider-dir /tmp/sf-provider --out "$OUT"
# The CUDA libraries the provider needs (cuBLAS, cuDNN, the CUDA 13 runtime) are found there at run time
# (LD_LIBRARY_PATH, the host's Python nvidia packages, /usr/local/cuda). ORT_NODE_TGZ / ORT_COMMON_TGZ name
# `npm pack` tarballs of another onnxruntime-node / onnxruntime-common release to pack instead.
set -euo pipefail
cd "$(dirname "$0")/.."
gpu=0
stage=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --gpu) gpu=1 ;;
    --stage) stage="$2"; shift ;;
    *) echo "usage: device-bundle.sh [--gpu] [--stage DIR]" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p .dev
# Each run works in a folder of its own (the dry run of a test may build beside a bundle being made).
work=$(mktemp -d "${TMPDIR:-/tmp}/sf-bundle-work.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ -n "$stage" ]]; then out=$stage; else out=$work/stage; fi
mkdir -p "$out/node_modules/onnxruntime-node/bin/napi-v6/linux" "$out/models"
cp "$(readlink -f "$(command -v node)")" "$out/node"
# Its symbol table only serves debuggers; without it the binary is ~13% smaller.
if command -v strip >/dev/null; then strip "$out/node"; fi
ort=node_modules/onnxruntime-node
common=node_modules/onnxruntime-common
if [[ $gpu == 1 && -z "${ORT_NODE_TGZ:-}" ]]; then
  (cd "$work" && npm pack --silent --prefer-offline onnxruntime-node@1.29.0 onnxruntime-common@1.29.0 \
    com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 >/dev/null)
  ORT_NODE_TGZ=$work/onnxruntime-node-1.29.0.tgz
  ORT_COMMON_TGZ=$work/onnxruntime-common-1.29.0.tgz
fi
if [[ -n "${ORT_NODE_TGZ:-}" ]]; then
  mkdir -p "$work/ort-node" "$work/ort-common"
  tar -xzf "$ORT_NODE_TGZ" -C "$work/ort-node" && ort=$work/ort-node/package
  tar -xzf "${ORT_COMMON_TGZ:?with ORT_NODE_TGZ, name the matching onnxruntime-common tarball}" -C "$work/ort-common"
  common=$work/ort-common/package
fi
cp -r "$ort/package.json" "$ort/dist" "$out/node_modules/onnxruntime-node/"
cp -r "$ort/bin/napi-v6/linux/x64" "$out/node_modules/onnxruntime-node/bin/napi-v6/linux/"
mkdir -p "$out/node_modules/onnxruntime-common" && cp -r "$common/." "$out/node_modules/onnxruntime-common/"
cp -r data/models/centernet-coco "$out/models/"
# yolov8n-int8 is a bring-your-own export (../shared/byo-models); without it the bundle has the built-in only.
byo=$(npx tsx -e "import { byoPath, BYO_MODELS, hasByoModels } from './eval/byo-dir.ts'; console.log(hasByoModels(BYO_MODELS['yolov8n-int8']) ? byoPath(BYO_MODELS['yolov8n-int8']) : '')" 2>/dev/null | tail -1)
if [[ -n "$byo" ]]; then mkdir -p "$out/models/yolov8n-int8" && cp "$byo" "$out/models/yolov8n-int8/"; fi
npx tsx bench/device/inputs.ts "$out/models"
esb=(npx esbuild --bundle --platform=node --format=esm --target=node20 --log-level=warning --external:onnxruntime-node
  "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);")
"${esb[@]}" bench/device/providers.ts --outfile="$out/providers.js"
"${esb[@]}" bench/device/gpu-check.ts --outfile="$out/gpu-check.js"
"${esb[@]}" src/inference/session-worker.ts --outfile="$out/session-worker.js"
"${esb[@]}" bench/device/http-rows.ts --outfile="$out/http-rows.js"
"${esb[@]}" bench/device/camera-rows.ts --outfile="$out/camera-rows.js"
cp scripts/gpu-check.sh bench/device/reference.py "$out/"
# The bundled sources find their root by a package.json (src/base/paths.ts).
echo '{"name": "sightflow-device-bundle", "private": true, "type": "module"}' > "$out/package.json"
bash scripts/lib/stage-server.sh "$out"
bash scripts/lib/stage-reference.sh "$out"
# The native engine (SIGHTFLOW_INFERENCE_ENGINE=native) against the bundle's ONNX Runtime, where the bench and the
# server each look for it from their root (src/inference/native-session.ts).
for root in "$out" "$out/server"; do
  ORT_LIB_DIR="$out/node_modules/onnxruntime-node/bin/napi-v6/linux/x64" \
    bash scripts/lib/build-ort-engine.sh "$root/native/build-ort/sightflow_ort.node" >/dev/null
done
if [[ -n "$stage" ]]; then bash scripts/lib/stage-video.sh "$out" --no-ffmpeg; else bash scripts/lib/stage-video.sh "$out"; fi
if [[ $gpu == 1 ]]; then
  mkdir -p "$work/gpu" "$work/provider"
  tar -xzf "$work"/com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9.tgz -C "$work/gpu"
  lib=$work/gpu/package/Plugins/Linux/x64
  npx tsx scripts/fatbin-keep-arch.ts "$lib/libonnxruntime_providers_cuda.so" "$work/provider/libonnxruntime_providers_cuda.so" "${GPU_ARCH:-90}"
  cp "$lib/libonnxruntime_providers_shared.so" "$lib/libonnxruntime_providers_tensorrt.so" "$work/provider/"
  tar -C "$work/provider" -cf - . | xz -T0 -6 > .dev/provider.tar.xz.part && mv .dev/provider.tar.xz.part .dev/provider.tar.xz
  ls -la .dev/provider.tar.xz
fi
if [[ -z "$stage" ]]; then
  # The server and the HTTP rows' load (server/, the C clients, the photo) travel as a part of their own: with
  # them the bundle would leave too little room under 64 MiB for the working tree that travels beside it.
  tar -C "$out" -cf - server post-clients photo.jpg | xz -T0 -6 > .dev/server.tar.xz.part && mv .dev/server.tar.xz.part .dev/server.tar.xz
  # The camera rows' part (the addon with FFmpeg, the FFmpeg, the clip) is small: it travels beside the bundle
  # in the second device call (docs/capacity.md, "The GPU check").
  tar -C "$out" -cf - video | xz -T0 -6 > .dev/video.tar.xz.part && mv .dev/video.tar.xz.part .dev/video.tar.xz
  tar -C "$out" --exclude=./server --exclude=./post-clients --exclude=./photo.jpg --exclude=./video -cf - . | xz -T0 -6 > .dev/bundle.tar.xz.part && mv .dev/bundle.tar.xz.part .dev/bundle.tar.xz
  ls -la .dev/bundle.tar.xz .dev/server.tar.xz .dev/video.tar.xz
fi
