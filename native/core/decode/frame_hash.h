// XXH64 (the xxHash specification's 64-bit hash, seed 0) of a frame's output bytes. A resumed decoder checks
// with it that the frame it found again is the one the cursor was taken after. The whole frame is hashed, not
// a sample of it: XXH64 reads eight bytes per step in four independent lanes, and its cost at 720p is in
// docs/video.md, "When a worker dies".
#pragma once
#include <cstddef>
#include <cstdint>

namespace sightflow::decode {

uint64_t frame_hash(const uint8_t* data, size_t size);

}  // namespace sightflow::decode
