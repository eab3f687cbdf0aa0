// Plain option and result structs of the decoder. The N-API binding fills Options on the JS thread
// (after checking every value); the core trusts them.
#pragma once
#include <cstdint>
#include <string>

namespace sightflow::decode {

enum class SampleMode { Fps, Interval, Keyframe };
enum class RangeUnit { Seconds, Frames };
// The NVIDIA decoder (NVDEC through FFmpeg's cuda hwaccel): None never asks; Auto and Cuda ask when the codec
// has one, and both fall back to software when the host has no CUDA device (Info says which path was taken).
enum class HwAccel { None, Auto, Cuda };

// What a decoder needs to continue exactly after one emitted frame of a file (VideoDecoder::cursor(), then
// Options::resume in a fresh decoder, on any machine): how to find that frame again (where to seek, and the
// frame's time or index), the state its sampler and counters had, and a hash of its output pixels that proves
// the frame found is the one emitted. Plain numbers, so the binding can hand it to JS as a JSON-able object.
struct Cursor {
  static constexpr int kVersion = 1;
  int version = kVersion;
  int64_t index = 0;                   // the frame's index
  int64_t pts_ms = 0;                  // its time (FrameMeta::pts_ms)
  bool has_pts = false;                // its packets carried presentation times: found again by pts, else by index
  int64_t pts = 0;                     // its presentation time in stream ticks (when has_pts)
  int64_t key_ts = 0;                  // stream ticks of the last key frame at or before it: a resume seeks there
  bool start_pts_known = false;
  int64_t start_pts = 0;               // stream ticks of the stream start, which times count from
  bool origin_set = false;             // the sampler's origin was fixed (frame ranges fix it at the first frame)
  double sampler_origin = 0;
  double sampler_next = 0;             // index of the sampler's next sample time
  bool has_read_dts = false;
  int64_t read_dts = 0;                // last packet read when it was emitted (key-frame mode counts packets)
  int64_t decoded_frames = 0, dropped_frames = 0, emitted_frames = 0, decode_failures = 0, skipped_decodes = 0;
  uint64_t setup_hash = 0;             // the options and source that shape frames and times (VideoDecoder::setup_hash)
  uint64_t frame_hash = 0;             // XXH64 of the frame's RGB24 output (frame_hash.h)
};

struct Options {
  std::string input;                   // file path or any URL FFmpeg's protocols open (http, https, rtsp, rtsps, pipe:)
  SampleMode mode = SampleMode::Fps;
  double value = 1.0;                  // fps: frames per second of video time; interval: seconds per frame
  bool has_start = false, has_end = false;
  double start = 0, end = 0;           // [start, end): seconds or frame indices per unit
  RangeUnit unit = RangeUnit::Seconds;
  int64_t max_frames = 3000;
  int threads = 0;                     // decoder threads; 0 lets FFmpeg pick one per core
  int out_width = 0, out_height = 0;   // 0 = source size (or derived from the other side)
  bool keep_aspect = true;             // fit inside out_width x out_height without distortion
  int64_t open_timeout_ms = 15000;     // open (connect, handshake, format probe)
  // Reading the stream information once the input opened; a live stream joined mid-way needs its next key
  // frame for that, a wait with data flowing. 0 = open_timeout_ms.
  int64_t probe_timeout_ms = 0;
  int64_t read_timeout_ms = 15000;     // each blocked read; for a live input also the longest gap between frames
  // Let the codec skip decoding frames that no sample needs and no other frame references (non-reference
  // B-frames); they are still counted as if decoded and dropped, so counts and indices do not change.
  bool skip_unsampled = true;
  HwAccel hwaccel = HwAccel::None;
  // Which CUDA device the NVIDIA decoder runs on (an ordinal of those CUDA shows the process).
  int hwaccel_device = 0;
  // Continue after the frame this cursor describes (files only): the frames after it, with the same indices,
  // times, pixels and counters as one decode from the start; max_frames still counts the whole task's frames
  // (the cursor carries those emitted so far). See VideoDecoder::open.
  bool has_resume = false;
  Cursor resume;
};

struct Info {
  int width = 0, height = 0;           // source frame size
  int out_width = 0, out_height = 0;   // size of every RGB24 frame this decoder outputs
  double fps = 0;                      // source frame rate (average); 0 when the container does not say
  int64_t total_frames = -1;           // -1 = unknown (piped or live input)
  int64_t duration_ms = -1;            // -1 = unknown
  bool seekable = false;
  std::string codec;
  std::string format;
  std::string final_url;               // the input, or for http(s) the URL after FFmpeg followed redirects
  // A source without an end known in advance: rtsp(s), or a network input with no length or duration (a
  // live HLS playlist, an endless MPEG-TS or FLV response). It is read in the background (see next()).
  bool live = false;
  // Where the frames are decoded: "cuda" (the NVIDIA decoder) or "software"; with hwaccel asked for and
  // software taken, hwaccel_fallback says why (no CUDA device, the codec has no NVIDIA decoder, ...).
  std::string hwaccel = "software";
  std::string hwaccel_fallback;
  int hwaccel_device = -1;  // the CUDA device decoding, with hwaccel "cuda"; -1 otherwise
  // With Options::resume: how the cursor's frame was found again, "seek" (from the key frame before it) or
  // "replay" (from the start, after the seek landed wrong); empty without resume.
  std::string resumed_by;
};

struct FrameMeta {
  int64_t index = 0;                   // 0-based index of the frame in the source stream, presentation order
  int64_t pts_ms = 0;                  // presentation time relative to the stream start
  bool keyframe = false;
  int64_t wall_ms = 0;                 // wall-clock time (unix epoch ms) the decoder received the frame
};

struct Stats {
  int64_t decoded_frames = 0;          // frames decoded inside the range (sampled or not)
  int64_t dropped_frames = 0;          // sampling skips inside the range plus decode failures
  int64_t emitted_frames = 0;
  int64_t decode_failures = 0;
  int64_t skipped_decodes = 0;         // frames counted but never decoded (see Options::skip_unsampled)
  int64_t late_drops = 0;              // live: sampled frames replaced by a newer one before they were read
};

// Why next() stopped giving frames.
enum class Status { Frame, End, MaxFrames, Error };

struct Error {
  std::string code;     // stable machine code: input_not_found, invalid_video, no_video_stream, ...
  std::string message;  // one sentence for people
};

}  // namespace sightflow::decode
