#include "decode/video_decoder.h"

#include "decode/frame_hash.h"
#include "decode/guarded_io.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

namespace sightflow::decode {
namespace {

// Half a millisecond of slack when comparing frame times with range bounds (time bases are rounded).
constexpr double kEpsilon = 1e-4;
// A corrupt header can claim any size; refuse what no real video uses before allocating for it.
constexpr int64_t kMaxPixels = 16384LL * 16384LL;
// Decode errors in a row after which the input is considered hopeless.
constexpr int kMaxConsecutiveErrors = 1000;
// Live: how far behind real time the caller may fall before a sampled frame it has not read yet is replaced
// by a newer one (the reading thread waits for it that long at most, so the source is never left longer).
constexpr int64_t kLiveMaxLagMs = 1000;
// Live: a frame this much later than the real-time reference means the source's clock jumped.
constexpr int64_t kLiveResetLagMs = 30000;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// double -> int64 without the undefined behaviour of an out-of-range cast (options and corrupt
// timestamps can be anything).
int64_t clamp_i64(double v) {
  if (!(v == v)) return 0;
  if (v >= 9.2e18) return static_cast<int64_t>(9.2e18);
  if (v <= -9.2e18) return static_cast<int64_t>(-9.2e18);
  return static_cast<int64_t>(v);
}

std::string av_error_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

bool frame_is_key(const AVFrame* f) {
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 29, 100)
  return (f->flags & AV_FRAME_FLAG_KEY) != 0;
#else
  return f->key_frame != 0;
#endif
}

bool is_network_url(const std::string& s) {
  const auto pos = s.find("://");
  if (pos == std::string::npos) return false;
  return s.compare(0, pos, "file") != 0;
}

bool is_http_url(const std::string& s) { return s.compare(0, 7, "http://") == 0 || s.compare(0, 8, "https://") == 0; }

int64_t dict_int(AVDictionary* d, const char* key, int64_t fallback) {
  const AVDictionaryEntry* e = d ? av_dict_get(d, key, nullptr, 0) : nullptr;
  return e && e->value ? std::strtoll(e->value, nullptr, 10) : fallback;
}
bool is_rtsp_url(const std::string& s) { return s.compare(0, 7, "rtsp://") == 0 || s.compare(0, 8, "rtsps://") == 0; }

}  // namespace

VideoDecoder::VideoDecoder() = default;
VideoDecoder::~VideoDecoder() { close(); }

int VideoDecoder::interrupt_callback(void* opaque) {
  auto* self = static_cast<VideoDecoder*>(opaque);
  if (self->aborted_.load() || self->live_stop_.load()) return 1;
  // The host refused a URL (policy) or the source broke a limit: stop now rather than let a demuxer skip it.
  if (self->io_ && self->io_->fatal()) return 1;
  const int64_t deadline = self->deadline_ns_.load();
  if (deadline != 0 && now_ns() > deadline) {
    self->timed_out_.store(true);
    return 1;
  }
  return 0;
}

void VideoDecoder::arm_deadline(int64_t timeout_ms) {
  // timed_out_ stays set once it fired: FFmpeg's I/O error is sticky and a demuxer may first hand out
  // the packets it still buffered, so the failing read can be a later one.
  deadline_ns_.store(timeout_ms > 0 ? now_ns() + timeout_ms * 1000000 : 0);
}

bool VideoDecoder::fail(const char* code, const std::string& message) {
  error_ = Error{code, message};
  ended_ = true;
  free_av();
  return false;
}

void VideoDecoder::abort() {
  aborted_.store(true);
  // Under the lock, so a caller between its check and its wait cannot miss the wake-up.
  std::lock_guard<std::mutex> lock(live_mu_);
  live_cv_.notify_all();
}

bool VideoDecoder::fail_av(const char* fallback_code, const char* what, int averr) {
  if (aborted_.load()) return fail("aborted", "Decoding was aborted");
  if (timed_out_.load() || averr == AVERROR(ETIMEDOUT)) {
    return fail("timeout", std::string("No data arrived within the time limit while ") + what);
  }
  if (io_) {
    const Error why = io_->failure();
    if (!why.code.empty()) return fail(why.code.c_str(), why.message);
  }
  if (averr == AVERROR(ENOENT)) return fail("input_not_found", "The video input does not exist");
  if (averr == AVERROR_HTTP_NOT_FOUND || averr == AVERROR_HTTP_FORBIDDEN || averr == AVERROR_HTTP_UNAUTHORIZED ||
      averr == AVERROR_HTTP_BAD_REQUEST || averr == AVERROR_HTTP_OTHER_4XX || averr == AVERROR_HTTP_SERVER_ERROR) {
    return fail("fetch_failed", std::string("The video URL could not be fetched: ") + av_error_text(averr));
  }
  if (is_network_ && averr != AVERROR_INVALIDDATA) {
    return fail("fetch_failed", std::string("The video URL could not be fetched while ") + what + ": " + av_error_text(averr));
  }
  return fail(fallback_code, std::string("The video could not be decoded while ") + what + ": " + av_error_text(averr));
}

bool VideoDecoder::open(const Options& options) {
  if (!open_input(options)) return false;
  return !opts_.has_resume || resume();
}

bool VideoDecoder::open_input(const Options& options) {
  close();
  opts_ = options;
  resume_phase_ = ResumePhase::None;
  resume_missed_ = false;
  cursor_valid_ = false;
  last_key_ts_ = 0;
  has_read_dts_ = false;
  read_gate_ = false;
  live_ = false;
  live_has_frame_ = false;
  live_done_ = false;
  live_taken_ = 0;
  live_stats_ = out_stats_ = Stats{};
  out_error_ = Error{};
  live_stop_.store(false);
  info_ = Info{};
  stats_ = Stats{};
  error_ = Error{};
  ended_ = false;
  input_eof_ = false;
  over_cap_ = false;
  origin_set_ = false;
  need_anchor_ = false;
  anchor_dts_ = AV_NOPTS_VALUE;
  key_packet_dts_.clear();
  skip_pending_.clear();
  recent_pts_.clear();
  next_index_ = 0;
  start_pts_known_ = false;
  timed_out_.store(false);
  is_network_ = is_network_url(opts_.input);
  if (aborted_.load()) return fail("aborted", "Decoding was aborted");

  if (!is_network_ && opts_.input.compare(0, 5, "pipe:") != 0) {
    const std::string path = opts_.input.compare(0, 5, "file:") == 0 ? opts_.input.substr(5) : opts_.input;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return fail("input_not_found", "The video file does not exist: " + path);
    if (S_ISDIR(st.st_mode)) return fail("invalid_video", "The video input is a directory: " + path);
    if (S_ISREG(st.st_mode) && st.st_size == 0) return fail("empty_input", "The video file is empty (0 bytes)");
  }

  fmt_ = avformat_alloc_context();
  if (!fmt_) return fail("out_of_memory", "Could not allocate the demuxer");
  fmt_->interrupt_callback.callback = &VideoDecoder::interrupt_callback;
  fmt_->interrupt_callback.opaque = this;

  AVDictionary* dict = nullptr;
  std::string url = opts_.input;
  const bool guarded = is_network_ && is_http_url(opts_.input);
  if (guarded) {
    if (!io_) return fail("fetch_failed", "Network inputs are read only through the guarded network path");
    // Every byte comes from the host: the input here, and whatever a demuxer opens through io_open.
    io_->set_interrupt([this] { return interrupt_callback(this) != 0; });
    NetHead head;
    arm_deadline(opts_.open_timeout_ms);
    const int got = io_->open(opts_.input, 0, -1, &main_pb_, &head);
    if (got < 0) return fail_av("fetch_failed", "opening it", got);
    final_url_ = head.final_url.empty() ? opts_.input : head.final_url;
    url = final_url_;  // relative playlist entries resolve against where the redirects ended
    fmt_->pb = main_pb_;
    fmt_->flags |= AVFMT_FLAG_CUSTOM_IO;
    fmt_->opaque = this;
    fmt_->io_open = &VideoDecoder::io_open;
    fmt_->io_close2 = &VideoDecoder::io_close2;
    // FFmpeg opens nothing by itself: no protocol has this name, and nested demuxers inherit the list.
    av_dict_set(&dict, "protocol_whitelist", "sightflow-host", 0);
    // HLS would reuse its connection through FFmpeg's own http protocol; every request goes to the host instead.
    av_dict_set(&dict, "http_persistent", "0", 0);
    av_dict_set(&dict, "http_multiple", "0", 0);
  }
  // Nested inputs (an HLS playlist, a concat list) inherit this list, so a URL cannot make us read local
  // files and a staged local file cannot make us fetch URLs.
  const bool is_pipe = opts_.input.compare(0, 5, "pipe:") == 0;
  if (!guarded) av_dict_set(&dict, "protocol_whitelist", is_network_ ? "rtsp,tcp" : is_pipe ? "pipe" : "file", 0);
  if (is_network_ && !guarded) {
    // RTSP, the one other network input (the caller points it at a relay that connects only to a checked
    // address): interleaved over that one TCP connection, so no UDP port takes packets from anyone.
    av_dict_set(&dict, "user_agent", "sightflow", 0);
    av_dict_set(&dict, "rtsp_transport", "tcp", 0);
    // A second guard behind the interrupt callback: the socket layer's own timeout (microseconds), a
    // little longer than both deadlines so the callback's deadline decides (a socket timeout inside the
    // RTSP handshake surfaces as "invalid data", which would hide that the server was silent).
    const int64_t guard_ms = std::max({opts_.read_timeout_ms, opts_.open_timeout_ms, opts_.probe_timeout_ms});
    if (guard_ms > 0) av_dict_set_int(&dict, "timeout", (guard_ms + 1000) * 1000, 0);
  }
  if (is_network_) {
    // A live source is probed from what arrives in real time: FFmpeg's default of 5 s would be 5 s of
    // delay (and of buffered packets) before the first frame. Finished files have their headers first.
    fmt_->max_analyze_duration = 2 * AV_TIME_BASE;
  }
  arm_deadline(opts_.open_timeout_ms);
  int ret = avformat_open_input(&fmt_, url.c_str(), nullptr, &dict);
  av_dict_free(&dict);
  if (ret < 0) {
    fmt_ = nullptr;  // freed by avformat_open_input on failure
    return fail_av("invalid_video", "opening it", ret);
  }
  if (opts_.probe_timeout_ms > 0) arm_deadline(opts_.probe_timeout_ms);
  ret = avformat_find_stream_info(fmt_, nullptr);
  if (ret < 0) return fail_av("invalid_video", "reading its stream information", ret);
  if (!select_stream()) return false;
  if (!open_codec()) return false;
  compute_info();
  if (info_.out_width <= 0 || info_.out_height <= 0) {
    // The probe stops at the deadline with what it has; a live stream that sent no key frame by then has no
    // frame size yet, which is a timeout (worth reopening), not a broken video.
    if (timed_out_.load()) return fail("timeout", "The source sent no decodable picture within the time limit while opening it");
    return fail("invalid_video", "The video has no frame size");
  }

  if (opts_.unit == RangeUnit::Seconds) {
    range_start_s_ = opts_.has_start ? opts_.start : 0;
    range_end_s_ = opts_.has_end ? opts_.end : std::numeric_limits<double>::infinity();
    // Seconds ranges anchor the sample times at the range start; frame ranges at the first frame in it.
    sampler_ = Sampler(opts_.mode, opts_.value, live_source_fps());
    sampler_.set_origin(range_start_s_);
    origin_set_ = true;
  } else {
    range_start_f_ = opts_.has_start ? clamp_i64(std::ceil(opts_.start)) : 0;
    range_end_f_ = opts_.has_end ? clamp_i64(std::ceil(opts_.end)) : std::numeric_limits<int64_t>::max();
    sampler_ = Sampler(opts_.mode, opts_.value, live_source_fps());
  }
  setup_hash_ = compute_setup_hash();
  if (opts_.has_resume && info_.live) {
    return fail("resume_mismatch", "A live input cannot be resumed from a cursor: it has no earlier frames to go back to");
  }
  seek_to_range_start();
  disarm_deadline();
  if (aborted_.load()) return fail("aborted", "Decoding was aborted");
  last_frame_ns_ = now_ns();
  if (info_.live) {
    live_ = true;
    live_max_frames_ = opts_.max_frames;
    opts_.max_frames = std::numeric_limits<int64_t>::max();
    live_staging_.assign(frame_bytes(), 0);
    live_slot_.assign(frame_bytes(), 0);
    live_thread_ = std::thread(&VideoDecoder::live_loop, this);
  }
  return true;
}

uint64_t VideoDecoder::compute_setup_hash() const {
  std::string key;
  const auto put = [&key](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<int>(opts_.mode));
  put(opts_.mode == SampleMode::Keyframe ? 0.0 : opts_.value);
  put(static_cast<int>(opts_.unit));
  put(opts_.has_start);
  put(opts_.has_start ? opts_.start : 0.0);
  put(opts_.has_end);
  put(opts_.has_end ? opts_.end : 0.0);
  put(info_.out_width);
  put(info_.out_height);
  put(info_.width);
  put(info_.height);
  put(info_.fps);
  key += info_.codec;
  return frame_hash(reinterpret_cast<const uint8_t*>(key.data()), key.size());
}

bool VideoDecoder::resume() {
  const Cursor& c = opts_.resume;
  if (c.version != Cursor::kVersion) {
    return fail("resume_mismatch", "The resume cursor has version " + std::to_string(c.version) + "; this decoder reads version " +
                                       std::to_string(Cursor::kVersion));
  }
  if (c.setup_hash != setup_hash_) {
    return fail("resume_mismatch", "The resume cursor was made by a decoder with other sampling, range or output size, or of another video");
  }
  if (c.emitted_frames < 1 || c.emitted_frames > opts_.max_frames) {
    return fail("resume_mismatch", "The resume cursor counts " + std::to_string(c.emitted_frames) +
                                       " emitted frames, outside 1..max_frames (" + std::to_string(opts_.max_frames) + ")");
  }
  if (info_.seekable && resume_by_seek()) {
    info_.resumed_by = "seek";
    return true;
  }
  if (aborted_.load()) return fail("aborted", "Decoding was aborted");
  // The seek landed where the frame is not (or not the same): the slow way, exact by construction.
  const Options again = opts_;
  if (!open_input(again)) return false;
  if (resume_by_replay()) {
    info_.resumed_by = "replay";
    return true;
  }
  if (aborted_.load()) return fail("aborted", "Decoding was aborted");
  if (error_.code == "timeout") return false;
  const std::string why = error_.code.empty() ? "" : " (" + error_.message + ")";
  return fail("resume_mismatch", "The frame the resume cursor names (index " + std::to_string(c.index) + " at " +
                                     std::to_string(c.pts_ms) + " ms) is not in this video as it was decoded before" + why);
}

bool VideoDecoder::resume_by_seek() {
  const Cursor& c = opts_.resume;
  if (c.start_pts_known) {
    start_pts_ = c.start_pts;
    start_pts_known_ = true;
  }
  arm_deadline(opts_.read_timeout_ms);
  const int ret = av_seek_frame(fmt_, stream_index_, c.key_ts, AVSEEK_FLAG_BACKWARD);
  disarm_deadline();
  if (ret < 0) return false;
  avcodec_flush_buffers(codec_);
  need_anchor_ = true;
  anchor_dts_ = AV_NOPTS_VALUE;
  key_packet_dts_.clear();
  skip_pending_.clear();
  recent_pts_.clear();
  input_eof_ = false;
  ended_ = false;
  resume_phase_ = ResumePhase::Seek;
  resume_missed_ = false;
  // Key-frame mode counts skipped packets as it reads them, ahead of the frames by the codec's delay, which
  // the thread count sets: those past what the cursor's decoder had read count from here on, also while the
  // frame is looked for.
  read_gate_ = opts_.mode == SampleMode::Keyframe && c.has_read_dts;
  read_gate_dts_ = c.read_dts;
  std::vector<uint8_t> frame(frame_bytes());
  FrameMeta meta;
  const Status s = decode_next(frame.data(), &meta);
  resume_phase_ = ResumePhase::None;
  return s == Status::Frame;
}

bool VideoDecoder::resume_by_replay() {
  resume_phase_ = ResumePhase::Replay;
  resume_missed_ = false;
  std::vector<uint8_t> frame(frame_bytes());
  FrameMeta meta;
  const Status s = decode_next(frame.data(), &meta);
  resume_phase_ = ResumePhase::None;
  return s == Status::Frame;
}

// After the seek of a resume, nothing is counted or emitted until the cursor's frame: 1 once it was found
// (and the state restored), 0 for a frame before it, -1 when it was passed or differs.
int VideoDecoder::find_resume_frame(bool has_pts, int64_t pts, double t, uint8_t* dst) {
  const Cursor& c = opts_.resume;
  bool at, past;
  if (c.has_pts) {
    // Pts identify the frame whatever the rate; frames before the key frame (an open GOP's leading ones) or
    // without a pts have lower or no place and are passed over.
    if (!has_pts) return 0;
    at = pts == c.pts;
    past = pts > c.pts;
  } else {
    // Without pts, the index is re-anchored from the first packet's dts after the seek, as after a range seek.
    const bool from_time = (need_anchor_ || opts_.mode == SampleMode::Keyframe) && info_.fps > 0;
    const int64_t index = from_time ? clamp_i64(std::round(t * info_.fps)) : next_index_;
    need_anchor_ = false;
    next_index_ = index + 1;
    at = index == c.index;
    past = index > c.index;
  }
  if (!at && !past) return 0;
  if (at && clamp_i64(std::round(t * 1000)) == c.pts_ms && convert(dst) && frame_hash(dst, frame_bytes()) == c.frame_hash) {
    restore(c);
    return 1;
  }
  resume_missed_ = true;
  ended_ = true;
  return -1;
}

void VideoDecoder::restore(const Cursor& c) {
  next_index_ = c.index + 1;
  need_anchor_ = false;
  if (c.start_pts_known) {
    start_pts_ = c.start_pts;
    start_pts_known_ = true;
  }
  sampler_.restore(c.sampler_origin, c.sampler_next);
  origin_set_ = c.origin_set;
  // Before the frame was found, only key-frame mode's packets read past the cursor's were counted (see
  // count_read): they come on top of the cursor's counts.
  const int64_t read_ahead = stats_.dropped_frames;
  stats_ = Stats{};
  stats_.decoded_frames = c.decoded_frames;
  stats_.dropped_frames = c.dropped_frames + read_ahead;
  stats_.emitted_frames = c.emitted_frames;
  stats_.decode_failures = c.decode_failures;
  stats_.skipped_decodes = c.skipped_decodes;
  last_key_ts_ = c.key_ts;
  cursor_ = c;
  cursor_valid_ = true;
}

void VideoDecoder::take_cursor(const uint8_t* frame, int64_t index, bool has_pts, int64_t pts, double t) {
  Cursor c;
  c.index = index;
  c.pts_ms = clamp_i64(std::round(t * 1000));
  c.has_pts = has_pts;
  c.pts = has_pts ? pts : 0;
  c.key_ts = last_key_ts_;
  c.start_pts_known = start_pts_known_;
  c.start_pts = start_pts_;
  c.origin_set = origin_set_;
  c.sampler_origin = sampler_.origin();
  c.sampler_next = sampler_.next();
  c.has_read_dts = has_read_dts_;
  c.read_dts = read_dts_;
  c.decoded_frames = stats_.decoded_frames;
  c.dropped_frames = stats_.dropped_frames;
  c.emitted_frames = stats_.emitted_frames;
  c.decode_failures = stats_.decode_failures;
  c.skipped_decodes = stats_.skipped_decodes;
  c.setup_hash = setup_hash_;
  c.frame_hash = frame_hash(frame, frame_bytes());
  cursor_ = c;
  cursor_valid_ = true;
}

// Whether a packet read now is counted (key-frame mode's skipped packets): after a resume's seek, only those
// past what the cursor's decoder had read.
bool VideoDecoder::count_read(int64_t dts) {
  if (!read_gate_) return resume_phase_ != ResumePhase::Seek;
  if (dts == AV_NOPTS_VALUE || dts <= read_gate_dts_) return false;
  read_gate_ = false;
  return true;
}

bool VideoDecoder::select_stream() {
  int best = av_find_best_stream(fmt_, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  // Cover art in audio files is a one-picture "video" stream; it is not a video.
  if (best >= 0 && (fmt_->streams[best]->disposition & AV_DISPOSITION_ATTACHED_PIC)) best = -1;
  if (best < 0) {
    for (unsigned i = 0; i < fmt_->nb_streams; ++i) {
      const AVStream* s = fmt_->streams[i];
      if (s->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(s->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
        best = static_cast<int>(i);
        break;
      }
    }
  }
  if (best < 0) return fail("no_video_stream", "The input has no video stream (audio-only or not a video)");
  stream_index_ = best;
  // The demuxer then skips other streams' packets instead of handing them to us.
  for (unsigned i = 0; i < fmt_->nb_streams; ++i) {
    if (static_cast<int>(i) != best) fmt_->streams[i]->discard = AVDISCARD_ALL;
  }
  return true;
}

namespace {

// One CUDA device context per device for the process, made on first use and shared by every decoder on
// that device (each would otherwise create a CUDA context of its own, costly in time and device memory); a
// failure is remembered, so a host without a GPU tries once.
struct CudaDevice {
  AVBufferRef* ctx = nullptr;
  bool tried = false;
  std::string error;
};
std::mutex g_cuda_mu;
std::map<int, CudaDevice> g_cuda_devices;

AVBufferRef* cuda_device(int index, std::string* why) {
  std::lock_guard<std::mutex> lock(g_cuda_mu);
  CudaDevice& d = g_cuda_devices[index];
  if (!d.tried) {
    d.tried = true;
    const std::string name = std::to_string(index);
    const int r = av_hwdevice_ctx_create(&d.ctx, AV_HWDEVICE_TYPE_CUDA, name.c_str(), nullptr, 0);
    if (r < 0) {
      char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
      av_strerror(r, buf, sizeof buf);
      d.error = "no CUDA device " + name + " (" + buf + ")";
      d.ctx = nullptr;
    }
  }
  if (!d.ctx) {
    *why = d.error;
    return nullptr;
  }
  return av_buffer_ref(d.ctx);
}

AVPixelFormat get_format(AVCodecContext* ctx, const AVPixelFormat* formats) {
  static_assert(sizeof(AVPixelFormat) == sizeof(int), "AVPixelFormat is an int");
  return static_cast<AVPixelFormat>(VideoDecoder::pick_format(ctx, reinterpret_cast<const int*>(formats)));
}

}  // namespace

// The hardware path when the decoder offers it, else the software format FFmpeg listed first (so a stream
// the NVIDIA decoder turns down mid-way, say a profile it lacks, goes on in software).
int VideoDecoder::pick_format(AVCodecContext* ctx, const int* formats) {
  auto* self = static_cast<VideoDecoder*>(ctx->opaque);
  for (const int* f = formats; *f != AV_PIX_FMT_NONE; ++f) {
    if (*f == AV_PIX_FMT_CUDA) return *f;
  }
  for (const int* f = formats; *f != AV_PIX_FMT_NONE; ++f) {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(*f));
    if (d && !(d->flags & AV_PIX_FMT_FLAG_HWACCEL)) {
      if (self && self->hw_) {
        self->hw_ = false;
        self->info_.hwaccel = "software";
        self->info_.hwaccel_device = -1;
        self->info_.hwaccel_fallback = "the NVIDIA decoder does not take this stream";
      }
      return *f;
    }
  }
  return AV_PIX_FMT_NONE;
}

void VideoDecoder::ask_hwaccel(const AVCodec* codec) {
  bool offered = false;
  for (int i = 0;; ++i) {
    const AVCodecHWConfig* c = avcodec_get_hw_config(codec, i);
    if (!c) break;
    if ((c->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) && c->device_type == AV_HWDEVICE_TYPE_CUDA) offered = true;
  }
  if (!offered) {
    info_.hwaccel_fallback = std::string("the ") + codec->name + " decoder has no NVIDIA path";
    return;
  }
  std::string why;
  AVBufferRef* device = cuda_device(opts_.hwaccel_device, &why);
  if (!device) {
    info_.hwaccel_fallback = why;
    return;
  }
  codec_->hw_device_ctx = device;
  codec_->opaque = this;
  codec_->get_format = get_format;
  // The hardware decodes one frame at a time in order; frame threads would only hold surfaces.
  codec_->thread_count = 1;
  hw_ = true;
  info_.hwaccel = "cuda";
  info_.hwaccel_device = opts_.hwaccel_device;
}

bool VideoDecoder::open_codec() {
  AVStream* st = fmt_->streams[stream_index_];
  const AVCodec* codec = avcodec_find_decoder(st->codecpar->codec_id);
  if (!codec) {
    return fail("unsupported_codec", std::string("No decoder for the video codec ") + avcodec_get_name(st->codecpar->codec_id));
  }
  const int64_t pixels = static_cast<int64_t>(st->codecpar->width) * st->codecpar->height;
  if (st->codecpar->width < 0 || st->codecpar->height < 0 || pixels > kMaxPixels) {
    return fail("invalid_video", "The video frame size is not plausible");
  }
  codec_ = avcodec_alloc_context3(codec);
  if (!codec_) return fail("out_of_memory", "Could not allocate the decoder");
  int ret = avcodec_parameters_to_context(codec_, st->codecpar);
  if (ret < 0) return fail_av("invalid_video", "reading its codec parameters", ret);
  codec_->pkt_timebase = st->time_base;
  codec_->thread_count = opts_.threads > 0 ? opts_.threads : 0;
  codec_->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  info_.hwaccel = "software";
  info_.hwaccel_device = -1;
  info_.hwaccel_fallback.clear();
  if (opts_.hwaccel != HwAccel::None) ask_hwaccel(codec);
  ret = avcodec_open2(codec_, codec, nullptr);
  if (ret < 0 && hw_) {
    // The hardware path would not open: the same codec in software.
    char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
    av_strerror(ret, buf, sizeof buf);
    avcodec_free_context(&codec_);
    hw_ = false;
    codec_ = avcodec_alloc_context3(codec);
    if (!codec_) return fail("out_of_memory", "Could not allocate the decoder");
    ret = avcodec_parameters_to_context(codec_, st->codecpar);
    if (ret < 0) return fail_av("invalid_video", "reading its codec parameters", ret);
    codec_->pkt_timebase = st->time_base;
    codec_->thread_count = opts_.threads > 0 ? opts_.threads : 0;
    codec_->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    info_.hwaccel = "software";
    info_.hwaccel_device = -1;
    info_.hwaccel_fallback = std::string("the NVIDIA decoder would not open (") + buf + ")";
    ret = avcodec_open2(codec_, codec, nullptr);
  }
  if (ret < 0) return fail_av("unsupported_codec", "opening the decoder", ret);
  frame_ = av_frame_alloc();
  sw_frame_ = av_frame_alloc();
  if (!sw_frame_) return fail("out_of_memory", "Could not allocate frames");
  packet_ = av_packet_alloc();
  if (!frame_ || !packet_) return fail("out_of_memory", "Could not allocate frames");
  return true;
}

void VideoDecoder::compute_info() {
  AVStream* st = fmt_->streams[stream_index_];
  time_base_ = av_q2d(st->time_base);
  if (st->start_time != AV_NOPTS_VALUE) {
    start_pts_ = st->start_time;
    start_pts_known_ = true;
  }
  AVRational rate = st->avg_frame_rate;
  if (rate.num <= 0 || rate.den <= 0) rate = st->r_frame_rate;
  info_.fps = (rate.num > 0 && rate.den > 0) ? av_q2d(rate) : 0;
  // A broken header can claim a frame rate no camera has; treat it as unknown.
  if (!(info_.fps > 0 && info_.fps < 10000)) info_.fps = 0;
  info_.width = codec_->width;
  info_.height = codec_->height;
  info_.codec = codec_->codec ? codec_->codec->name : "";
  info_.format = fmt_->iformat ? fmt_->iformat->name : "";
  info_.seekable = fmt_->pb && (fmt_->pb->seekable & AVIO_SEEKABLE_NORMAL);
  info_.final_url = main_pb_ ? final_url_ : opts_.input;
  if (is_network_ && fmt_->pb && !main_pb_) {
    // FFmpeg follows HTTP redirects itself; the URL it ended up at is the HTTP context's "location".
    uint8_t* location = nullptr;
    if (av_opt_get(fmt_->pb, "location", AV_OPT_SEARCH_CHILDREN, &location) >= 0 && location && *location) {
      info_.final_url = reinterpret_cast<char*>(location);
    }
    av_free(location);
  }

  double duration_s = -1;
  if (st->duration != AV_NOPTS_VALUE && st->duration > 0) duration_s = st->duration * time_base_;
  else if (fmt_->duration != AV_NOPTS_VALUE && fmt_->duration > 0) duration_s = static_cast<double>(fmt_->duration) / AV_TIME_BASE;
  // A piped or live input has no trustworthy length even when a header guesses one.
  if (!info_.seekable) duration_s = -1;
  info_.duration_ms = duration_s >= 0 ? clamp_i64(std::round(duration_s * 1000)) : -1;
  if (info_.seekable && st->nb_frames > 0) info_.total_frames = st->nb_frames;
  else if (duration_s > 0 && info_.fps > 0) info_.total_frames = clamp_i64(std::round(duration_s * info_.fps));
  else info_.total_frames = -1;
  info_.live = is_network_ && (is_rtsp_url(opts_.input) || !info_.seekable || info_.duration_ms < 0);
  if (info_.live) info_.total_frames = -1;

  // Output size: the source size, or the requested box (fitted when keep_aspect).
  int w = info_.width, h = info_.height;
  const int rw = opts_.out_width, rh = opts_.out_height;
  if (w > 0 && h > 0 && (rw > 0 || rh > 0)) {
    if (!opts_.keep_aspect) {
      w = rw > 0 ? rw : w;
      h = rh > 0 ? rh : h;
    } else {
      double scale;
      if (rw > 0 && rh > 0) scale = std::min(static_cast<double>(rw) / w, static_cast<double>(rh) / h);
      else if (rw > 0) scale = static_cast<double>(rw) / w;
      else scale = static_cast<double>(rh) / h;
      const int nw = static_cast<int>(std::lround(w * scale)), nh = static_cast<int>(std::lround(h * scale));
      w = std::max(1, rw > 0 ? std::min(nw, rw) : nw);
      h = std::max(1, rh > 0 ? std::min(nh, rh) : nh);
    }
  }
  info_.out_width = w;
  info_.out_height = h;
}

void VideoDecoder::seek_to_range_start() {
  double start_s = 0;
  if (opts_.unit == RangeUnit::Seconds) start_s = range_start_s_;
  else if (info_.fps > 0) start_s = (static_cast<double>(range_start_f_) - 0.5) / info_.fps;
  if (start_s <= 0 || !info_.seekable) return;
  // Land on the nearest key frame at or before the start; the frames between it and the start are
  // decoded (they are needed as references) but neither counted nor emitted.
  const double target_s = start_s - 0.001;
  const int64_t target = clamp_i64((start_pts_known_ ? static_cast<double>(start_pts_) : 0.0) + std::floor(target_s / time_base_));
  if (av_seek_frame(fmt_, stream_index_, target, AVSEEK_FLAG_BACKWARD) >= 0) {
    avcodec_flush_buffers(codec_);
    need_anchor_ = true;
  }
}

int VideoDecoder::io_open(AVFormatContext* s, AVIOContext** pb, const char* url, int flags, AVDictionary** options) {
  // Nested contexts share the outer context's opaque.
  auto* self = static_cast<VideoDecoder*>(s->opaque);
  if (!self || !self->io_ || (flags & AVIO_FLAG_WRITE)) return AVERROR(EPERM);
  // HLS byte-range segments come as offset/end_offset options; the host asks for that range.
  AVDictionary* o = options ? *options : nullptr;
  return self->io_->open(url, dict_int(o, "offset", 0), dict_int(o, "end_offset", -1), pb);
}

int VideoDecoder::io_close2(AVFormatContext* s, AVIOContext* pb) {
  auto* self = static_cast<VideoDecoder*>(s->opaque);
  if (self && self->io_) self->io_->close(pb);
  return 0;
}

double VideoDecoder::frame_seconds(int64_t pts) const {
  return (static_cast<double>(pts) - static_cast<double>(start_pts_)) * time_base_;
}

int VideoDecoder::handle_frame(uint8_t* dst, FrameMeta* meta) {
  // Containers without presentation times (AVI, raw streams) leave frame->pts unset; FFmpeg's guess
  // (best_effort_timestamp) then comes from the dts of a later packet and runs late by the reorder delay,
  // and badly so when only key packets are fed. Constant-rate timing is better there: the key packet's
  // own dts for key-frame mode and the first frame after a seek, the frame counter otherwise.
  const bool has_pts = frame_->pts != AV_NOPTS_VALUE;
  if (has_pts && !skip_pending_.empty()) {
    // Frames come out in presentation order: a pending pts below this one was skipped by the codec.
    account_skipped_before(frame_->pts);
    skip_pending_.erase(frame_->pts);
  }
  int64_t pts = AV_NOPTS_VALUE;
  bool counter_time = false;
  if (has_pts) {
    pts = frame_->best_effort_timestamp != AV_NOPTS_VALUE ? frame_->best_effort_timestamp : frame_->pts;
  } else if (opts_.mode == SampleMode::Keyframe && !key_packet_dts_.empty()) {
    pts = key_packet_dts_.front();
    key_packet_dts_.pop_front();
  } else if (need_anchor_ && anchor_dts_ != AV_NOPTS_VALUE) {
    pts = anchor_dts_;
  } else if (!need_anchor_ && opts_.mode != SampleMode::Keyframe && info_.fps > 0) {
    counter_time = true;
  } else {
    pts = frame_->best_effort_timestamp;
  }
  double t;
  if (counter_time || pts == AV_NOPTS_VALUE) {
    t = info_.fps > 0 ? static_cast<double>(next_index_) / info_.fps : 0;
  } else {
    if (!start_pts_known_) {
      start_pts_ = pts;
      start_pts_known_ = true;
    }
    t = frame_seconds(pts);
  }
  // Frames before the stream start (edit-list pre-roll) are not part of the video.
  if (t < -kEpsilon) return 0;
  if (resume_phase_ == ResumePhase::Seek) return find_resume_frame(has_pts, pts, t, dst);

  // Index: a counter while every frame since the stream start passed through here; from the time
  // otherwise (after a seek, once to re-anchor the counter; in key-frame mode, always).
  const bool from_time = (need_anchor_ || opts_.mode == SampleMode::Keyframe) && info_.fps > 0;
  const int64_t index = from_time ? clamp_i64(std::round(t * info_.fps)) : next_index_;
  need_anchor_ = false;
  next_index_ = index + 1;
  // Where a resume after this frame or a later one seeks (key-frame mode decodes key packets only).
  if (frame_is_key(frame_) || opts_.mode == SampleMode::Keyframe) {
    last_key_ts_ = has_pts ? pts : clamp_i64(static_cast<double>(start_pts_) + std::round(t / time_base_));
  }

  if (opts_.unit == RangeUnit::Seconds) {
    if (t + kEpsilon < range_start_s_) return 0;
    if (t + kEpsilon >= range_end_s_) {
      ended_ = true;
      return -1;
    }
  } else {
    if (index < range_start_f_) return 0;
    if (index >= range_end_f_) {
      ended_ = true;
      return -1;
    }
  }
  if (!origin_set_) {
    sampler_.set_origin(t);
    origin_set_ = true;
  }
  stats_.decoded_frames++;
  if (!sampler_.take(t)) {
    stats_.dropped_frames++;
    return 0;
  }
  if (stats_.emitted_frames >= opts_.max_frames) {
    // The cap is reported only when a further frame would have been sampled; this one is not output.
    stats_.decoded_frames--;
    over_cap_ = true;
    ended_ = true;
    return -1;
  }
  const Cursor& target = opts_.resume;
  if (resume_phase_ == ResumePhase::Replay && stats_.emitted_frames + 1 < target.emitted_frames) {
    // Emitted by the decoder the cursor came from: counted as then, never converted.
    stats_.emitted_frames++;
    return 0;
  }
  if (!convert(dst)) {
    stats_.decode_failures++;
    stats_.dropped_frames++;
    return 0;
  }
  if (resume_phase_ == ResumePhase::Replay &&
      (index != target.index || clamp_i64(std::round(t * 1000)) != target.pts_ms || frame_hash(dst, frame_bytes()) != target.frame_hash)) {
    resume_missed_ = true;
    ended_ = true;
    return -1;
  }
  meta->index = index;
  meta->pts_ms = clamp_i64(std::round(t * 1000));
  meta->keyframe = frame_is_key(frame_);
  meta->wall_ms = wall_ms();
  stats_.emitted_frames++;
  if (!info_.live) take_cursor(dst, index, has_pts, pts, t);
  return 1;
}

// Decides, before sending a packet, whether the codec may skip its frame when nothing references it.
// The frame shown just before it (the largest pts sent below its own; in decode order it has been sent
// already) bounds the window in which a sample time would make the sampler take it.
void VideoDecoder::plan_skip() {
  const int64_t pts = packet_->pts;
  bool skip = false;
  if (resume_phase_ == ResumePhase::Seek) {
    // Before a resume's frame nothing is counted or shown: any frame nothing references may go, uncounted.
    const Cursor& c = opts_.resume;
    skip = pts != AV_NOPTS_VALUE && c.has_pts && pts < c.pts && !(packet_->flags & AV_PKT_FLAG_KEY);
  } else if (pts != AV_NOPTS_VALUE && start_pts_known_ && info_.fps > 0 && !(packet_->flags & AV_PKT_FLAG_KEY)) {
    auto it = recent_pts_.lower_bound(pts);
    if (it != recent_pts_.begin()) skip = !may_be_sampled(frame_seconds(*std::prev(it)), frame_seconds(pts));
  }
  if (pts != AV_NOPTS_VALUE) {
    recent_pts_.insert(pts);
    if (recent_pts_.size() > 256) recent_pts_.erase(recent_pts_.begin());
  }
  codec_->skip_frame = skip ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
  if (skip && resume_phase_ != ResumePhase::Seek) skip_pending_.insert(pts);
}

// A live source's frame times come from its clock as it sends and jitter by milliseconds, so its sampler
// allows half a frame (see Sampler); a file's times are exact, and its sampler takes the first frame at or
// after each sample time, as documented.
double VideoDecoder::live_source_fps() const { return info_.live ? info_.fps : 0; }

// True unless the frame at t (the previous shown frame at t_prev) is certainly neither sampled nor the
// frame that ends the range or anchors the sampler. Errs towards true.
bool VideoDecoder::may_be_sampled(double t_prev, double t) const {
  if (opts_.unit == RangeUnit::Seconds) {
    if (t + kEpsilon < range_start_s_) return false;  // pre-roll after a seek
    if (t + kEpsilon >= range_end_s_) return true;
  } else {
    const double idx = t * info_.fps;
    if (idx < static_cast<double>(range_start_f_) - 2) return false;
    if (idx > static_cast<double>(range_end_f_) - 2) return true;
  }
  if (!origin_set_) return true;
  const double step = sampler_.step();
  if (!(step > 0)) return true;
  const double tol = sampler_.tolerance();
  const double rel = t + tol - sampler_.origin();
  if (rel < 0) return false;
  // The last sample time at or before t (shifted as the sampler shifts it); the sampler takes this frame
  // only if that lies after t_prev, shifted alike.
  const double last = std::floor(rel / step) * step;
  return last > t_prev + tol - sampler_.origin() - 1e-3;
}

// Counts frames the codec skipped (pts below pts_limit) exactly as handle_frame counts a decoded frame
// that is not sampled: it takes an index, and inside the range it is decoded and dropped.
void VideoDecoder::account_skipped_before(int64_t pts_limit) {
  while (!skip_pending_.empty() && *skip_pending_.begin() < pts_limit) {
    const int64_t pts = *skip_pending_.begin();
    skip_pending_.erase(skip_pending_.begin());
    const double t = frame_seconds(pts);
    if (t < -kEpsilon) continue;
    const int64_t index = need_anchor_ ? clamp_i64(std::round(t * info_.fps)) : next_index_;
    need_anchor_ = false;
    next_index_ = index + 1;
    const bool in_range = opts_.unit == RangeUnit::Seconds
                              ? (t + kEpsilon >= range_start_s_ && t + kEpsilon < range_end_s_)
                              : (index >= range_start_f_ && index < range_end_f_);
    if (in_range && origin_set_) {
      stats_.decoded_frames++;
      stats_.dropped_frames++;
    }
    stats_.skipped_decodes++;
  }
}

bool VideoDecoder::convert(uint8_t* dst) {
  // A frame the NVIDIA decoder left on the GPU: its pixels (NV12 or P010) come to memory first.
  AVFrame* frame = frame_;
  if (frame_->format == AV_PIX_FMT_CUDA) {
    av_frame_unref(sw_frame_);
    if (av_hwframe_transfer_data(sw_frame_, frame_, 0) < 0) return false;
    sw_frame_->colorspace = frame_->colorspace;
    sw_frame_->color_range = frame_->color_range;
    frame = sw_frame_;
  }
  return convert_frame(frame, dst);
}

bool VideoDecoder::convert_frame(AVFrame* frame_, uint8_t* dst) {
  if (frame_->width <= 0 || frame_->height <= 0 || frame_->format < 0) return false;
  if (static_cast<int64_t>(frame_->width) * frame_->height > kMaxPixels) return false;
  const auto src_fmt = static_cast<AVPixelFormat>(frame_->format);
  const bool resize = frame_->width != info_.out_width || frame_->height != info_.out_height;
  SwsContext* next = sws_getCachedContext(sws_, frame_->width, frame_->height, src_fmt, info_.out_width,
                                          info_.out_height, AV_PIX_FMT_RGB24, resize ? SWS_BILINEAR : SWS_POINT,
                                          nullptr, nullptr, nullptr);
  if (!next) return false;
  sws_ = next;
  // HD sources use BT.709 coefficients, full-range (JPEG) sources the full range; swscale assumes
  // BT.601 limited range unless told, which shifts colours. Set once per change of source format.
  const int cs = frame_->colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709 : SWS_CS_DEFAULT;
  const int src_range = frame_->color_range == AVCOL_RANGE_JPEG ? 1 : 0;
  const int64_t key = ((static_cast<int64_t>(frame_->width) * 65536 + frame_->height) * 1024 + frame_->format) * 64 +
                      cs * 2 + src_range;
  if (key != sws_key_) {
    sws_setColorspaceDetails(sws_, sws_getCoefficients(cs), src_range, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                             1 << 16, 1 << 16);
    sws_key_ = key;
  }
  uint8_t* dst_data[4] = {dst, nullptr, nullptr, nullptr};
  int dst_linesize[4] = {info_.out_width * 3, 0, 0, 0};
  const int rows = sws_scale(sws_, frame_->data, frame_->linesize, 0, frame_->height, dst_data, dst_linesize);
  return rows > 0;
}

Status VideoDecoder::next(uint8_t* dst, FrameMeta* meta) {
  return live_ ? take_live(dst, meta) : decode_next(dst, meta);
}

Status VideoDecoder::take_live(uint8_t* dst, FrameMeta* meta) {
  std::unique_lock<std::mutex> lock(live_mu_);
  for (;;) {
    out_stats_ = live_stats_;
    out_stats_.emitted_frames = live_taken_;
    if (!out_error_.code.empty()) return Status::Error;
    if (aborted_.load()) {
      out_error_ = Error{"aborted", "Decoding was aborted"};
      return Status::Error;
    }
    if (live_has_frame_) {
      if (live_taken_ >= live_max_frames_) return Status::MaxFrames;  // and a further frame was due
      std::memcpy(dst, live_slot_.data(), live_slot_.size());
      *meta = live_meta_;
      live_has_frame_ = false;
      out_stats_.emitted_frames = ++live_taken_;
      live_cv_.notify_all();  // the thread may be waiting for the slot
      return Status::Frame;
    }
    if (live_done_) {
      // The thread has stopped: error_ is no longer written.
      if (live_status_ == Status::Error) out_error_ = error_;
      return live_status_ == Status::Error ? Status::Error : Status::End;
    }
    live_cv_.wait(lock);
  }
}

void VideoDecoder::live_loop() {
  // A source that delivers in bursts (an HLS segment at a time, a finite response read faster than it
  // plays) sends frames ahead of their time; overwriting the waiting frame with those would lose most of
  // every burst although the caller keeps up on average. So a frame that came early waits for the caller to
  // take the one in the slot, as long as the caller is less than kLiveMaxLagMs behind real time. A frame
  // that came on time (a camera's steady stream) never waits: the newest wins, and the latency stays low.
  // Real time: the smallest (arrival - presentation time) seen; a frame's lag is how much later it came.
  // RTSP is paced by its server (RTP carries each frame at its time), so its frames are never early: ones
  // decoded in quick succession are late, after this thread waited for a core on a loaded machine, and
  // holding them for the caller would add that wait to every frame after. The newest always wins there:
  // 6-7 cameras on 2 cores, two A/B pairs, lag p50 352-460 ms against 623-639 with the hold (p95 470-594
  // against 739-824), frames processed the same within the machine's noise.
  const bool paced = is_rtsp_url(opts_.input);
  int64_t baseline_ms = std::numeric_limits<int64_t>::max();
  int64_t prev_arrival_ms = 0, prev_pts_ms = 0;
  bool have_prev = false;
  for (;;) {
    FrameMeta meta;
    const Status s = decode_next(live_staging_.data(), &meta);
    std::unique_lock<std::mutex> lock(live_mu_);
    if (s == Status::Frame) {
      const int64_t arrival_ms = now_ns() / 1000000;
      const int64_t offset = arrival_ms - meta.pts_ms;
      // A jump in the source's clock (a discontinuity, a restarted stream) starts a new reference.
      if (offset < baseline_ms || offset - baseline_ms > kLiveResetLagMs) baseline_ms = offset;
      const int64_t pts_gap = meta.pts_ms - prev_pts_ms;
      // Early: decoded sooner after the previous frame was handed over than their times lie apart (counted
      // from the hand-over, so frames that piled up while the thread waited count as early too).
      const bool early = !paced && have_prev && pts_gap > 0 && arrival_ms - prev_arrival_ms < pts_gap / 2;
      const int64_t wait_until_ms = baseline_ms + meta.pts_ms + kLiveMaxLagMs;
      while (early && live_has_frame_ && !live_stop_.load() && !aborted_.load()) {
        const int64_t left_ms = wait_until_ms - now_ns() / 1000000;
        if (left_ms <= 0) break;
        live_cv_.wait_for(lock, std::chrono::milliseconds(left_ms));
      }
      prev_arrival_ms = now_ns() / 1000000;
      // Time spent waiting on the caller is not the source stalling.
      last_frame_ns_ = now_ns();
      prev_pts_ms = meta.pts_ms;
      have_prev = true;
      // Newest frame wins: one still waiting for the caller is dropped.
      if (live_has_frame_) stats_.late_drops++;
      live_staging_.swap(live_slot_);
      live_meta_ = meta;
      live_has_frame_ = true;
    } else {
      live_status_ = s;
      live_done_ = true;
    }
    live_stats_ = stats_;
    live_stats_.dropped_frames += stats_.late_drops;
    live_cv_.notify_all();
    if (live_done_) return;
  }
}

void VideoDecoder::stop_live() {
  if (!live_thread_.joinable()) return;
  {
    // Under the lock, so the thread cannot miss the wake-up between its check and its wait for the slot.
    std::lock_guard<std::mutex> lock(live_mu_);
    live_stop_.store(true);
    live_cv_.notify_all();
  }
  live_thread_.join();
}

Status VideoDecoder::decode_next(uint8_t* dst, FrameMeta* meta) {
  if (live_stop_.load()) {
    fail("aborted", "Decoding was stopped");
    return Status::Error;
  }
  if (ended_ || !fmt_) {
    if (!error_.code.empty()) return Status::Error;
    if (aborted_.load()) {
      fail("aborted", "Decoding was aborted");
      return Status::Error;
    }
    if (ended_) return over_cap_ ? Status::MaxFrames : Status::End;
    error_ = Error{"not_open", "The decoder is not open"};
    return Status::Error;
  }
  int consecutive_errors = 0;
  for (;;) {
    if (aborted_.load()) {
      fail("aborted", "Decoding was aborted");
      return Status::Error;
    }
    if (live_stop_.load()) {
      fail("aborted", "Decoding was stopped");
      return Status::Error;
    }
    int ret = avcodec_receive_frame(codec_, frame_);
    if (ret >= 0) {
      consecutive_errors = 0;
      last_frame_ns_ = now_ns();
      const int handled = handle_frame(dst, meta);
      av_frame_unref(frame_);
      if (handled > 0) return Status::Frame;
      if (handled < 0) return over_cap_ ? Status::MaxFrames : Status::End;
      continue;
    }
    if (ret == AVERROR_EOF) {
      account_skipped_before(std::numeric_limits<int64_t>::max());
      ended_ = true;
      if (stats_.decoded_frames == 0 && stats_.decode_failures > 0) {
        fail("decode_failed", "No frame of the video could be decoded (" + std::to_string(stats_.decode_failures) +
                                  " decode failures)");
        return Status::Error;
      }
      return Status::End;
    }
    if (ret != AVERROR(EAGAIN)) {
      // Before a resume's frame the failures were counted by the decoder the cursor came from.
      if (resume_phase_ != ResumePhase::Seek) {
        stats_.decode_failures++;
        stats_.dropped_frames++;
      }
      if (++consecutive_errors > kMaxConsecutiveErrors) {
        fail("decode_failed", "The video stream is corrupt: " + av_error_text(ret));
        return Status::Error;
      }
      continue;
    }
    if (input_eof_) {
      // The decoder was flushed yet wants input: it has nothing more to give.
      account_skipped_before(std::numeric_limits<int64_t>::max());
      ended_ = true;
      return Status::End;
    }

    if (info_.live && opts_.read_timeout_ms > 0 && now_ns() - last_frame_ns_ > opts_.read_timeout_ms * 1000000) {
      // Packets may still come (audio, keep-alives, undecodable video) while no picture does.
      fail("timeout", "No video frame arrived from the live source for " + std::to_string(opts_.read_timeout_ms) + " ms");
      return Status::Error;
    }
    arm_deadline(opts_.read_timeout_ms);
    ret = av_read_frame(fmt_, packet_);
    disarm_deadline();
    if (ret < 0) {
      if (live_stop_.load()) {
        fail("aborted", "Decoding was stopped");
        return Status::Error;
      }
      if (aborted_.load() || timed_out_.load() || (is_network_ && ret != AVERROR_EOF && ret != AVERROR_INVALIDDATA)) {
        fail_av("fetch_failed", "reading it", ret);
        return Status::Error;
      }
      // End of input, or a truncated/corrupt tail of a file: drain what the decoder holds.
      input_eof_ = true;
      avcodec_send_packet(codec_, nullptr);
      continue;
    }
    if (packet_->stream_index != stream_index_) {
      av_packet_unref(packet_);
      continue;
    }
    const int64_t read_at = packet_->dts != AV_NOPTS_VALUE ? packet_->dts : packet_->pts;
    if (read_at != AV_NOPTS_VALUE) {
      read_dts_ = read_at;
      has_read_dts_ = true;
    }
    if (opts_.mode == SampleMode::Keyframe && !(packet_->flags & AV_PKT_FLAG_KEY)) {
      // Key-frame sampling never decodes the other packets; each one in the range is a sampling skip.
      const int64_t pts = packet_->pts != AV_NOPTS_VALUE ? packet_->pts : packet_->dts;
      bool in_range = true;
      if (pts != AV_NOPTS_VALUE && start_pts_known_) {
        const double t = frame_seconds(pts);
        if (opts_.unit == RangeUnit::Seconds) in_range = t + kEpsilon >= range_start_s_ && t + kEpsilon < range_end_s_;
        else if (info_.fps > 0) {
          const int64_t idx = clamp_i64(std::round(t * info_.fps));
          in_range = idx >= range_start_f_ && idx < range_end_f_;
        }
        if (t >= 0 && ((opts_.unit == RangeUnit::Seconds && t + kEpsilon >= range_end_s_) ||
                       (opts_.unit == RangeUnit::Frames && info_.fps > 0 && clamp_i64(std::round(t * info_.fps)) >= range_end_f_))) {
          // Past the range: no later key frame can be in it either.
          av_packet_unref(packet_);
          input_eof_ = true;
          avcodec_send_packet(codec_, nullptr);
          continue;
        }
      }
      if (in_range && count_read(read_at)) stats_.dropped_frames++;
      av_packet_unref(packet_);
      continue;
    }
    if (packet_->pts == AV_NOPTS_VALUE && packet_->dts != AV_NOPTS_VALUE) {
      if (opts_.mode == SampleMode::Keyframe && key_packet_dts_.size() < 64) key_packet_dts_.push_back(packet_->dts);
      if (need_anchor_ && anchor_dts_ == AV_NOPTS_VALUE) anchor_dts_ = packet_->dts;
    }
    if (opts_.skip_unsampled && opts_.mode != SampleMode::Keyframe) plan_skip();
    ret = avcodec_send_packet(codec_, packet_);
    av_packet_unref(packet_);
    if (ret < 0 && ret != AVERROR(EAGAIN) && ret != AVERROR_EOF) {
      if (resume_phase_ != ResumePhase::Seek) {
        stats_.decode_failures++;
        stats_.dropped_frames++;
      }
      if (++consecutive_errors > kMaxConsecutiveErrors) {
        fail("decode_failed", "The video stream is corrupt: " + av_error_text(ret));
        return Status::Error;
      }
    }
  }
}

void VideoDecoder::close() {
  stop_live();
  // The thread has ended: later calls see the decoder's own (closed) state, and a frame the thread left in
  // the slot is not handed out after close (it was read from a connection that is gone).
  live_ = false;
  live_has_frame_ = false;
  free_av();
}

void VideoDecoder::free_av() {
  if (sws_) sws_freeContext(sws_);
  sws_ = nullptr;
  sws_key_ = -1;
  av_frame_free(&frame_);
  av_frame_free(&sw_frame_);
  hw_ = false;
  av_packet_free(&packet_);
  avcodec_free_context(&codec_);
  if (fmt_) avformat_close_input(&fmt_);
  fmt_ = nullptr;
  // A custom AVIOContext is the caller's to free, also when avformat_open_input failed.
  if (main_pb_ && io_) io_->close(main_pb_);
  main_pb_ = nullptr;
  stream_index_ = -1;
}

}  // namespace sightflow::decode
