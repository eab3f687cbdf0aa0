// Boxes as the tracker sees them: x1, y1, x2, y2 in pixels.
#pragma once
#include <algorithm>

namespace sightflow::track {

struct Box {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
};

inline float Iou(const Box& a, const Box& b) {
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (iw <= 0.0f) return 0.0f;
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (ih <= 0.0f) return 0.0f;
  const float inter = iw * ih;
  const float uni = (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter;
  return uni > 0.0f ? inter / uni : 0.0f;
}

}  // namespace sightflow::track
