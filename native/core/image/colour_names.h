// Colour names of pixels and the most common name over a grid of a box's pixels: the rules of
// src/media/colour.ts, with the same double arithmetic, so a pixel gets the same name on either side.
#pragma once
#include <cstdint>

#include "image/rgb_image.h"

namespace sightflow::image {

// The names' indices, in src/media/colour.ts's order: black, white, gray, brown, red, orange, yellow, green,
// blue, purple, pink. kNoColour: an empty grid.
constexpr uint8_t kColourCount = 11;
constexpr uint8_t kNoColour = 255;

uint8_t ColourIndex(int r, int g, int b);

// The pixels sampled: x0 <= x < x1 and y0 <= y < y1, every step-th column and row from x0 and y0, row by row.
// The caller clamps it inside the view.
struct ColourGrid {
  int x0 = 0, x1 = 0, y0 = 0, y1 = 0, step = 1;
};

// The name most of the grid's pixels have; a tie goes to the name sampled first.
uint8_t DominantColour(const RgbView& view, const ColourGrid& grid);

}  // namespace sightflow::image
