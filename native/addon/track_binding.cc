#include "bindings.h"

namespace sightflow {
void InitTrack(Napi::Env env, Napi::Object exports) { (void)env; (void)exports; }
}  // namespace sightflow
