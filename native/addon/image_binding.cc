#include "bindings.h"

namespace sightflow {
void InitImage(Napi::Env env, Napi::Object exports) { (void)env; (void)exports; }
}  // namespace sightflow
