#include "image/colour_names.h"

namespace sightflow::image {
namespace {

// What value and saturation alone decide, by (max << 8 | min) of a pixel's channels: black, white or gray
// (their indices), else that the hue decides, with brown possible or not. Built with the rules' own double
// arithmetic, as colour.ts builds its table.
constexpr uint8_t kHueDecides = 254;
constexpr uint8_t kHueDecidesBrownPossible = 255;

struct ValueSaturationTable {
  uint8_t at[1 << 16];
  ValueSaturationTable() : at() {
    for (int hi = 0; hi < 256; hi++)
      for (int lo = 0; lo <= hi; lo++) {
        const double max = hi / 255.0;
        const double min = lo / 255.0;
        const double v = max;
        const double s = max == 0 ? 0 : (max - min) / max;
        uint8_t c;
        if (v < 0.18) c = 0;
        else if (s < 0.15 && v > 0.8) c = 1;
        else if (s < 0.18) c = 2;
        else c = (v < 0.55 && s > 0.25) ? kHueDecidesBrownPossible : kHueDecides;
        at[(hi << 8) | lo] = c;
      }
  }
};

const ValueSaturationTable& Table() {
  static const ValueSaturationTable table;
  return table;
}

}  // namespace

uint8_t ColourIndex(int r, int g, int b) {
  const int hi = r > g ? (r > b ? r : b) : (g > b ? g : b);
  const int lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
  const uint8_t sv = Table().at[(hi << 8) | lo];
  if (sv < kHueDecides) return sv;
  // Each step a statement of its own, as colour.ts computes it (no fused multiply-add on this target's
  // baseline either way; test/media/colour-native.test.ts compares every colour).
  const double max = hi / 255.0;
  const double min = lo / 255.0;
  const double dlt = max - min;
  double q;
  double h;
  if (hi == r) {
    const double d = g / 255.0 - b / 255.0;
    q = d / dlt;
    h = 60 * q;
  } else if (hi == g) {
    const double d = b / 255.0 - r / 255.0;
    q = d / dlt + 2;
    h = 60 * q;
  } else {
    const double d = r / 255.0 - g / 255.0;
    q = d / dlt + 4;
    h = 60 * q;
  }
  if (h < 0) h += 360;
  if (sv == kHueDecidesBrownPossible && h >= 10 && h < 45) return 3;
  if (h < 12 || h >= 340) return 4;
  if (h < 40) return 5;
  if (h < 68) return 6;
  if (h < 165) return 7;
  if (h < 255) return 8;
  if (h < 295) return 9;
  return 10;
}

uint8_t DominantColour(const RgbView& view, const ColourGrid& grid) {
  int votes[kColourCount] = {};
  uint8_t seen[kColourCount];
  int n_seen = 0;
  const int step = grid.step < 1 ? 1 : grid.step;
  for (int y = grid.y0; y < grid.y1; y += step) {
    const uint8_t* row = view.data + static_cast<size_t>(y) * static_cast<size_t>(view.stride);
    for (int x = grid.x0; x < grid.x1; x += step) {
      const uint8_t* p = row + 3 * static_cast<size_t>(x);
      const uint8_t k = ColourIndex(p[0], p[1], p[2]);
      if (votes[k]++ == 0) seen[n_seen++] = k;
    }
  }
  uint8_t best = kNoColour;
  int most = 0;
  for (int i = 0; i < n_seen; i++)
    if (votes[seen[i]] > most) {
      most = votes[seen[i]];
      best = seen[i];
    }
  return best;
}

}  // namespace sightflow::image
