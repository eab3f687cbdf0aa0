#!/usr/bin/env bash
# The native ONNX Runtime engine (native/ort; SIGHTFLOW_INFERENCE_ENGINE=native): TensorRT in FP16 with its
# engine caches and the CUDA provider's settings, which onnxruntime-node's binding cannot pass. Built for the
# tests (they run it on the CPU), and for `serve` when SIGHTFLOW_BUILD_ORT_ENGINE=1, as a GPU server wants it:
# its ONNX Runtime headers come in a ~150 MB npm package (scripts/lib/ort-headers.sh), too much for every setup.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
if [[ ${SIGHTFLOW_SETUP:-test} != test && ${SIGHTFLOW_BUILD_ORT_ENGINE:-0} != 1 ]]; then
  echo "native ONNX Runtime engine: not built (SIGHTFLOW_BUILD_ORT_ENGINE=1 builds it)"
  exit 0
fi
bash scripts/lib/build-ort-engine.sh
