// Module entry: registration only (as in sharp). Work lives in native/core, bindings in *_binding.cc.
#include "bindings.h"

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  sightflow::InitDecode(env, exports);
  sightflow::InitImage(env, exports);
  sightflow::InitTrack(env, exports);
  sightflow::InitVectorIndex(env, exports);
  return exports;
}

NODE_API_MODULE(sightflow, Init)
