#!/usr/bin/env bash
# Lays the sightflow server out in BUNDLE/server for the GPU check's HTTP rows (bench/device/http-rows.ts), on a
# host with nothing but the bundle: the server compiled into one file (its session worker and launcher beside it), the
# packages it loads from disk (uWebSockets.js's linux-x64 binary for this Node ABI, sharp with its libvips,
# PGlite without its extensions), the addon built without FFmpeg (the host has no Debian FFmpeg libraries) with
# the libjpeg it links beside it, the built-in detector's manifest, the C load clients built static, and a
# 640x480 JPEG of a COCO photo. onnxruntime-node is the bundle's own (BUNDLE/node_modules, found by Node's
# lookup upwards). Called by scripts/device-bundle.sh.
#   bash scripts/lib/stage-server.sh BUNDLE
set -euo pipefail
out=$(cd "${1:?usage: stage-server.sh BUNDLE}" && pwd)
srv=$out/server
mkdir -p "$srv/build/Release" "$srv/models" "$srv/node_modules/@trufflesuite/uws-js-unofficial/binaries" \
  "$srv/node_modules/@img" "$srv/node_modules/@electric-sql/pglite"
esb=(npx esbuild --bundle --platform=node --format=esm --target=node20 --log-level=warning
  --external:onnxruntime-node --external:@trufflesuite/uws-js-unofficial --external:sharp --external:@electric-sql/pglite
  "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);")
"${esb[@]}" src/main.ts --outfile="$srv/server.js"
"${esb[@]}" src/inference/session-worker.ts --outfile="$srv/session-worker.js"
# The launcher that sizes libuv's thread pool before the server loads, as `sightflow` does on any install.
cp bin/sightflow.cjs "$srv/sightflow.cjs"
# The server finds its root (models/, build/) by its package.json.
node -e "const p=require('./package.json'); console.log(JSON.stringify({name: p.name, version: p.version, type: 'module', private: true}))" > "$srv/package.json"
cp models/centernet-coco.json "$srv/models/"
uws=node_modules/@trufflesuite/uws-js-unofficial
cp "$uws/package.json" "$srv/node_modules/@trufflesuite/uws-js-unofficial/"
cp "$uws/binaries/uws_linux_x64_$(node -p process.versions.modules).node" "$srv/node_modules/@trufflesuite/uws-js-unofficial/binaries/"
cp -r node_modules/sharp node_modules/detect-libc node_modules/semver "$srv/node_modules/"
cp -r node_modules/@img/colour node_modules/@img/sharp-linux-x64 node_modules/@img/sharp-libvips-linux-x64 "$srv/node_modules/@img/"
(cd node_modules/@electric-sql/pglite && find . -type f ! -name '*.map' ! -name '*.tar.gz' ! -name '*.d.ts' ! -name '*.d.cts' \
  -exec cp --parents {} "$srv/node_modules/@electric-sql/pglite/" \;)
addon=build/Release/sightflow_novideo.node
[[ -f $addon ]] || { echo "stage-server.sh: no $addon (bash scripts/setup.d/20-native.sh builds it)" >&2; exit 1; }
cp "$addon" "$srv/build/Release/sightflow.node"
cp "$(ldconfig -p | awk '/libjpeg.so.62 .*x86-64/ {print $NF; exit}')" "$srv/build/Release/libjpeg.so.62"
cc -O2 -static -o "$out/post-clients" bench/peers/post-clients.c
npx tsx -e "
import sharp from 'sharp';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { evalDir } from './eval/dir.ts';
let photo = 'assets/astronaut.jpg';
try { const p = join(evalDir('detection_coco128'), 'images', '000000000094.jpg'); if (existsSync(p)) photo = p; } catch {}
void sharp(photo).resize(640, 480, { fit: 'fill' }).jpeg({ quality: 90 }).toFile('$out/photo.jpg');
"
