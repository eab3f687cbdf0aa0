#!/usr/bin/env bash
# Lays out BUNDLE/video for the GPU check's camera rows (bench/device/camera-rows.ts): the addon built with
# FFmpeg (build/Release/sightflow.node) and the libjpeg it links, the FFmpeg it loads (scripts/lib/build-ffmpeg.sh:
# Debian's source down to what a camera needs, NVDEC included; the host has no FFmpeg of its own), and the
# camera's clip: 4 s of 1080p H.264 at 25 fps in MPEG-TS (no B-frames, a key frame each second, 4 Mbit/s, as a
# camera sends), a COCO photo panned back and forth so the loop has no jump. Called by scripts/device-bundle.sh.
#   bash scripts/lib/stage-video.sh BUNDLE [--no-ffmpeg]
# --no-ffmpeg: no FFmpeg in video/ unless one is already built; the addon then loads the machine's own (the dry
# run here, which must not wait for a build).
set -euo pipefail
out=$(cd "${1:?usage: stage-video.sh BUNDLE [--no-ffmpeg]}" && pwd)
ffmpeg=1
[[ ${2:-} == --no-ffmpeg ]] && ffmpeg=0
cd "$(dirname "$0")/../.."
dir=$out/video
mkdir -p "$dir"
addon=build/Release/sightflow.node
[[ -f $addon ]] || { echo "stage-video.sh: no $addon (bash scripts/setup.d/20-native.sh builds it)" >&2; exit 1; }
cp "$addon" "$dir/sightflow.node"
cp "$(ldconfig -p | awk '/libjpeg.so.62 .*x86-64/ {print $NF; exit}')" "$dir/libjpeg.so.62"
libs=""
if [[ $ffmpeg == 1 ]]; then
  libs=$(bash scripts/lib/build-ffmpeg.sh)
else
  libs=$(ls -d .dev/ffmpeg/install-*/lib 2>/dev/null | head -1 || true)
  [[ -n $libs && -f $libs/libavcodec.so.59 ]] || libs=""
fi
if [[ -n $libs ]]; then
  for l in libavcodec.so.59 libavformat.so.59 libavutil.so.57 libswscale.so.6; do cp -L "$libs/$l" "$dir/"; done
  strip --strip-unneeded "$dir"/lib{avcodec,avformat,avutil,swscale}.so.*
fi
photo=assets/astronaut.jpg
p=$(npx tsx -e "import { join } from 'node:path'; import { evalDir } from './eval/dir.ts'; try { console.log(join(evalDir('detection_coco128'), 'images', '000000000094.jpg')); } catch { console.log(''); }" 2>/dev/null | tail -1)
[[ -n $p && -f $p ]] && photo=$p
ffmpeg -nostdin -v error -y -loop 1 -i "$photo" -t 4 -r 25 \
  -vf "scale=2400:1800,crop=1920:1080:x='240*(1-cos(2*PI*t/4))':y=360,format=yuv420p" \
  -c:v libx264 -preset veryfast -bf 0 -g 25 -keyint_min 25 -sc_threshold 0 -b:v 4M -maxrate 4M -bufsize 4M \
  -an -f mpegts "$dir/camera.ts"
