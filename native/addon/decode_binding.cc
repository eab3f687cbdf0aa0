#include "bindings.h"

namespace sightflow {
void InitDecode(Napi::Env env, Napi::Object exports) { (void)env; (void)exports; }
}  // namespace sightflow
