// Letterbox: scale a frame to fit dst_width x dst_height keeping its aspect ratio, pad the rest, and write a
// normalised float32 tensor (or, for a model that normalises itself, its RGB bytes), all in one pass over the
// source (no intermediate RGB image).
#pragma once
#include <cstdint>
#include <string>

#include "rgb_image.h"

namespace sightflow::image {

struct LetterboxOptions {
  int dst_width = 640;
  int dst_height = 640;
  float pad[3] = {114.0f, 114.0f, 114.0f};  // pad colour in 0..255 RGB, normalised like pixels
  bool center = true;                       // false: content at the top-left, padding right/bottom
  bool scale_up = true;                     // false: never enlarge small frames (scale capped at 1)
  TensorFormat format;
};

// Maps letterboxed coordinates back to the source: x_src = (x - pad_x) / scale (same for y).
struct LetterboxInfo {
  float scale = 1.0f;
  int pad_x = 0;
  int pad_y = 0;
  int content_width = 0;
  int content_height = 0;
};

// out holds 3 * dst_width * dst_height floats. Inputs are trusted (the binding checks them); returns an
// empty string on success or an error text.
std::string Letterbox(const RgbView& src, const LetterboxOptions& opts, float* out, LetterboxInfo* info);

// The same geometry written as bytes for a model that normalises its input itself: out holds 3 * dst_width *
// dst_height bytes, RGB, NHWC; opts.format is not read. Each byte is Letterbox's value under scale 1, mean 0,
// std 1 (RGB, NHWC), rounded to the nearest whole number (halves up); the padding is opts.pad rounded so.
std::string LetterboxBytes(const RgbView& src, const LetterboxOptions& opts, uint8_t* out, LetterboxInfo* info);

}  // namespace sightflow::image
