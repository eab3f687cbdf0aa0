#!/usr/bin/env bash
# Builds the FFmpeg the GPU check's camera rows carry (scripts/lib/stage-video.sh): Debian's own FFmpeg
# source (the release this machine's libavcodec59 comes from, so the libraries keep its sonames and symbol
# versions and the addon built against Debian's headers loads them), configured down to what a camera needs
# (H.264 and HEVC decoders and parsers, the MPEG-TS, MP4, Matroska, FLV, HLS and RTSP demuxers, the file,
# pipe, TCP, UDP, RTP and HTTP protocols, swscale) and NVDEC (the nvdec hwaccels and the cuvid decoders, on
# the headers of Debian's libffmpeg-nvenc-dev). Every external library is left out (--disable-autodetect), so
# the four shared libraries need nothing but libc and libm; NVDEC loads the driver's libcuda.so.1 and
# libnvcuvid.so.1 when it is asked for. Why not Debian's binaries themselves: with their shared-library
# closure they are too large to travel (docs/capacity.md, "The GPU check").
# Sources and build live under .dev/ffmpeg (git-ignored; nothing of FFmpeg is committed); a finished build
# is reused. Prints the folder holding the libraries.
#   bash scripts/lib/build-ffmpeg.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(dpkg-query -W -f '${Version}' libavcodec59 2>/dev/null || true)
[[ -n $version ]] || { echo "build-ffmpeg.sh: libavcodec59 is not installed (the addon's FFmpeg)" >&2; exit 1; }
root=$PWD/.dev/ffmpeg
prefix=$root/install-${version//[:~]/_}
if [[ -f $prefix/lib/libavcodec.so.59 ]]; then
  echo "$prefix/lib"
  exit 0
fi
# Without its assembly, software decoding would be slower than Debian's, and the check compares against it.
command -v nasm >/dev/null || { echo "build-ffmpeg.sh: nasm is missing (scripts/system-packages.txt)" >&2; exit 1; }
mkdir -p "$root/apt/lists/partial" "$root/apt/cache/archives/partial" "$root/src"
# Debian's source list beside the machine's own (which lists no deb-src), in a private apt state.
cat > "$root/apt/sources.list" <<'EOF'
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian-security bookworm-security main
deb-src http://deb.debian.org/debian bookworm-updates main
EOF
apt=(-o "Dir::Etc::SourceList=$root/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$root/apt/lists" -o "Dir::Cache=$root/apt/cache" -o Debug::NoLocking=1 -qq)
src=$root/src/ffmpeg-${version//[:~]/_}
if [[ ! -f $src/configure ]]; then
  apt-get "${apt[@]}" update >&2
  (cd "$root/src" && apt-get "${apt[@]}" source --download-only "ffmpeg=$version" >&2)
  dsc=$(ls "$root"/src/ffmpeg_*.dsc | head -1)
  rm -rf "$src" && dpkg-source --no-check -x "$dsc" "$src" >&2
fi
if [[ ! -f $root/nvenc/usr/include/ffnvcodec/dynlink_loader.h ]]; then
  (cd "$root/src" && apt-get -qq download libffmpeg-nvenc-dev >&2)
  dpkg-deb -x "$(ls "$root"/src/libffmpeg-nvenc-dev_*.deb | head -1)" "$root/nvenc"
fi
# The headers' pkg-config file names /usr; configure finds them through it.
mkdir -p "$root/pc"
sed "s|^prefix=.*|prefix=$root/nvenc/usr|" "$root/nvenc/usr/share/pkgconfig/ffnvcodec.pc" > "$root/pc/ffnvcodec.pc"
build=$root/build
rm -rf "$build" && mkdir -p "$build"
cd "$build"
PKG_CONFIG_PATH=$root/pc "$src/configure" --prefix="$prefix" --enable-shared --disable-static --enable-pic \
  --disable-programs --disable-doc --disable-autodetect --disable-everything \
  --disable-avdevice --disable-avfilter --disable-postproc --disable-swresample \
  --enable-ffnvcodec --enable-nvdec --enable-cuvid \
  --enable-hwaccel=h264_nvdec,hevc_nvdec --enable-decoder=h264,hevc,h264_cuvid,hevc_cuvid \
  --enable-parser=h264,hevc --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb,extract_extradata \
  --enable-demuxer=mov,mpegts,matroska,flv,hls,rtsp,sdp,rtp,h264,hevc \
  --enable-protocol=file,pipe,tcp,udp,rtp,http >&2
make -j"$(nproc)" >&2
make install >&2
echo "$prefix/lib"
