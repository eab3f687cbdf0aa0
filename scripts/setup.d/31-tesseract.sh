#!/usr/bin/env bash
# OCR peer and fonts: Debian's Tesseract 5 (English) is the comparison engine in `eval ocr` / `bench ocr`
# and the optional engine for languages PP-OCRv4 does not cover; DejaVu is the font the OCR tests render.
# Idempotent: packages already installed are skipped.
set -euo pipefail

cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/apt.sh
apt_install tesseract-ocr tesseract-ocr-eng fonts-dejavu-core
tesseract --version 2>&1 | head -1
