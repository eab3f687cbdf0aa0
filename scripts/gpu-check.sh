#!/usr/bin/env bash
# The one-shot GPU check (issue 46): what the host has (driver, CUDA, TensorRT, ONNX Runtime, PyTorch), the
# reference on the same ONNX models' float graphs (a TensorRT FP16 engine through trtexec or the host's TensorRT
# package, else the host's ONNX Runtime CUDA in FP16 with IO binding, else ONNX Runtime's C++ API from the bundle
# on the same release and provider sightflow loads, bench/device/ort-reference.cc), sightflow's in-process
# ceiling under dynamic batching at batch 1, 8 and 32 (bench/device/providers.ts), with a check that a batch
# answers what a run alone does; each float graph also in float16 (`<model> (fp16)` rows, fp16-graph.ts), as
# SIGHTFLOW_INFERENCE_FP16=auto loads it on the card; the same ceiling on the native engine (src/inference/
# native-session.ts: TensorRT FP16 and caches, CUDA graphs); then the whole server over HTTP with the C clients
# (bench/device/http-rows.ts); then N live H.264 1080p cameras into the server with the NVIDIA decoder and
# with software in the same run (bench/device/camera-rows.ts, the video part: scripts/lib/stage-video.sh).
# Writes gpu-check.json (everything) and gpu-check.md (the table) into --out.
# It runs from the bundle (scripts/device-bundle.sh --gpu) on a host with an NVIDIA driver and maybe nothing
# else (no Node.js, no network):
#   /tmp/sf/gpu-check.sh --provider-dir /tmp/sf-provider --out "$OUT" [--seconds 2] [--batch 1,8,32] [--sessions 1,4] [--http-clients 1,16,64]
#                        [--camera-rows cuda:50,none:50,cuda:25,none:25]
# Here, on the CPU, --dry-run lays the bundle out in a temporary folder and runs the same check from it, on the
# CPU provider with shorter rows (batch 2; 1 s; two cameras in software, then asking for NVDEC), so none of
# it rots (test/device/gpu-check.test.ts):
#   bash scripts/gpu-check.sh --dry-run [--out DIR]
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
here=$(cd "$(dirname "$0")" && pwd)
dry=0
out=""
provider_dir=""
seconds=""
batches=""
sessions=""
http_clients=""
camera_rows=""
pass=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dry-run) dry=1 ;;
    # Absolute before the check moves into the bundle (a relative one would land there, and in a dry run vanish).
    --out) mkdir -p "$2"; out=$(cd "$2" && pwd); pass+=("$1" "$out"); shift ;;
    --provider-dir) provider_dir=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift ;;
    --seconds) seconds="$2"; pass+=("$1" "$2"); shift ;;
    --batch) batches="$2"; pass+=("$1" "$2"); shift ;;
    --sessions) sessions="$2"; pass+=("$1" "$2"); shift ;;
    --http-clients) http_clients="$2"; pass+=("$1" "$2"); shift ;;
    --camera-rows) camera_rows="$2"; pass+=("$1" "$2"); shift ;;
    *) echo "usage: gpu-check.sh [--dry-run] [--out DIR] [--provider-dir DIR] [--seconds N] [--batch 1,8,32] [--sessions 1,4] [--http-clients 1,16,64] [--camera-rows HWACCEL:N,...]" >&2; exit 2 ;;
  esac
  shift
done

if [[ ! -x "$here/node" ]]; then
  # In the checkout: lay the bundle out and run the check from it.
  [[ $dry == 1 ]] || { echo "gpu-check.sh runs from the bundle (scripts/device-bundle.sh); here, only --dry-run" >&2; exit 2; }
  stage=$(mktemp -d /tmp/sf-gpu-check.XXXXXX)
  trap 'rm -rf "$stage"' EXIT
  bash "$here/device-bundle.sh" --stage "$stage" >&2
  bash "$stage/gpu-check.sh" --dry-run "${pass[@]}"
  exit $?
fi

cd "$here"
out=${out:-${OUT:-$here/out}}
mkdir -p "$out"
work=$(mktemp -d /tmp/sf-gpu-work.XXXXXX)
t0=$(date +%s)
# Every server the check starts makes its fresh embedded database from one set of templates (the first makes them).
export SIGHTFLOW_PGLITE_TEMPLATE_DIR="${SIGHTFLOW_PGLITE_TEMPLATE_DIR:-$work/pglite-templates}"
log() { echo "gpu-check [$(( $(date +%s) - t0 )) s] $*" >&2; }
if [[ $dry == 1 ]]; then
  # Batch 2 only: a batch-1 row runs the same code one image a call, the batch rows were most of the check's
  # CPU, and the check that a batch answers what runs alone do is in the batch-2 rows.
  seconds=${seconds:-1}; batches=${batches:-2}
else
  # 2 s a row: the check runs ~45 batch rows and ~25 unbatched ones, the reference and the HTTP rows, and must
  # end inside 8 minutes.
  seconds=${seconds:-2}; batches=${batches:-1,8,32}
fi

# The GPU provider's libraries beside the binding, and the CUDA libraries they load from wherever the host has
# them: its own LD_LIBRARY_PATH, /usr/local/cuda, or the lib folders of its Python nvidia packages.
bin=node_modules/onnxruntime-node/bin/napi-v6/linux/x64
if [[ -n "$provider_dir" && ! -f "$provider_dir/libonnxruntime_providers_cuda.so" ]]; then
  echo "gpu-check: no libonnxruntime_providers_cuda.so in $provider_dir (unpack provider.tar.xz there first)" >&2
  exit 3
fi
if [[ -n "$provider_dir" ]]; then
  cp "$provider_dir"/libonnxruntime_providers_cuda.so "$provider_dir"/libonnxruntime_providers_shared.so "$bin/"
  # The TensorRT provider loads only where TensorRT is installed; offered without it, the model would fall back to cpu.
  if ldconfig -p 2>/dev/null | grep -q 'libnvinfer.so'; then cp "$provider_dir"/libonnxruntime_providers_tensorrt.so "$bin/"; fi
fi
libs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do [[ -d $d ]] && libs="$libs:$d"; done
if command -v python3 >/dev/null; then
  nv=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]) if hasattr(nvidia, "__path__") else "")' 2>/dev/null || true)
  if [[ -n "$nv" ]]; then
    for d in "$nv"/nvidia/*/lib "$nv"/nvidia/cu13/lib; do [[ -d $d ]] && libs="$libs:$d"; done
  fi
fi
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}${libs}"

log "probing the host"
./node gpu-check.js probe "$work/probe.json" || echo '{"error": "the probe failed (gpu-check.log)"}' > "$work/probe.json"
gpu=$(./node -e "const p=require('$work/probe.json'); console.log(p.driver ? 'yes' : '')")
printf '{"dry_run": %s, "seconds": %s, "batches": [%s], "bundle": "%s"}\n' "$([[ $dry == 1 ]] && echo true || echo false)" "$seconds" "$batches" "$here" > "$work/meta.json"

# The reference, per model, on the graph with a free batch axis.
trt=$(./node -e "const p=require('$work/probe.json'); console.log(p.tensorrt?.trtexec || '')")
engine="none: no NVIDIA driver"
if [[ -n "$gpu" ]]; then
  if [[ -n "$trt" ]]; then engine=trtexec
  elif command -v python3 >/dev/null; then
    engine=$(python3 reference.py --which 2>>"$work/reference.err" || echo "none: reference.py --which failed (gpu-check.log)")
  else engine="none: no trtexec and no python3"
  fi
  # Neither TensorRT nor ONNX Runtime's CUDA provider for Python: ONNX Runtime's C++ API from the bundle
  # (bench/device/ort-reference.cc), on the same release and provider library sightflow loads.
  [[ $engine == none* && -x ./ort-reference ]] && engine=ort-c-api
elif [[ $dry == 1 ]]; then
  # The dry run runs the C++ reference on the CPU provider (float32), so it cannot rot.
  engine=ort-c-api-dry
fi
for dir in models/*/; do
  id=$(basename "$dir")
  onnx=$(ls "$dir"*.onnx | head -1)
  # The reference runs the model's float graph (an int8 export made float as sightflow does on a GPU: TensorRT
  # and ONNX Runtime's CUDA provider run no integer convolutions) with a free batch axis.
  if ! shape=$(./node gpu-check.js batch-graph "$onnx" "$work/$id.batched.onnx"); then
    echo "{\"engine\": \"none\", \"reason\": \"the graph takes no batch axis\"}" > "$work/reference-$id.json"; continue
  fi
  name=$(./node -e "console.log(JSON.parse(process.argv[1]).input)" "$shape")
  dims=$(./node -e "console.log(JSON.parse(process.argv[1]).dims.join(','))" "$shape")
  log "reference for $id: $engine"
  case "$engine" in
    # A reference that fails is a row of the report that says so, not the end of the check.
    trtexec) ./node gpu-check.js trtexec "$trt" "$work/$id.batched.onnx" "$batches" "$seconds" "$work" "$work/reference-$id.json" 2>>"$work/reference.err" \
      || echo "{\"engine\": \"trtexec\", \"error\": \"the TensorRT reference failed (gpu-check.log)\"}" > "$work/reference-$id.json" ;;
    tensorrt|ort-cuda) python3 reference.py --model "$work/$id.batched.onnx" --input "$name" --dims "$dims" --batch "$batches" --seconds "$seconds" --out "$work/reference-$id.json" >/dev/null 2>>"$work/reference.err" \
      || echo "{\"engine\": \"$engine\", \"error\": \"reference.py failed (gpu-check.log)\"}" > "$work/reference-$id.json" ;;
    ort-c-api|ort-c-api-dry)
      model=$work/$id.batched.onnx; precision=fp32; provider=cpu
      if [[ $engine == ort-c-api ]]; then
        provider=cuda
        # Float16 by ONNX Runtime's own converter where the host's Python has it, else by sightflow's.
        if command -v python3 >/dev/null && python3 reference.py --to-fp16 "$model" "$work/$id.fp16.onnx" >/dev/null 2>>"$work/reference.err"; then
          model=$work/$id.fp16.onnx; precision="fp16 (ONNX Runtime's converter)"
        elif ./node gpu-check.js fp16-graph "$work/$id.batched.onnx" "$work/$id.fp16.onnx" 2>>"$work/reference.err"; then
          model=$work/$id.fp16.onnx; precision="fp16 (sightflow's converter)"
        fi
      fi
      if ! ./ort-reference --model "$model" --input "$name" --dims "$dims" --batch "$batches" --seconds "$seconds" \
        --provider "$provider" --precision "$precision" --out "$work/reference-$id.json" 2>>"$work/reference.err"; then
        echo "{\"engine\": \"ort-c-api\", \"error\": \"ort-reference failed (gpu-check.log)\"}" > "$work/reference-$id.json"
      fi ;;
    *) ./node -e "console.log(JSON.stringify({engine: 'none', reason: process.argv[1].replace(/^none: /, '')}))" "$engine" > "$work/reference-$id.json" ;;
  esac
done
[[ -f "$work/reference.err" ]] && cat "$work/reference.err" >&2

log "sightflow's in-process ceiling at batch $batches"
# Each model's rows with its float input, then (--dequantize) an int8 export's graph made float, as a GPU
# provider loads it under SIGHTFLOW_INFERENCE_DEQUANTIZE=auto, then (--uint8) with the graph taking bytes, as
# the detector feeds it on a GPU provider: the difference is the input's copy to the card.
# On a GPU: one session, and four beside each other (runs overlap one another's host work with kernels).
only=()
[[ -n "$gpu" ]] && only=(--gpu-only --sessions "${sessions:-1,4}")
# A row that fails (a provider that does not load, a graph it refuses) says why in its row; a step that fails as
# a whole leaves its error in the report and the check goes on: the HTTP and camera rows are worth having anyway.
failed() { ./node gpu-check.js failure "$1"; }
if ./node providers.js --models models --batch "$batches" --seconds "$seconds" --dequantize --uint8 --fp16 "${only[@]}" --json > "$work/sightflow.log" 2> "$work/sightflow.err"; then
  tail -1 "$work/sightflow.log" > "$work/sightflow.json"
else
  failed "$work/sightflow.err" > "$work/sightflow.json"; cat "$work/sightflow.err" >&2
fi

# The same ceiling on the native engine (TensorRT in FP16 with its caches, CUDA graphs on the CUDA provider), each
# model only as a GPU server runs it (--server-rows): which route reaches the card, beside the binding's rows above.
log "sightflow's in-process ceiling on the native engine"
native_rows=(--server-rows --dequantize --fp16 --uint8 "${only[@]}")
[[ $dry == 1 ]] && native_rows+=(--models-only centernet-coco --native-checks)
if [[ ! -f native/build-ort/sightflow_ort.node ]]; then
  echo '{"error": "the native engine is not in the bundle (scripts/device-bundle.sh builds it)"}' > "$work/native.json"
elif (( $(date +%s) - t0 > 240 )) && [[ $dry == 0 ]]; then
  log "late: no native engine rows"
  echo '{"error": "skipped: the check was past 240 s"}' > "$work/native.json"
elif ./node providers.js --engine native --cuda-graphs --models models --batch "$batches" --seconds "$seconds" "${native_rows[@]}" --json > "$work/native.log" 2> "$work/native.err"; then
  tail -1 "$work/native.log" > "$work/native.json"
else
  failed "$work/native.err" > "$work/native.json"; cat "$work/native.err" >&2
fi
[[ -f "$work/native.err" ]] && cat "$work/native.err" >> "$work/sightflow.err"

log "the GPU's outputs against the CPU's, and sessions without batching"
if ./node providers.js --models models --gpu-only --dequantize --fp16 --seconds "$seconds" --json > "$work/sweep.log" 2> "$work/sweep.err"; then
  tail -1 "$work/sweep.log" > "$work/sweep.json"
else
  failed "$work/sweep.err" > "$work/sweep.json"; cat "$work/sweep.err" >&2
fi
cat "$work/sweep.err" >> "$work/sightflow.err"

# The whole server over HTTP (bench/device/http-rows.ts): the detectors from the bundle's server/, the C clients
# at each number of connections, under the defaults, with dynamic batching, batched behind front processes that
# take the HTTP off the model's event loop, and the same on the native engine with CUDA graphs (the dry run: the
# defaults, two fronts, and two fronts on the native engine).
if [[ $dry == 1 ]]; then http_clients=${http_clients:-1,4}; configs=defaults,fronts,native; fronts=2
else http_clients=${http_clients:-1,16,64}; configs=defaults,batched,fronts,native; fronts=4; fi
providers=cpu
[[ -n "$gpu" ]] && providers=cuda
# Late (a slow reference build, slow model loads): batched only, alone, behind fronts and behind fronts on the native
# engine, so the whole still ends inside 8 minutes.
if (( $(date +%s) - t0 > 330 )) && [[ $dry == 0 ]]; then configs=batched,fronts,native; log "late: HTTP rows batched, alone, behind fronts and behind fronts on the native engine"; fi
log "the server over HTTP ($providers, $http_clients clients)"
if [[ ! -f server/server.js ]]; then
  echo '{"error": "the server part is not unpacked here (server.tar.xz, scripts/device-bundle.sh)"}' > "$work/http.json"
  : > "$work/http.err"
elif ! ./node http-rows.js --server server --models models --client ./post-clients --photo photo.jpg --providers "$providers" \
  --clients "$http_clients" --seconds "$seconds" --configs "$configs" --fronts "$fronts" --out "$work/http.json" 2> "$work/http.err"; then
  # The rows before stay worth reporting: the failure goes into the report, its log into gpu-check.log.
  failed "$work/http.err" > "$work/http.json"
fi
cat "$work/http.err" >> "$work/sightflow.err"

# Live cameras into the same server (bench/device/camera-rows.ts): each row a fresh server with the addon built
# with FFmpeg and the FFmpeg from video/, N cameras detecting and tracking at 5 fps, the NVIDIA decoder
# against software in the same run. The dry run: two cameras in software, then asking for NVDEC (auto), which
# must say it fell back to software and why. Late, fewer rows, or none, so the whole ends inside 8 minutes.
if [[ $dry == 1 ]]; then camera_rows=${camera_rows:-none:2,auto:2}; camera_s=2; camera_warm=15
else camera_rows=${camera_rows:-cuda:50,none:50,cuda:25,none:25}; camera_s=8; camera_warm=25; fi
elapsed=$(( $(date +%s) - t0 ))
if (( elapsed > 390 )); then
  ./node -e "console.log(JSON.stringify({skipped: 'late: the check had run ' + process.argv[1] + ' s, and the camera rows need ~2 minutes'}))" "$elapsed" > "$work/cameras.json"
  log "late: no camera rows"
elif [[ ! -f video/sightflow.node || ! -f server/server.js ]]; then
  echo '{"error": "the video part or the server is not unpacked here (video.tar.xz, server.tar.xz: scripts/device-bundle.sh)"}' > "$work/cameras.json"
else
  if (( elapsed > 280 )) && [[ $dry == 0 ]]; then camera_rows=$(echo "$camera_rows" | cut -d, -f1-2); log "late: camera rows $camera_rows only"; fi
  log "cameras ($camera_rows)"
  if ! ./node camera-rows.js --server server --models models --video video --providers "$providers" --rows "$camera_rows" \
    --seconds "$camera_s" --warm-s "$camera_warm" --out "$work/cameras.json" 2> "$work/cameras.err"; then
    failed "$work/cameras.err" > "$work/cameras.json"
  fi
  cat "$work/cameras.err" >> "$work/sightflow.err"
fi

log "report"
./node gpu-check.js report "$work" "$out"
echo
cp "$work/sightflow.err" "$out/gpu-check.log"
rm -rf "$work"
log "done: $out/gpu-check.json, $out/gpu-check.md"
