#include "vectors/dot_i8.h"

#include <cstddef>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SIGHTFLOW_HAVE_AVX2_KERNEL 1
#endif

namespace sightflow::vectors {

namespace {
constexpr float kScale = 1.0f / (127.0f * 127.0f);
}

float DotI8DistanceScalar(std::uintptr_t a, std::uintptr_t b, std::uintptr_t dimensions) {
  const auto* x = reinterpret_cast<const std::int8_t*>(a);
  const auto* y = reinterpret_cast<const std::int8_t*>(b);
  std::int32_t dot = 0;
  for (std::size_t i = 0; i < dimensions; i++) dot += std::int32_t(x[i]) * std::int32_t(y[i]);
  return 1.0f - float(dot) * kScale;
}

#if SIGHTFLOW_HAVE_AVX2_KERNEL
namespace {
// 32 elements a step: sign-extend to int16, multiply-add pairs into int32 lanes (exact: |x*y| <= 127^2, and
// 2 * 127^2 * dimensions / 16 stays far from int32 overflow for any realistic dimension count).
__attribute__((target("avx2"))) float DotI8DistanceAvx2(std::uintptr_t a, std::uintptr_t b, std::uintptr_t dimensions) {
  const auto* x = reinterpret_cast<const std::int8_t*>(a);
  const auto* y = reinterpret_cast<const std::int8_t*>(b);
  __m256i acc0 = _mm256_setzero_si256();
  __m256i acc1 = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 32 <= dimensions; i += 32) {
    __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    __m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i)));
    __m256i x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i + 16)));
    __m256i y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i + 16)));
    acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(x0, y0));
    acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(x1, y1));
  }
  __m256i acc = _mm256_add_epi32(acc0, acc1);
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(1, 0, 3, 2)));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(2, 3, 0, 1)));
  std::int32_t dot = _mm_cvtsi128_si32(sum);
  for (; i < dimensions; i++) dot += std::int32_t(x[i]) * std::int32_t(y[i]);
  return 1.0f - float(dot) * kScale;
}
}  // namespace
#endif

DotI8Fn DotI8Distance() {
#if SIGHTFLOW_HAVE_AVX2_KERNEL
  static const DotI8Fn chosen = __builtin_cpu_supports("avx2") ? &DotI8DistanceAvx2 : &DotI8DistanceScalar;
  return chosen;
#else
  return &DotI8DistanceScalar;
#endif
}

}  // namespace sightflow::vectors
