#!/usr/bin/env bash
# Builds BUNDLE/ort-reference (bench/device/ort-reference.cc), the GPU check's reference through ONNX Runtime's
# own C++ API, against the bundle's libonnxruntime.so.1 (BUNDLE/node_modules/onnxruntime-node, found at run time
# through an rpath relative to the program). ONNX Runtime's headers: scripts/lib/ort-headers.sh.
# Called by scripts/device-bundle.sh.
#   bash scripts/lib/stage-reference.sh BUNDLE
set -euo pipefail
out=$(cd "${1:?usage: stage-reference.sh BUNDLE}" && pwd)
source scripts/lib/ort-headers.sh
inc=$(ort_headers_dir)
lib=node_modules/onnxruntime-node/bin/napi-v6/linux/x64
g++ -std=c++17 -O2 -Wall -I"$inc" bench/device/ort-reference.cc -o "$out/ort-reference" \
  -L"$out/$lib" -l:libonnxruntime.so.1 -ldl -static-libstdc++ -static-libgcc "-Wl,-rpath,\$ORIGIN/$lib"
