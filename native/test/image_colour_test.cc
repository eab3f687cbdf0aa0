// Unit tests of the colour names core: known pixels, a grid over padded rows (read under the sanitizers: no
// byte past a row's pixels), the tie rule and an empty grid. Every colour against colour.ts's rules is
// checked from Node (test/media/colour-native.test.ts).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "image/colour_names.h"

using namespace sightflow::image;

TEST_CASE("known pixels get their names") {
  CHECK(ColourIndex(0, 0, 0) == 0);        // black
  CHECK(ColourIndex(255, 255, 255) == 1);  // white
  CHECK(ColourIndex(128, 128, 128) == 2);  // gray
  CHECK(ColourIndex(120, 70, 20) == 3);    // brown
  CHECK(ColourIndex(255, 0, 0) == 4);      // red
  CHECK(ColourIndex(255, 140, 0) == 5);    // orange
  CHECK(ColourIndex(255, 230, 0) == 6);    // yellow
  CHECK(ColourIndex(0, 200, 0) == 7);      // green
  CHECK(ColourIndex(0, 0, 255) == 8);      // blue
  CHECK(ColourIndex(128, 0, 255) == 9);    // purple
  CHECK(ColourIndex(255, 0, 200) == 10);   // pink
}

TEST_CASE("a grid over padded rows: the most common name, a tie to the first sampled, nothing for no pixels") {
  const int w = 10, h = 6, stride = 3 * w + 5;
  // Exactly the bytes the view needs: the last row has no padding after it.
  std::vector<uint8_t> px(static_cast<size_t>(stride * (h - 1) + 3 * w), 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint8_t* p = px.data() + y * stride + 3 * x;
      if (x < 5) p[0] = 255;  // red on the left
      else p[2] = 255;        // blue on the right
    }
  const RgbView view{px.data(), w, h, stride, false};
  CHECK(DominantColour(view, {0, w, 0, h, 1}) == 4);  // a tie: red is sampled first
  CHECK(DominantColour(view, {4, w, 0, h, 1}) == 8);  // 1 red column, 5 blue
  CHECK(DominantColour(view, {9, w, h - 1, h, 1}) == 8);  // the last pixel alone
  CHECK(DominantColour(view, {0, w, 0, h, 3}) == 4);  // columns 0, 3, 6, 9: 2 red, 2 blue
  CHECK(DominantColour(view, {3, 3, 0, h, 1}) == kNoColour);
}
