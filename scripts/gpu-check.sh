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
#                        [--camera-rows cuda:50,none:50,cuda:25,none:25] [--budget 480]
# The steps run in the order of what the goals need: the in-process rows as a GPU server runs each model (binding,
# then native engine), the HTTP rows, the cameras, and only then each step's own rows and the unbatched sweep. Each
# step has its share of --budget seconds (default 480; none in a dry run): in-process rows start no row past it,
# a step that overruns is stopped, and the report in --out is written again after every step, so a check cut off
# from outside (the device call's limit) still leaves everything it measured.
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
budget=""
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
    --budget) budget="$2"; pass+=("$1" "$2"); shift ;;
    *) echo "usage: gpu-check.sh [--dry-run] [--out DIR] [--provider-dir DIR] [--seconds N] [--batch 1,8,32] [--sessions 1,4] [--http-clients 1,16,64] [--camera-rows HWACCEL:N,...] [--budget SECONDS]" >&2; exit 2 ;;
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
  # 2 s a row: the check runs ~48 batch rows, ~25 unbatched ones, the reference, the HTTP and the camera rows, and
  # must end inside 8 minutes (--budget keeps it there, the rows the goals need first).
  seconds=${seconds:-2}; batches=${batches:-1,8,32}
fi
[[ -z $budget && $dry == 0 ]] && budget=480
if [[ -n $budget ]] && ! [[ $budget =~ ^[0-9]+$ && $budget -ge 60 ]]; then
  echo "gpu-check: --budget takes whole seconds, at least 60" >&2; exit 2
fi
# A step's share of the budget: the moment (epoch seconds) it starts no more rows, as a fraction of the budget from the
# start; none without a budget.
by() { [[ -n $budget ]] && echo $(( t0 + budget * $1 / 100 )) || echo ""; }
# Seconds a step may run before it is stopped: to its share's end and a margin for the row in flight (a row loads
# its sessions and meets each batch size's first run); without a budget, an hour.
cap() { local end=$1 margin=$2; [[ -n $end ]] && echo $(( end - $(date +%s) + margin > 20 ? end - $(date +%s) + margin : 20 )) || echo 3600; }
done_steps=()
# The report as it stands, into --out: after every step, and with the step now running named.
snapshot() {
  local running=${1:-}
  ./node -e 'const [d, r] = [process.argv[1] ? process.argv[1].split("|") : [], process.argv[2]]; console.log(JSON.stringify({ done: d, ...(r ? { running: r } : {}) }))' \
    "$(IFS='|'; echo "${done_steps[*]:-}")" "$running" > "$work/steps.json"
  [[ -f "$work/sightflow.err" ]] && cp "$work/sightflow.err" "$out/gpu-check.log"
  ./node gpu-check.js report "$work" "$out" > /dev/null 2>> "$work/report.err" || true
}

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
printf '{"dry_run": %s, "seconds": %s, "batches": [%s], "budget_s": %s, "bundle": "%s"}\n' "$([[ $dry == 1 ]] && echo true || echo false)" "$seconds" "$batches" "${budget:-null}" "$here" > "$work/meta.json"
done_steps+=("probe")
snapshot "reference"

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
  # Its share of the budget (a quarter, both models), and a margin for the one in flight.
  ref_cap=$(cap "$(by 25)" 30)
  case "$engine" in
    # A reference that fails is a row of the report that says so, not the end of the check.
    trtexec) timeout -k 5 "$ref_cap" ./node gpu-check.js trtexec "$trt" "$work/$id.batched.onnx" "$batches" "$seconds" "$work" "$work/reference-$id.json" 2>>"$work/reference.err" \
      || echo "{\"engine\": \"trtexec\", \"error\": \"the TensorRT reference failed (gpu-check.log)\"}" > "$work/reference-$id.json" ;;
    tensorrt|ort-cuda) timeout -k 5 "$ref_cap" python3 reference.py --model "$work/$id.batched.onnx" --input "$name" --dims "$dims" --batch "$batches" --seconds "$seconds" --out "$work/reference-$id.json" >/dev/null 2>>"$work/reference.err" \
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
      if ! timeout -k 5 "$ref_cap" ./ort-reference --model "$model" --input "$name" --dims "$dims" --batch "$batches" --seconds "$seconds" \
        --provider "$provider" --precision "$precision" --out "$work/reference-$id.json" 2>>"$work/reference.err"; then
        echo "{\"engine\": \"ort-c-api\", \"error\": \"ort-reference failed (gpu-check.log)\"}" > "$work/reference-$id.json"
      fi ;;
    *) ./node -e "console.log(JSON.stringify({engine: 'none', reason: process.argv[1].replace(/^none: /, '')}))" "$engine" > "$work/reference-$id.json" ;;
  esac
done
[[ -f "$work/reference.err" ]] && cat "$work/reference.err" >&2

done_steps+=("reference")
snapshot

# The in-process ceiling (bench/device/providers.ts). Each model's rows as a GPU server loads it under every setting's
# auto (an int8 export made float, in float16, taking bytes, decoded in the session's worker: --server-rows) come
# first, on the binding and then on the native engine; each step's own rows (the graph as exported, made float, in
# float16: what each step gains) come after the HTTP and camera rows (--detail-rows), as time allows.
# On a GPU: one session, and four beside each other (runs overlap one another's host work with kernels).
only=()
[[ -n "$gpu" ]] && only=(--gpu-only --sessions "${sessions:-1,4}")
# A row that fails (a provider that does not load, a graph it refuses) says why in its row; a step that fails as
# a whole leaves its error (beside the rows it made) in the report and the check goes on.
# failed RC STDERR JSON: the step's JSON becomes its rows so far (written after each) with its error beside them: the
# error its stderr shows, or, where `timeout` stopped it (124; 137 after the kill), that it ran past its share.
failed() {
  local stopped=()
  (( $1 == 124 || $1 == 137 )) && stopped=(--stopped)
  ./node gpu-check.js failure "${stopped[@]}" "$2" "$3" > "$3.failed" && mv "$3.failed" "$3"
}
# providers.js for one step: its JSON (written after every row) into $work/$1.json, its log into $1.log and .err; $2
# names the step in the report; rows start until $3 (epoch seconds; empty: no limit), and the step is stopped $4 s
# after it.
in_process() {
  local name=$1 label=$2 end=$3 margin=$4; shift 4
  local until=()
  [[ -n $end ]] && until=(--until "$(( end * 1000 ))")
  snapshot "$label"
  if timeout -k 10 "$(cap "$end" "$margin")" ./node providers.js --models models --batch "$batches" --seconds "$seconds" \
    "${until[@]}" --json-file "$work/$name.json" --json "$@" > "$work/$name.log" 2> "$work/$name.err"; then
    tail -1 "$work/$name.log" > "$work/$name.json"
  else
    failed $? "$work/$name.err" "$work/$name.json"
    cat "$work/$name.err" >&2
  fi
}

log "sightflow's in-process ceiling at batch $batches, each model as a GPU server runs it"
in_process sightflow "in-process rows" "$(by 38)" 60 --server-rows --dequantize --uint8 --fp16 "${only[@]}"
done_steps+=("in-process rows")

# The same rows on the native engine (TensorRT in FP16 with its caches, CUDA graphs on the CUDA provider): which route
# reaches the card, beside the binding's rows above.
log "sightflow's in-process ceiling on the native engine"
native_rows=(--engine native --cuda-graphs --server-rows --dequantize --fp16 --uint8 "${only[@]}")
[[ $dry == 1 ]] && native_rows+=(--models-only centernet-coco --native-checks)
if [[ ! -f native/build-ort/sightflow_ort.node ]]; then
  echo '{"error": "the native engine is not in the bundle (scripts/device-bundle.sh builds it)"}' > "$work/native.json"
else
  in_process native "native engine rows" "$(by 50)" 45 "${native_rows[@]}"
fi
cat "$work/sightflow.err" "$work/native.err" > "$work/steps.err" 2>/dev/null || true
mv "$work/steps.err" "$work/sightflow.err"
done_steps+=("native engine rows")
snapshot

# The whole server over HTTP (bench/device/http-rows.ts): the detectors from the bundle's server/, the C clients
# at each number of connections, under the defaults, with dynamic batching, batched behind front processes that
# take the HTTP off the model's event loop, and the same on the native engine with CUDA graphs (the dry run: the
# defaults, two fronts, and two fronts on the native engine).
if [[ $dry == 1 ]]; then http_clients=${http_clients:-1,4}; configs=defaults,fronts,native; fronts=2
else http_clients=${http_clients:-1,16,64}; configs=defaults,batched,fronts,native; fronts=4; fi
providers=cpu
[[ -n "$gpu" ]] && providers=cuda
# Late (a slow reference build, slow model loads): batched only, alone, behind fronts and behind fronts on the native
# engine, so that the cameras still get their share.
if [[ -n $budget ]] && (( $(date +%s) > $(by 52) )); then configs=batched,fronts,native; log "late: HTTP rows batched, alone, behind fronts and behind fronts on the native engine"; fi
log "the server over HTTP ($providers, $http_clients clients)"
snapshot "HTTP rows"
if [[ ! -f server/server.js ]]; then
  echo '{"error": "the server part is not unpacked here (server.tar.xz, scripts/device-bundle.sh)"}' > "$work/http.json"
  : > "$work/http.err"
elif timeout -k 10 "$(cap "$(by 78)" 20)" ./node http-rows.js --server server --models models --client ./post-clients --photo photo.jpg --providers "$providers" \
  --clients "$http_clients" --seconds "$seconds" --configs "$configs" --fronts "$fronts" --out "$work/http.json" 2> "$work/http.err"; then
  :
else
  # The rows before stay worth reporting (written after each): the failure goes beside them, its log into gpu-check.log.
  failed $? "$work/http.err" "$work/http.json"
fi
cat "$work/http.err" >> "$work/sightflow.err"
done_steps+=("HTTP rows")
snapshot

# Live cameras into the same server (bench/device/camera-rows.ts): each row a fresh server with the addon built
# with FFmpeg and the FFmpeg from video/, N cameras detecting and tracking at 5 fps, the NVIDIA decoder
# against software in the same run. The dry run: two cameras in software, then asking for NVDEC (auto), which
# must say it fell back to software and why. Late, fewer rows, or none (each row takes its warm-up and its window).
if [[ $dry == 1 ]]; then camera_rows=${camera_rows:-none:2,auto:2}; camera_s=2; camera_warm=15
else camera_rows=${camera_rows:-cuda:50,none:50,cuda:25,none:25}; camera_s=8; camera_warm=25; fi
elapsed=$(( $(date +%s) - t0 ))
if [[ -n $budget ]] && (( $(date +%s) > $(by 86) )); then
  ./node -e "console.log(JSON.stringify({skipped: 'late: the check had run ' + process.argv[1] + ' s, and the camera rows need ~1-2 minutes'}))" "$elapsed" > "$work/cameras.json"
  log "late: no camera rows"
elif [[ ! -f video/sightflow.node || ! -f server/server.js ]]; then
  echo '{"error": "the video part or the server is not unpacked here (video.tar.xz, server.tar.xz: scripts/device-bundle.sh)"}' > "$work/cameras.json"
else
  if [[ -n $budget ]] && (( $(date +%s) > $(by 66) )); then camera_rows=$(echo "$camera_rows" | cut -d, -f1-2); log "late: camera rows $camera_rows only"; fi
  log "cameras ($camera_rows)"
  snapshot "camera rows"
  if timeout -k 10 "$(cap "$(by 96)" 0)" ./node camera-rows.js --server server --models models --video video --providers "$providers" --rows "$camera_rows" \
    --seconds "$camera_s" --warm-s "$camera_warm" --out "$work/cameras.json" 2> "$work/cameras.err"; then
    :
  else
    failed $? "$work/cameras.err" "$work/cameras.json"
  fi
  cat "$work/cameras.err" >> "$work/sightflow.err"
fi
done_steps+=("camera rows")
snapshot

# As time allows: each step's own rows (the graph as exported, made float, in float16, taking bytes; a YOLO output
# decoded from its whole output), then the unbatched sweep by sessions and the GPU's outputs against the CPU's.
log "each step's own in-process rows"
in_process sightflow-detail "each step's own rows" "$(by 92)" 20 --detail-rows --dequantize --uint8 --fp16 "${only[@]}"
cat "$work/sightflow-detail.err" >> "$work/sightflow.err"
done_steps+=("each step's own rows")
log "the GPU's outputs against the CPU's, and sessions without batching"
sweep_until=()
[[ -n $budget ]] && sweep_until=(--until "$(( $(by 98) * 1000 ))")
snapshot "unbatched rows"
if timeout -k 10 "$(cap "$(by 100)" 0)" ./node providers.js --models models --gpu-only --dequantize --fp16 --seconds "$seconds" \
  "${sweep_until[@]}" --json-file "$work/sweep.json" --json > "$work/sweep.log" 2> "$work/sweep.err"; then
  tail -1 "$work/sweep.log" > "$work/sweep.json"
else
  failed $? "$work/sweep.err" "$work/sweep.json"
  cat "$work/sweep.err" >&2
fi
cat "$work/sweep.err" >> "$work/sightflow.err"
done_steps+=("unbatched rows")

log "report"
snapshot
./node gpu-check.js report "$work" "$out"
echo
cp "$work/sightflow.err" "$out/gpu-check.log"
rm -rf "$work"
log "done: $out/gpu-check.json, $out/gpu-check.md"
