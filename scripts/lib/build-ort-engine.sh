#!/usr/bin/env bash
# Builds the native ONNX Runtime engine, native/ort/ort_engine.cc, into OUT (default
# native/build-ort/sightflow_ort.node) against the libonnxruntime.so.1 that onnxruntime-node ships (ORT_LIB_DIR,
# default this checkout's), found at run time through an rpath relative to OUT: the process then has one ONNX
# Runtime, whichever engine a model runs on. ONNX Runtime's headers: scripts/lib/ort-headers.sh. Skips the
# compile when OUT is newer than the source.
#   bash scripts/lib/build-ort-engine.sh [OUT]
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/node.sh
source scripts/lib/ort-headers.sh
out=${1:-native/build-ort/sightflow_ort.node}
lib=${ORT_LIB_DIR:-node_modules/onnxruntime-node/bin/napi-v6/linux/x64}
src=native/ort/ort_engine.cc
if [[ -f $out && $out -nt $src && $out -nt "$lib/libonnxruntime.so.1" ]]; then
  echo "native ONNX Runtime engine up to date: $out"
  exit 0
fi
inc=$(ort_headers_dir)
mkdir -p "$(dirname "$out")"
rpath=$(realpath --relative-to="$(dirname "$out")" "$lib")
g++ -std=c++17 -O2 -Wall -Wextra -fPIC -shared -fvisibility=hidden \
  -DNAPI_VERSION=8 -DNODE_ADDON_API_DISABLE_DEPRECATED -DNAPI_CPP_EXCEPTIONS \
  -I"$(node_headers_dir)/include/node" -I"$(node -p "require('node-addon-api').include_dir")" -I"$inc" \
  "$src" -o "$out.part" -L"$lib" -l:libonnxruntime.so.1 "-Wl,-rpath,\$ORIGIN/$rpath"
mv "$out.part" "$out"
echo "native ONNX Runtime engine built: $out"
