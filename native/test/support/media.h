// Test videos for the C++ tests, made with the ffmpeg CLI (lavfi testsrc) in a per-process temp dir.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace sightflow::testing {

inline const std::filesystem::path& media_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sightflow-native-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

// Runs `ffmpeg -v error -y <args> <out>` once per name; returns the file's path.
inline std::string make_media(const std::string& name, const std::string& args) {
  const std::filesystem::path out = media_dir() / name;
  if (!std::filesystem::exists(out)) {
    const std::string cmd = "ffmpeg -nostdin -v error -y " + args + " '" + out.string() + "'";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("ffmpeg failed: " + cmd);
  }
  return out.string();
}

// 10 s of 320x240 testsrc at 25 fps in H.264, key frame every 50 frames (no scene-cut key frames).
inline std::string h264_10s() {
  return make_media("h264_10s.mp4",
                    "-f lavfi -i testsrc=size=320x240:rate=25:duration=10 -c:v libx264 -preset ultrafast "
                    "-g 50 -keyint_min 50 -sc_threshold 0 -pix_fmt yuv420p");
}

struct MediaDirCleanup {
  ~MediaDirCleanup() {
    std::error_code ec;
    std::filesystem::remove_all(media_dir(), ec);
  }
};

}  // namespace sightflow::testing
