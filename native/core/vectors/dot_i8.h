// The vector index's distance: 1 - <a, b> / 127^2 over int8 vectors (unit vectors quantised by x * 127, so
// this is cosine distance up to rounding). Picked once per process: AVX2 where the CPU has it (the build stays
// portable: no -march flag, the kernel carries its own target attribute), a plain loop otherwise.
#pragma once
#include <cstdint>

namespace sightflow::vectors {

// USearch's "array, array, size" metric signature: both pointers are int8 vectors of `dimensions` elements.
using DotI8Fn = float (*)(std::uintptr_t a, std::uintptr_t b, std::uintptr_t dimensions);

DotI8Fn DotI8Distance();
// The portable kernel, for tests to compare the selected one against.
float DotI8DistanceScalar(std::uintptr_t a, std::uintptr_t b, std::uintptr_t dimensions);

}  // namespace sightflow::vectors
