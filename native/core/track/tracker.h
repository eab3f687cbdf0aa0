// Multi-object tracker: SORT (Kalman + IoU + optimal assignment) with ByteTrack's second association of
// low-score detections as an option, class-aware matching, and two options for crowds (both on in the video
// pipeline, src/video/pipeline/target-tracker.ts):
//  - appearance: detections carry a small colour signature and a pair's weight mixes IoU with how alike
//    the detection looks to the track's running mean, so where two people's boxes overlap each keeps its own;
//    and a track that missed its previous frame only takes a detection that looks enough like it;
//  - a buffered pass (C-BIoU): what is left unmatched is matched once more on boxes grown by a share of their
//    size, for tracks seen recently: a person walking off the filter's prediction or out from behind someone.
//
// Contract: call Update() exactly once per frame, in frame order, also for frames with no detections; that
// call is what ages tracks. `steps` is how many frame intervals passed since the previous call (1 unless
// frames were skipped, as a live source behind its reader does): motion is predicted over all of them and
// max_age counts them, so a skipped stretch neither freezes a moving box nor keeps a lost track alive
// longer. State lives in the instance only: no globals, ids are per instance, start at 1 and are never
// reused.
//
// Snapshot()/Restore() carry that state to another tracker (a video task continuing on another worker after
// its worker died): a restored tracker's Update() gives bit-identical output from then on. The format is in
// tracker_snapshot.cc.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "assignment.h"
#include "box.h"
#include "kalman_box.h"

namespace sightflow::track {

struct TrackerOptions {
  int max_age = 30;              // frames a track survives without a matching detection
  int min_hits = 3;              // consecutive matched frames before a track is confirmed
  float iou_threshold = 0.3f;    // minimum IoU for a (predicted track, detection) pair
  bool byte = false;             // ByteTrack: two passes by score instead of one
  float high_thresh = 0.5f;      // byte: first pass and new tracks use score >= high_thresh
  float low_thresh = 0.1f;       // byte: second pass uses low_thresh <= score < high_thresh; lower is ignored
  float second_iou_threshold = 0.5f;  // byte: IoU for the second pass (ByteTrack uses 0.5)
  // false (SORT): only confirmed tracks are reported. true: every detection gets a track id; unmatched ones
  // start tentative tracks whose id is fixed at creation, so a track keeps one id from its first frame.
  bool report_all = false;
  float buffer = 0.0f;           // > 0: the buffered pass, boxes grown by this share of their size on each side
  int buffer_max_lost = 10;      // buffered pass: tracks unmatched for at most this many intervals
  // Appearance: each detection may carry a signature of appearance_dim non-negative values summing to 1 (a
  // colour histogram); a pair's weight in the assignment is then (1 - appearance_weight) x IoU +
  // appearance_weight x the histograms' intersection with the track's running mean. Gating stays on IoU.
  int appearance_dim = 0;
  float appearance_weight = 0.5f;
  // Appearance on re-acquiring: a track that missed its previous frame takes a detection only when they are
  // at least this alike (histogram intersection); 0: off. A track matched in the previous frame needs no such
  // check (overlap with its own last box is evidence enough), one that lost its person may otherwise take
  // whoever turns up where it coasts (someone walking in where another walked out).
  float appearance_reacquire = 0.0f;
};

struct Detection {
  Box box;
  float score = 1.0f;
  int32_t cls = 0;  // detections of different classes never match
  const float* signature = nullptr;  // appearance_dim values, or null
};

class Tracker {
 public:
  explicit Tracker(const TrackerOptions& opts);

  // For each detection i: track_ids[i] = id of the track it belongs to, or 0 when it is not reported
  // (not confirmed yet while report_all is false, or a byte-mode detection left unmatched). confirmed[i] = 1
  // when that track is confirmed. Both vectors are resized to n.
  void Update(const Detection* dets, int n, std::vector<int32_t>& track_ids, std::vector<uint8_t>& confirmed, int steps = 1);

  int LiveTracks() const { return static_cast<int>(tracks_.size()); }
  // The ids of the live tracks that have one, ascending. Ids are never reused, so an id missing here is gone
  // for good: a caller keeping its own map from ids (the video pipeline's task-wide ids) may forget it.
  void LiveIds(std::vector<int32_t>& out) const;
  int AppearanceDim() const { return opts_.appearance_dim; }
  int64_t FrameCount() const { return frame_; }

  // Everything Update() depends on (tracks with their filters' exact bits, next id, frame count) and the
  // options, as versioned little-endian bytes. Scratch buffers are not state and are not included.
  std::vector<uint8_t> Snapshot() const;
  // Replaces the state with a Snapshot()'s. Returns false and leaves the tracker as it was when the bytes are
  // malformed, truncated, of another format version, or were taken from a tracker with other options.
  bool Restore(const uint8_t* data, size_t n);

 private:
  struct Track {
    KalmanBox kf;
    Box predicted;
    // Running mean of its detections' signatures (empty: none yet) in 16-bit fixed point (value x 65535,
    // rounded after each update): half a float's bytes in the state and the checkpoint, exact in both, and
    // far finer than the signature's own noise.
    std::vector<uint16_t> signature;
    int32_t id;  // 0 until an id is given (at confirmation, or at creation with report_all)
    int32_t cls;
    int hit_streak;
    int time_since_update;
    bool confirmed;
  };

  // Matches `det_idx` detections against tracks `trk_idx`; fills det_match (detection -> track index).
  // `buffer` > 0: on boxes grown by that share of their size.
  void Associate(const Detection* dets, const std::vector<int>& det_idx, const std::vector<int>& trk_idx, float threshold,
                 float buffer = 0.0f);
  void Hit(Track& t, const Detection& d);
  float Similarity(const Track& t, const Detection& d) const;

  TrackerOptions opts_;
  std::vector<Track> tracks_;
  int32_t next_id_ = 1;
  int64_t frame_ = 0;
  // Scratch reused across frames.
  Assigner assigner_;
  std::vector<Edge> edges_;
  std::vector<int> by_x1_;
  std::vector<int> det_match_, trk_matched_;
  std::vector<int> first_, second_, pool_, rest_;
};

}  // namespace sightflow::track
