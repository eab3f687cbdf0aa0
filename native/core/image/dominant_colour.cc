#include "dominant_colour.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace sightflow::image {
namespace {

float SrgbToLinear(float c) {
  c /= 255.0f;
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

float LabF(float t) {
  constexpr float kDelta = 6.0f / 29.0f;
  return t > kDelta * kDelta * kDelta ? std::cbrt(t) : t / (3.0f * kDelta * kDelta) + 4.0f / 29.0f;
}

struct Prototype {
  const char* name;
  float lab[3];
};

// Named sRGB anchors converted once; chromatic colours are named by the nearest anchor. Several anchors per
// name cover light/dark variants (navy and sky are both blue, maroon is red, olive is green).
const std::vector<Prototype>& Prototypes() {
  static const std::vector<Prototype> table = [] {
    struct Src {
      const char* name;
      float r, g, b;
    };
    const Src src[] = {
        {"red", 255, 0, 0},      {"red", 200, 20, 20},     {"red", 139, 0, 0},       {"red", 220, 20, 60},
        {"orange", 255, 165, 0}, {"orange", 255, 140, 0},  {"orange", 255, 110, 30}, {"orange", 230, 120, 50},
        {"yellow", 255, 255, 0}, {"yellow", 255, 215, 0},  {"yellow", 240, 230, 90}, {"yellow", 200, 190, 40},
        {"green", 0, 128, 0},    {"green", 0, 255, 0},     {"green", 34, 139, 34},   {"green", 50, 205, 50},
        {"green", 0, 90, 0},     {"green", 107, 142, 35},  {"green", 46, 139, 87},   {"green", 144, 238, 144},
        {"blue", 0, 0, 255},     {"blue", 0, 0, 128},      {"blue", 30, 144, 255},   {"blue", 0, 191, 255},
        {"blue", 70, 130, 180},  {"blue", 0, 200, 220},    {"blue", 0, 128, 128},    {"blue", 135, 206, 235},
        {"blue", 65, 105, 225},  {"blue", 0, 0, 80},       {"blue", 25, 25, 112},
        {"purple", 128, 0, 128},  {"purple", 148, 0, 211},  {"purple", 138, 43, 226},
        {"purple", 255, 0, 255}, {"purple", 75, 0, 130},   {"purple", 180, 120, 220}, {"pink", 255, 192, 203},
        {"pink", 255, 105, 180}, {"pink", 255, 20, 147},   {"pink", 219, 112, 147},  {"pink", 250, 160, 170},
        {"brown", 139, 69, 19},  {"brown", 160, 82, 45},   {"brown", 101, 67, 33},   {"brown", 120, 80, 50},
        {"brown", 165, 110, 60}, {"brown", 90, 50, 30},
    };
    std::vector<Prototype> out;
    for (const Src& s : src) {
      Prototype p{s.name, {0, 0, 0}};
      RgbToLab(s.r, s.g, s.b, p.lab);
      out.push_back(p);
    }
    return out;
  }();
  return table;
}

float Dist2(const float* a, const float* b) {
  const float d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
  return d0 * d0 + d1 * d1 + d2 * d2;
}

}  // namespace

void RgbToLab(float r, float g, float b, float lab[3]) {
  const float rl = SrgbToLinear(r), gl = SrgbToLinear(g), bl = SrgbToLinear(b);
  const float x = (0.4124564f * rl + 0.3575761f * gl + 0.1804375f * bl) / 0.95047f;
  const float y = 0.2126729f * rl + 0.7151522f * gl + 0.0721750f * bl;
  const float z = (0.0193339f * rl + 0.1191920f * gl + 0.9503041f * bl) / 1.08883f;
  const float fx = LabF(x), fy = LabF(y), fz = LabF(z);
  lab[0] = 116.0f * fy - 16.0f;
  lab[1] = 500.0f * (fx - fy);
  lab[2] = 200.0f * (fy - fz);
}

const char* NameLabColour(const float lab[3]) {
  const float l = lab[0];
  const float chroma = std::sqrt(lab[1] * lab[1] + lab[2] * lab[2]);
  // Achromatic first: without chroma the hue is noise.
  if (chroma < 12.0f) return l > 88.0f ? "white" : (l < 22.0f ? "black" : "gray");
  if (l < 15.0f && chroma < 25.0f) return "black";  // very dark tints read as black; navy (L 10, C 45) stays blue
  const Prototype* best = nullptr;
  float best_d = std::numeric_limits<float>::max();
  for (const Prototype& p : Prototypes()) {
    // Lightness counts half: a colour's name depends more on hue/chroma than on how bright it is.
    const float dl = 0.5f * (lab[0] - p.lab[0]), da = lab[1] - p.lab[1], db = lab[2] - p.lab[2];
    const float d = dl * dl + da * da + db * db;
    if (d < best_d) {
      best_d = d;
      best = &p;
    }
  }
  return best->name;
}

std::string DominantColourOf(const RgbView& src, const BoxF& box, const DominantColourOptions& opts, DominantColour* out) {
  const float iw = (box.x2 - box.x1) * opts.inset, ih = (box.y2 - box.y1) * opts.inset;
  const float x1 = std::max(0.0f, box.x1 + iw), y1 = std::max(0.0f, box.y1 + ih);
  const float x2 = std::min(static_cast<float>(src.width), box.x2 - iw);
  const float y2 = std::min(static_cast<float>(src.height), box.y2 - ih);
  if (!(x2 - x1 >= 1.0f) || !(y2 - y1 >= 1.0f)) return "box has no pixels inside the image";

  // Grid subsample keeping the box's aspect: nx * ny <= max_samples.
  const float w = x2 - x1, h = y2 - y1;
  const float per_px = std::sqrt(static_cast<float>(std::max(1, opts.max_samples)) / (w * h));
  const int nx = std::clamp(static_cast<int>(w * per_px), 1, static_cast<int>(w));
  const int ny = std::clamp(static_cast<int>(h * per_px), 1, static_cast<int>(h));
  const size_t n = static_cast<size_t>(nx) * static_cast<size_t>(ny);
  std::vector<std::array<float, 3>> lab(n), rgb(n);
  size_t i = 0;
  for (int gy = 0; gy < ny; ++gy) {
    const int y = std::min(src.height - 1, static_cast<int>(y1 + (static_cast<float>(gy) + 0.5f) * h / static_cast<float>(ny)));
    for (int gx = 0; gx < nx; ++gx, ++i) {
      const int x = std::min(src.width - 1, static_cast<int>(x1 + (static_cast<float>(gx) + 0.5f) * w / static_cast<float>(nx)));
      const uint8_t* p = src.data + static_cast<size_t>(y) * static_cast<size_t>(src.stride) + 3 * static_cast<size_t>(x);
      rgb[i] = {static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2])};
      RgbToLab(rgb[i][0], rgb[i][1], rgb[i][2], lab[i].data());
    }
  }

  // Deterministic farthest-point seeding, then Lloyd iterations.
  const int k = std::clamp(opts.clusters, 1, static_cast<int>(std::min<size_t>(n, 8)));
  std::vector<std::array<float, 3>> centres;
  centres.push_back(lab[0]);
  while (static_cast<int>(centres.size()) < k) {
    size_t far = 0;
    float far_d = -1.0f;
    for (size_t j = 0; j < n; ++j) {
      float d = std::numeric_limits<float>::max();
      for (const auto& c : centres) d = std::min(d, Dist2(lab[j].data(), c.data()));
      if (d > far_d) {
        far_d = d;
        far = j;
      }
    }
    if (far_d <= 1e-6f) break;  // fewer distinct colours than k
    centres.push_back(lab[far]);
  }
  const size_t kk = centres.size();
  std::vector<int> label(n, 0);
  std::vector<double> sum(kk * 3);
  std::vector<size_t> count(kk);
  for (int iter = 0; iter < 12; ++iter) {
    bool changed = false;
    for (size_t j = 0; j < n; ++j) {
      int best = 0;
      float best_d = std::numeric_limits<float>::max();
      for (size_t c = 0; c < kk; ++c) {
        const float d = Dist2(lab[j].data(), centres[c].data());
        if (d < best_d) {
          best_d = d;
          best = static_cast<int>(c);
        }
      }
      changed = changed || label[j] != best;
      label[j] = best;
    }
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(count.begin(), count.end(), 0);
    for (size_t j = 0; j < n; ++j) {
      const size_t c = static_cast<size_t>(label[j]);
      for (int d = 0; d < 3; ++d) sum[c * 3 + static_cast<size_t>(d)] += lab[j][static_cast<size_t>(d)];
      ++count[c];
    }
    for (size_t c = 0; c < kk; ++c) {
      if (count[c] == 0) continue;
      for (int d = 0; d < 3; ++d) centres[c][static_cast<size_t>(d)] = static_cast<float>(sum[c * 3 + static_cast<size_t>(d)] / static_cast<double>(count[c]));
    }
    if (!changed && iter > 0) break;
  }
  size_t win = 0;
  for (size_t c = 1; c < kk; ++c)
    if (count[c] > count[win]) win = c;

  double mean_rgb[3] = {0, 0, 0};
  for (size_t j = 0; j < n; ++j)
    if (static_cast<size_t>(label[j]) == win)
      for (int d = 0; d < 3; ++d) mean_rgb[d] += rgb[j][static_cast<size_t>(d)];
  for (int d = 0; d < 3; ++d) {
    out->rgb[d] = static_cast<float>(mean_rgb[d] / static_cast<double>(std::max<size_t>(1, count[win])));
    out->lab[d] = centres[win][static_cast<size_t>(d)];
  }
  out->fraction = static_cast<float>(count[win]) / static_cast<float>(n);
  out->name = NameLabColour(out->lab);
  return {};
}

}  // namespace sightflow::image
