#include "orient.h"

#include <cstddef>
#include <cstring>

namespace sightflow::image {

void OrientRows(const uint8_t* rows, int y0, int count, int w, int h, int orientation, uint8_t* dst) {
  const ptrdiff_t W = w, H = h;
  // Stored pixel (x, y) goes to upright (x', y'): x' = ax x + bx y + cx, y' = ay x + by y + cy.
  ptrdiff_t ax = 1, bx = 0, cx = 0, ay = 0, by = 1, cy = 0;
  switch (orientation) {
    case 2: ax = -1, cx = W - 1; break;                            // mirrored left-right
    case 3: ax = -1, cx = W - 1, by = -1, cy = H - 1; break;       // turned half
    case 4: by = -1, cy = H - 1; break;                            // mirrored top-bottom
    case 5: ax = 0, bx = 1, ay = 1, by = 0; break;                 // transposed
    case 6: ax = 0, bx = -1, cx = H - 1, ay = 1, by = 0; break;    // to be turned a quarter clockwise
    case 7: ax = 0, bx = -1, cx = H - 1, ay = -1, by = 0, cy = W - 1; break;  // transversed
    case 8: ax = 0, bx = 1, ay = -1, by = 0, cy = W - 1; break;    // to be turned a quarter anticlockwise
    default: break;
  }
  const ptrdiff_t uw = OrientationSwapsSides(orientation) ? H : W;
  if (!OrientationSwapsSides(orientation)) {
    // Each stored row is one upright row, forwards or backwards.
    for (ptrdiff_t i = 0; i < count; ++i) {
      const ptrdiff_t y = y0 + i;
      const uint8_t* s = rows + 3 * i * W;
      uint8_t* o = dst + 3 * ((by * y + cy) * uw);
      if (ax == 1) {
        std::memcpy(o, s, static_cast<size_t>(3 * W));
        continue;
      }
      for (ptrdiff_t x = 0; x < W; ++x) {
        uint8_t* p = o + 3 * (W - 1 - x);
        p[0] = s[3 * x];
        p[1] = s[3 * x + 1];
        p[2] = s[3 * x + 2];
      }
    }
    return;
  }
  // A quarter turn: stored column x is upright row y', and the strip's rows are a run of that row's pixels, so
  // each upright row is written a run at a time (a strip of 64 rows writes 192 bytes to each).
  for (ptrdiff_t x = 0; x < W; ++x) {
    uint8_t* row = dst + 3 * ((ay * x + cy) * uw);
    for (ptrdiff_t i = 0; i < count; ++i) {
      const uint8_t* s = rows + 3 * (i * W + x);
      uint8_t* p = row + 3 * (bx * (y0 + i) + cx);
      p[0] = s[0];
      p[1] = s[1];
      p[2] = s[2];
    }
  }
}

}  // namespace sightflow::image
