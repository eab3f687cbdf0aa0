// FFmpeg video decoder with sampling, ranges and RGB24 output. One instance decodes one input; it is used
// by one thread at a time (the binding serialises calls), except abort(), which any thread may call.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>

#include "decode/options.h"
#include "decode/sampler.h"

struct AVFormatContext;
struct AVIOContext;
struct AVDictionary;
struct AVCodecContext;
struct AVFrame;
struct AVPacket;
struct SwsContext;

namespace sightflow::decode {

class GuardedIo;

class VideoDecoder {
 public:
  VideoDecoder();
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  // Opens the input, finds the video stream, opens the codec and seeks to the range start.
  // false: error() says why and everything is already freed.
  bool open(const Options& options);

  // Decodes until the next sampled frame and writes it as RGB24 (out_width*out_height*3 bytes, rows
  // packed) into dst. Frame: dst and meta are filled. End: the input or the range is finished.
  // MaxFrames: max_frames frames were given and the source had another sampled frame. Error: error().
  Status next(uint8_t* dst, FrameMeta* meta);

  // Thread-safe: makes a blocked read return within ~100 ms (FFmpeg polls the interrupt callback) and
  // every later call fail with code "aborted". Free with close() or the destructor.
  void abort() { aborted_.store(true); }
  bool aborted() const { return aborted_.load(); }

  // Frees every FFmpeg object and closes the connection. Idempotent.
  void close();

  // Network (http, https) inputs then read every byte through `io` (the host fetches under its URL policy):
  // the input, ranged re-requests, and everything a demuxer opens (HLS playlists, segments, keys). Without it
  // they are refused. Set before open().
  void set_io(std::shared_ptr<GuardedIo> io) { io_ = std::move(io); }

  const Info& info() const { return info_; }
  const Stats& stats() const { return stats_; }
  const Error& error() const { return error_; }
  size_t frame_bytes() const { return static_cast<size_t>(info_.out_width) * info_.out_height * 3; }

 private:
  static int interrupt_callback(void* opaque);
  static int io_open(AVFormatContext* s, AVIOContext** pb, const char* url, int flags, AVDictionary** options);
  static int io_close2(AVFormatContext* s, AVIOContext* pb);
  void arm_deadline(int64_t timeout_ms);
  void disarm_deadline() { deadline_ns_.store(0); }
  bool fail(const char* code, const std::string& message);
  bool fail_av(const char* fallback_code, const char* what, int averr);
  bool select_stream();
  bool open_codec();
  void compute_info();
  void seek_to_range_start();
  // Returns 1 when the frame was emitted, 0 when skipped, -1 when decoding must stop (end_ set).
  int handle_frame(uint8_t* dst, FrameMeta* meta);
  bool convert(uint8_t* dst);
  void plan_skip();
  bool may_be_sampled(double t_prev, double t) const;
  void account_skipped_before(int64_t pts_limit);
  double frame_seconds(int64_t pts) const;

  Options opts_;
  Info info_;
  Stats stats_;
  Error error_;
  Sampler sampler_{SampleMode::Fps, 1.0};

  AVFormatContext* fmt_ = nullptr;
  AVCodecContext* codec_ = nullptr;
  AVFrame* frame_ = nullptr;
  AVPacket* packet_ = nullptr;
  SwsContext* sws_ = nullptr;
  int64_t sws_key_ = -1;          // source size/format/colour the swscale colour details were set for
  int stream_index_ = -1;
  double time_base_ = 0;          // seconds per pts tick
  int64_t start_pts_ = 0;         // pts of the stream start; times are relative to it
  bool start_pts_known_ = false;

  // Frame index bookkeeping: a counter while every frame since the stream start (or since the anchor
  // after a seek) went through the decoder; from pts*fps otherwise (key frames only).
  bool counting_ = true;
  bool need_anchor_ = false;
  int64_t anchor_dts_ = 0;        // dts of the first packet after a seek, for inputs without pts
  std::deque<int64_t> key_packet_dts_;  // key-frame mode, inputs without pts: dts of packets sent
  int64_t next_index_ = 0;
  // Skipping unsampled non-reference frames: pts of packets sent with skip allowed whose frame has not
  // come out yet (a frame that never comes out was skipped), and pts of recently sent packets.
  std::set<int64_t> skip_pending_;
  std::set<int64_t> recent_pts_;

  double range_start_s_ = 0, range_end_s_ = 0;  // seconds unit
  int64_t range_start_f_ = 0, range_end_f_ = 0; // frames unit
  bool origin_set_ = false;
  bool input_eof_ = false;
  bool ended_ = false;
  bool over_cap_ = false;         // max_frames given; looking ahead for one more sampled frame
  bool is_network_ = false;
  std::shared_ptr<GuardedIo> io_;
  AVIOContext* main_pb_ = nullptr;  // the input's AVIOContext when read through io_
  std::string final_url_;           // where the host's redirects ended (io_ inputs)

  std::atomic<bool> aborted_{false};
  std::atomic<bool> timed_out_{false};
  std::atomic<int64_t> deadline_ns_{0};
};

}  // namespace sightflow::decode
