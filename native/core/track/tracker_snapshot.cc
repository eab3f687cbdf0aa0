// Tracker::Snapshot / Restore: the tracker's whole state as bytes, so a video task that continues on another
// worker continues its tracks with the output it would have had.
//
// Format (version 2; version 1 held the signature as floats and is refused), little-endian throughout:
//   "SFTK", u16 version, the options (every TrackerOptions field, floats by their bits: a snapshot only
//   restores into a tracker whose options encode to the same bytes), i32 next_id, i64 frame, u32 tracks,
//   then per track, in the tracker's order (association visits tracks in that order, so it is state too):
//     id, cls (zigzag), hit_streak and time_since_update as LEB128 varints (small numbers, a byte each),
//     u8 confirmed,
//     the filter: f64 x[7], then P (7x7) as a 49-bit mask of the entries whose bits are not all zero
//     followed by those entries (P is block-diagonal: 13 of 49 are non-zero),
//     u8 has_signature, then (if 1) the running mean as a mask of appearance_dim bits and its non-zero entries
//     as u16 (the tracker's own 16-bit fixed point; a colour histogram of a few colours leaves most bins at zero).
// The predicted box is not stored: every Update() predicts it again before it reads it (it is the filter's
// state after Predict(), and a restored track starts with the filter's current box).
// Every value is stored by its bits (doubles and floats exactly, -0.0 and NaN included; the signature is the
// tracker's own 16-bit integers), which is what makes the restored tracker's output bit-identical. Restore
// parses everything into a new track list and swaps it in only when the whole input is valid and consumed exactly.
#include <cstring>
#include <limits>

#include "tracker.h"

namespace sightflow::track {
namespace {

constexpr uint8_t kMagic[4] = {'S', 'F', 'T', 'K'};
constexpr uint16_t kVersion = 2;
constexpr int kCov = 49;
// The least one track takes: four one-byte varints, confirmed, x, P's mask, has_signature.
constexpr size_t kTrackMin = 4 + 1 + 7 * 8 + 7 + 1;

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}
  void U8(uint8_t v) { out_.push_back(v); }
  void U16(uint16_t v) { Le(v, 2); }
  void U32(uint32_t v) { Le(v, 4); }
  void I32(int32_t v) { Le(static_cast<uint32_t>(v), 4); }
  void I64(int64_t v) { Le(static_cast<uint64_t>(v), 8); }
  void F32(float v) { Le(Bits32(v), 4); }
  void F64(double v) { Le(Bits64(v), 8); }
  // LEB128: 7 bits a byte, low first, the high bit set on every byte but the last.
  void Var(uint32_t v) {
    for (; v >= 0x80; v >>= 7) out_.push_back(static_cast<uint8_t>(v | 0x80));
    out_.push_back(static_cast<uint8_t>(v));
  }
  void Zigzag(int32_t v) { Var((static_cast<uint32_t>(v) << 1) ^ (v < 0 ? 0xffffffffu : 0u)); }
  // A mask of which of the n values have bits other than all zero, then those values.
  template <typename T>
  void Sparse(const T* v, size_t n) {
    const size_t at = out_.size();
    out_.resize(at + (n + 7) / 8, 0);
    for (size_t i = 0; i < n; ++i)
      if (NonZero(v[i])) out_[at + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    for (size_t i = 0; i < n; ++i)
      if (NonZero(v[i])) Put(v[i]);
  }

  static uint32_t Bits32(float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
  static uint64_t Bits64(double v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }

 private:
  void Le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  static bool NonZero(uint16_t v) { return v != 0; }
  static bool NonZero(double v) { return Bits64(v) != 0; }
  void Put(uint16_t v) { U16(v); }
  void Put(double v) { F64(v); }
  std::vector<uint8_t>& out_;
};

// Reads what Writer wrote; every read fails (returns false, and stays failed) past the end.
class Reader {
 public:
  Reader(const uint8_t* data, size_t n) : p_(data), left_(n) {}
  size_t Left() const { return left_; }
  bool Bytes(uint8_t* out, size_t n) {
    if (n > left_) return false;
    if (n > 0) std::memcpy(out, p_, n);
    p_ += n;
    left_ -= n;
    return true;
  }
  bool U8(uint8_t& v) { return Bytes(&v, 1); }
  bool U16(uint16_t& v) { return Le(v); }
  bool U32(uint32_t& v) { return Le(v); }
  bool I32(int32_t& v) {
    uint32_t u;
    if (!Le(u)) return false;
    v = static_cast<int32_t>(u);
    return true;
  }
  bool I64(int64_t& v) {
    uint64_t u;
    if (!Le(u)) return false;
    v = static_cast<int64_t>(u);
    return true;
  }
  bool F32(float& v) {
    uint32_t u;
    if (!Le(u)) return false;
    std::memcpy(&v, &u, 4);
    return true;
  }
  bool F64(double& v) {
    uint64_t u;
    if (!Le(u)) return false;
    std::memcpy(&v, &u, 8);
    return true;
  }
  // Writer::Var's form, at most 5 bytes, canonical (no needless trailing zero byte), within 32 bits.
  bool Var(uint32_t& v) {
    v = 0;
    for (int i = 0; i < 5; ++i) {
      uint8_t b;
      if (!U8(b)) return false;
      if (i == 4 && b > 0x0f) return false;
      v |= static_cast<uint32_t>(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) return i == 0 || b != 0;
    }
    return false;
  }
  bool Zigzag(int32_t& v) {
    uint32_t u;
    if (!Var(u)) return false;
    v = static_cast<int32_t>((u >> 1) ^ (0u - (u & 1)));
    return true;
  }
  // Writer::Sparse's form: entries off the mask are +0.0; the mask's padding bits and any listed entry whose
  // bits are all zero make the input malformed (Snapshot never writes them).
  template <typename T>
  bool Sparse(T* v, size_t n) {
    std::vector<uint8_t> mask((n + 7) / 8);
    if (!Bytes(mask.data(), mask.size())) return false;
    for (size_t i = n; i < 8 * mask.size(); ++i)
      if (mask[i / 8] & (1u << (i % 8))) return false;
    for (size_t i = 0; i < n; ++i) {
      v[i] = T(0);
      if (!(mask[i / 8] & (1u << (i % 8)))) continue;
      if (!Get(v[i]) || IsZeroBits(v[i])) return false;
    }
    return true;
  }

 private:
  template <typename U>
  bool Le(U& v) {
    if (sizeof(U) > left_) return false;
    v = 0;
    for (size_t i = 0; i < sizeof(U); ++i) v |= static_cast<U>(static_cast<U>(p_[i]) << (8 * i));
    p_ += sizeof(U);
    left_ -= sizeof(U);
    return true;
  }
  bool Get(uint16_t& v) { return U16(v); }
  bool Get(double& v) { return F64(v); }
  static bool IsZeroBits(uint16_t v) { return v == 0; }
  static bool IsZeroBits(double v) { return Writer::Bits64(v) == 0; }
  const uint8_t* p_;
  size_t left_;
};

// The options' bytes: the refusal of a snapshot taken under other options compares these.
void WriteOptions(Writer& w, const TrackerOptions& o) {
  w.I32(o.max_age);
  w.I32(o.min_hits);
  w.F32(o.iou_threshold);
  w.U8(o.byte ? 1 : 0);
  w.F32(o.high_thresh);
  w.F32(o.low_thresh);
  w.F32(o.second_iou_threshold);
  w.U8(o.report_all ? 1 : 0);
  w.F32(o.buffer);
  w.I32(o.buffer_max_lost);
  w.I32(o.appearance_dim);
  w.F32(o.appearance_weight);
  w.F32(o.appearance_reacquire);
}

}  // namespace

std::vector<uint8_t> Tracker::Snapshot() const {
  std::vector<uint8_t> out;
  Writer w(out);
  for (const uint8_t c : kMagic) w.U8(c);
  w.U16(kVersion);
  WriteOptions(w, opts_);
  w.I32(next_id_);
  w.I64(frame_);
  w.U32(static_cast<uint32_t>(tracks_.size()));
  double x[7], p[kCov];
  for (const Track& t : tracks_) {
    w.Var(static_cast<uint32_t>(t.id));
    w.Zigzag(t.cls);
    w.Var(static_cast<uint32_t>(t.hit_streak));
    w.Var(static_cast<uint32_t>(t.time_since_update));
    w.U8(t.confirmed ? 1 : 0);
    t.kf.Export(x, p);
    for (const double v : x) w.F64(v);
    w.Sparse(p, kCov);
    w.U8(t.signature.empty() ? 0 : 1);
    if (!t.signature.empty()) w.Sparse(t.signature.data(), t.signature.size());
  }
  return out;
}

bool Tracker::Restore(const uint8_t* data, size_t n) {
  if (data == nullptr && n > 0) return false;
  Reader r(data, n);
  uint8_t magic[4];
  uint16_t version = 0;
  if (!r.Bytes(magic, 4) || std::memcmp(magic, kMagic, 4) != 0 || !r.U16(version) || version != kVersion) return false;
  std::vector<uint8_t> want;
  Writer ow(want);
  WriteOptions(ow, opts_);
  std::vector<uint8_t> got(want.size());
  if (!r.Bytes(got.data(), got.size()) || got != want) return false;
  int32_t next_id = 0;
  int64_t frame = 0;
  uint32_t count = 0;
  // The counters' bounds keep the next Update() from overflowing them (which no tracker reaches in practice).
  constexpr int32_t kMaxI32 = std::numeric_limits<int32_t>::max();
  if (!r.I32(next_id) || !r.I64(frame) || !r.U32(count) || next_id < 1 || next_id == kMaxI32 || frame < 0 ||
      frame == std::numeric_limits<int64_t>::max())
    return false;
  if (count > r.Left() / kTrackMin) return false;  // before reserving: a corrupt count allocates nothing
  std::vector<Track> tracks;
  tracks.reserve(count);
  const size_t dim = static_cast<size_t>(opts_.appearance_dim);
  double x[7], p[kCov];
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t id = 0, hit_streak = 0, since = 0;
    int32_t cls = 0;
    uint8_t confirmed = 0, has_signature = 0;
    if (!r.Var(id) || !r.Zigzag(cls) || !r.Var(hit_streak) || !r.Var(since) || !r.U8(confirmed)) return false;
    if (id >= static_cast<uint32_t>(next_id) || hit_streak >= static_cast<uint32_t>(kMaxI32) ||
        since > static_cast<uint32_t>(opts_.max_age) || confirmed > 1)
      return false;
    for (double& v : x)
      if (!r.F64(v)) return false;
    if (!r.Sparse(p, kCov) || !r.U8(has_signature) || has_signature > 1 || (has_signature == 1 && dim == 0)) return false;
    std::vector<uint16_t> signature;
    if (has_signature == 1) {
      signature.resize(dim);
      if (!r.Sparse(signature.data(), dim)) return false;
    }
    const KalmanBox kf(x, p);
    tracks.push_back(Track{kf, kf.State(), std::move(signature), static_cast<int32_t>(id), cls, static_cast<int32_t>(hit_streak),
                           static_cast<int32_t>(since), confirmed == 1});
  }
  if (r.Left() != 0) return false;
  tracks_ = std::move(tracks);
  next_id_ = next_id;
  frame_ = frame;
  return true;
}

}  // namespace sightflow::track
