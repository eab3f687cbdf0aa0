#!/usr/bin/env bash
# Builds BUNDLE/ort-reference (bench/device/ort-reference.cc), the GPU check's reference through ONNX Runtime's
# own C++ API, against the bundle's libonnxruntime.so.1 (BUNDLE/node_modules/onnxruntime-node, found at run time
# through an rpath relative to the program). onnxruntime-node ships no headers; ONNX Runtime's C and C++ API
# headers (MIT, API version 29: the bundle's 1.29 and this checkout's 1.30 both serve it) come from the npm
# registry in com.github.asus4.onnxruntime, unpacked once into .dev/ (git-ignored) and never committed.
# Called by scripts/device-bundle.sh.
#   bash scripts/lib/stage-reference.sh BUNDLE
set -euo pipefail
out=$(cd "${1:?usage: stage-reference.sh BUNDLE}" && pwd)
inc=.dev/ort-headers-0.4.9
if [[ ! -f $inc/onnxruntime_cxx_api.h ]]; then
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/sf-ort-headers.XXXXXX")
  (cd "$tmp" && npm pack --silent --prefer-offline com.github.asus4.onnxruntime@0.4.9 >/dev/null)
  hdr='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64_x86_64-simulator/onnxruntime.framework/Headers'
  tar -xzf "$tmp"/com.github.asus4.onnxruntime-0.4.9.tgz -C "$tmp" --wildcards "$hdr/*.h"
  mkdir -p "$inc.part" && cp "$tmp/$hdr"/*.h "$inc.part/" && rm -rf "$inc" && mv "$inc.part" "$inc"
  rm -rf "$tmp"
fi
lib=node_modules/onnxruntime-node/bin/napi-v6/linux/x64
g++ -std=c++17 -O2 -Wall -I"$inc" bench/device/ort-reference.cc -o "$out/ort-reference" \
  -L"$out/$lib" -l:libonnxruntime.so.1 -ldl -static-libstdc++ -static-libgcc "-Wl,-rpath,\$ORIGIN/$lib"
