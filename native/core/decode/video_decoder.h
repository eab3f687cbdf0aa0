// FFmpeg video decoder with sampling, ranges and RGB24 output. One instance decodes one input; it is used
// by one thread at a time (the binding serialises calls), except abort(), which any thread may call.
// A live input (Info::live) is read by a thread of its own from open() on, so the source is never left
// waiting long on a slow caller: one sampled frame is kept for the caller, and the newest frame wins (the
// one not read is dropped, Stats::late_drops), except that a frame the source sent ahead of its time (a
// burst, such as an HLS segment) waits for the caller while the caller is less than a second behind real
// time, so a bursty source loses nothing to a caller that keeps up. Memory stays at two frames.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "decode/options.h"
#include "decode/sampler.h"

struct AVFormatContext;
struct AVIOContext;
struct AVDictionary;
struct AVCodec;
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
  // With options.resume (a file, the same options as the decode that made the cursor; max_frames the whole
  // task's): seeks back to the key frame the cursor names and decodes forward without emitting or counting up
  // to the cursor's frame, found by its pts (or, without pts, by its index re-anchored from the first packet's
  // dts after the seek); its pixels must hash to the cursor's, then the counters and sampler take the cursor's
  // state and next() goes on with the frame after it. When the seek lands wrong or the hash differs, it opens
  // the input again and replays the decode from the start without converting frames (every counter then is
  // the replay's own) up to the cursor's emitted frame; when even that frame differs, open fails with
  // "resume_mismatch", as it does at once for a cursor of other options or another source.
  bool open(const Options& options);

  // Files: what resuming after the last frame next() gave needs (see Cursor); false before the first frame
  // and for live inputs.
  bool cursor(Cursor* out) const {
    if (!cursor_valid_) return false;
    *out = cursor_;
    return true;
  }
  // The options and source facts that decide which frames come out and how they look (sampling, range, output
  // size, the source's size, rate and codec): a cursor is only good for a decoder with the same.
  uint64_t setup_hash() const { return setup_hash_; }

  // Decodes until the next sampled frame and writes it as RGB24 (out_width*out_height*3 bytes, rows
  // packed) into dst. Frame: dst and meta are filled. End: the input or the range is finished.
  // MaxFrames: max_frames frames were given and the source had another sampled frame. Error: error().
  // Live: waits for the next sampled frame the reading thread has not handed out yet.
  Status next(uint8_t* dst, FrameMeta* meta);

  // Thread-safe: makes a blocked read return within ~100 ms (FFmpeg polls the interrupt callback) and
  // every later call fail with code "aborted". Free with close() or the destructor.
  void abort();
  bool aborted() const { return aborted_.load(); }

  // Frees every FFmpeg object and closes the connection. Idempotent.
  void close();

  // Network (http, https) inputs then read every byte through `io` (the host fetches under its URL policy):
  // the input, ranged re-requests, and everything a demuxer opens (HLS playlists, segments, keys). Without it
  // they are refused. Set before open().
  void set_io(std::shared_ptr<GuardedIo> io) { io_ = std::move(io); }

  const Info& info() const { return info_; }
  // FFmpeg's get_format for the NVIDIA path (formats: the AVPixelFormat list the codec offers).
  static int pick_format(AVCodecContext* ctx, const int* formats);
  const Stats& stats() const { return live_ ? out_stats_ : stats_; }
  const Error& error() const { return live_ ? out_error_ : error_; }
  size_t frame_bytes() const { return static_cast<size_t>(info_.out_width) * info_.out_height * 3; }

 private:
  // Where a resume is (see open): finding the cursor's frame after a seek, or replaying from the start.
  enum class ResumePhase { None, Seek, Replay };

  static int interrupt_callback(void* opaque);
  bool open_input(const Options& options);
  uint64_t compute_setup_hash() const;
  bool resume();
  bool resume_by_seek();
  bool resume_by_replay();
  int find_resume_frame(bool has_pts, int64_t pts, double t, uint8_t* dst);
  void restore(const Cursor& c);
  void take_cursor(const uint8_t* frame, int64_t index, bool has_pts, int64_t pts, double t);
  bool count_read(int64_t dts);
  static int io_open(AVFormatContext* s, AVIOContext** pb, const char* url, int flags, AVDictionary** options);
  static int io_close2(AVFormatContext* s, AVIOContext* pb);
  void arm_deadline(int64_t timeout_ms);
  void disarm_deadline() { deadline_ns_.store(0); }
  bool fail(const char* code, const std::string& message);
  void free_av();
  Status decode_next(uint8_t* dst, FrameMeta* meta);
  Status take_live(uint8_t* dst, FrameMeta* meta);
  void live_loop();
  void stop_live();
  bool fail_av(const char* fallback_code, const char* what, int averr);
  bool select_stream();
  bool open_codec();
  void ask_hwaccel(const AVCodec* codec);
  void compute_info();
  void seek_to_range_start();
  // Returns 1 when the frame was emitted, 0 when skipped, -1 when decoding must stop (end_ set).
  int handle_frame(uint8_t* dst, FrameMeta* meta);
  bool convert(uint8_t* dst);
  bool convert_frame(AVFrame* frame, uint8_t* dst);
  void plan_skip();
  bool may_be_sampled(double t_prev, double t) const;
  double live_source_fps() const;
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
  AVFrame* sw_frame_ = nullptr;   // a hardware frame's pixels copied to memory (the NVIDIA decoder)
  bool hw_ = false;               // the codec was opened with the NVIDIA decoder
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

  // Live reading (see the class comment). The thread owns every FFmpeg object and stats_/error_ while it
  // runs; the caller sees out_stats_/out_error_, copied under live_mu_.
  bool live_ = false;
  int64_t live_max_frames_ = 0;   // the caller's cap (the thread itself reads on without one)
  int64_t last_frame_ns_ = 0;     // when the decoder last gave a frame: a stall is no frame for read_timeout_ms
  std::thread live_thread_;
  std::mutex live_mu_;
  std::condition_variable live_cv_;
  std::vector<uint8_t> live_staging_, live_slot_;
  FrameMeta live_meta_;
  bool live_has_frame_ = false;
  bool live_done_ = false;        // the thread stopped; live_status_ says why
  Status live_status_ = Status::End;
  int64_t live_taken_ = 0;
  Stats live_stats_, out_stats_;
  Error out_error_;
  std::atomic<bool> live_stop_{false};

  // Resume and cursors (files).
  ResumePhase resume_phase_ = ResumePhase::None;
  bool resume_missed_ = false;    // the cursor's frame did not come (or differed) where it was looked for
  Cursor cursor_;
  bool cursor_valid_ = false;
  uint64_t setup_hash_ = 0;
  int64_t last_key_ts_ = 0;       // stream ticks of the last key frame seen
  bool has_read_dts_ = false;
  int64_t read_dts_ = 0;          // dts of the last video packet read
  // Key-frame mode after a resume: packets up to the cursor's read_dts were counted by the decoder before.
  bool read_gate_ = false;
  int64_t read_gate_dts_ = 0;

  std::atomic<bool> aborted_{false};
  std::atomic<bool> timed_out_{false};
  std::atomic<int64_t> deadline_ns_{0};
};

}  // namespace sightflow::decode
