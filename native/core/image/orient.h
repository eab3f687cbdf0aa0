// EXIF orientation applied to packed RGB24: the upright image a viewer shows for a photo stored turned or
// mirrored (orientations 2-8; 1 is a copy). Why here: a camera or phone photo stored turned went through the
// generic image library's whole pipeline only to be turned, at several times the CPU of decoding it here.
#pragma once
#include <cstdint>

namespace sightflow::image {

// Whether the orientation (1-8) turns the image a quarter, so the upright width is the stored height.
inline bool OrientationSwapsSides(int orientation) { return orientation >= 5 && orientation <= 8; }

// Writes `rows` stored rows (w pixels each, from stored row y0 of an image w x h) to where they belong in the
// upright image dst (h x w for orientations 5-8, else w x h; it holds w * h * 3 bytes and does not overlap
// rows). So a decoder can place each strip of rows as it reads it, without a stored copy of the whole image.
// Orientation 1 (and any value outside 2-8) places the rows as they are.
void OrientRows(const uint8_t* rows, int y0, int count, int w, int h, int orientation, uint8_t* dst);

// The whole stored image (w x h) upright into dst: OrientRows over every row.
inline void Orient(const uint8_t* src, int w, int h, int orientation, uint8_t* dst) {
  OrientRows(src, 0, h, w, h, orientation, dst);
}

}  // namespace sightflow::image
