// JPEG to packed RGB24 with libjpeg-turbo. An uploaded photo decoded here took 3.7-3.9 ms of CPU where the
// generic image library's pipeline took 18-19 ms (a 640x427, 225 KB COCO photo), which was the largest cost
// of a detect request after the model itself.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sightflow::image {

enum class JpegStatus {
  kOk,
  // Well-formed but in a form left to a colour-managed decoder (CMYK, YCCK): the caller decodes it otherwise.
  kUnsupported,
  // Corrupt, cut off, over the pixel limit or hostile (too many progressive scans): the reason says which.
  kFailed,
};

struct JpegImage {
  int width = 0;  // the decoded size: the file's own, or ceil(its size / shrink); upright
  int height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3 bytes, no row padding; empty when decoded into a target
  bool in_target = false;    // the pixels went to the caller's memory (JpegTarget), not to rgb
};

// Caller-owned memory to decode into, used when it holds width * height * 3 bytes (else rgb is allocated).
// Why: a fresh megabyte per photo is memory the JavaScript heap accounts as external, and under load that
// alone set off its collections; the server reuses such buffers.
struct JpegTarget {
  uint8_t* data = nullptr;
  size_t size = 0;
};

// The shrinks the decoder makes while it decodes (libjpeg's scaled inverse DCT): 1, 2, 4 or 8.
bool IsJpegShrink(int shrink);

// Decodes baseline and progressive JPEG (greyscale, YCbCr or RGB) to RGB24. A file cut off before its end
// fails rather than decoding with grey rows; other recoverable damage libjpeg warns about is decoded as
// libjpeg repairs it. ICC profiles are NOT applied: callers route such files elsewhere.
// With shrink > 1 the image is decoded at 1/shrink of its size, ceil(width / shrink) x ceil(height / shrink):
// each output pixel is the average of the shrink x shrink source pixels it covers, as the scaled inverse DCT
// gives it, at a fraction of a full decode's CPU and memory (why: a consumer that resizes a large photo down
// anyway need not have every pixel made). max_pixels bounds the file's own size, since the entropy decoding
// still reads every coefficient. With orientation 2-8 (the file's EXIF orientation, which the caller reads) the
// image comes out upright (orient.h): width and height are then the upright ones.
JpegStatus DecodeJpegRgb(const uint8_t* data, size_t size, int64_t max_pixels, JpegImage* out, std::string* reason,
                         JpegTarget target = {}, int shrink = 1, int orientation = 1);

}  // namespace sightflow::image
