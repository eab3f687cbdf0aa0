# Sourced. ort_headers_dir prints a folder holding ONNX Runtime's C and C++ API headers (MIT, API version 29:
# the bundle's ONNX Runtime 1.29 and this checkout's 1.30 both serve it). onnxruntime-node ships none; the npm
# registry has them in com.github.asus4.onnxruntime (a ~150 MB package: npm's cache keeps it after the first
# time), unpacked once into .dev/ (git-ignored) and never committed.
ort_headers_dir() {
  local inc=.dev/ort-headers-0.4.9 tmp hdr
  if [[ ! -f $inc/onnxruntime_cxx_api.h ]]; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/sf-ort-headers.XXXXXX")
    (cd "$tmp" && npm pack --silent --prefer-offline com.github.asus4.onnxruntime@0.4.9 >/dev/null) || { rm -rf "$tmp"; return 1; }
    hdr='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64_x86_64-simulator/onnxruntime.framework/Headers'
    tar -xzf "$tmp"/com.github.asus4.onnxruntime-0.4.9.tgz -C "$tmp" --wildcards "$hdr/*.h"
    mkdir -p "$inc.part.$$" && cp "$tmp/$hdr"/*.h "$inc.part.$$/" && rm -rf "$inc" && mv "$inc.part.$$" "$inc"
    rm -rf "$tmp"
  fi
  echo "$inc"
}
