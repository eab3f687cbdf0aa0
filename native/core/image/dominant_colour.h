// Dominant colour of a box: k-means in CIE Lab over a grid subsample, the largest cluster named with one of
// a small fixed vocabulary (what the describe endpoint and `attributes.color` report).
#pragma once
#include <string>

#include "rgb_image.h"

namespace sightflow::image {

struct DominantColourOptions {
  int max_samples = 1024;  // grid subsample of the box (about sqrt x sqrt points)
  int clusters = 3;        // k of k-means; 1 gives the mean colour
  float inset = 0.0f;      // fraction trimmed from each side first (0.1 keeps the central 80%: less background)
};

struct DominantColour {
  std::string name;       // red orange yellow green blue purple pink brown black white gray
  float rgb[3] = {0, 0, 0};  // mean sRGB of the winning cluster
  float lab[3] = {0, 0, 0};  // its CIE Lab (D65)
  float fraction = 0.0f;  // share of the samples in that cluster
};

// Returns an empty string on success or an error text (box outside the frame or empty). Inputs trusted.
std::string DominantColourOf(const RgbView& src, const BoxF& box, const DominantColourOptions& opts, DominantColour* out);

// sRGB 0..255 -> CIE Lab (D65). Exposed for tests.
void RgbToLab(float r, float g, float b, float lab[3]);

// The colour name of a Lab colour. Exposed for tests.
const char* NameLabColour(const float lab[3]);

}  // namespace sightflow::image
