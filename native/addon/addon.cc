// Module entry: registration only (as in sharp). Work lives in native/core, bindings in *_binding.cc.
// Built twice (binding.gyp): sightflow.node with the FFmpeg decoder, and sightflow_novideo.node with
// SIGHTFLOW_NO_VIDEO, which links neither decode_binding.cc nor FFmpeg, for hosts without FFmpeg's libraries.
// `features` says which build this is, so the TypeScript faces need not guess from missing exports.
#include "bindings.h"

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
#ifdef SIGHTFLOW_NO_VIDEO
  const bool video = false;
#else
  const bool video = true;
  sightflow::InitDecode(env, exports);
#endif
  sightflow::InitGpu(env, exports);
  sightflow::InitImage(env, exports);
  sightflow::InitTrack(env, exports);
  sightflow::InitVectorIndex(env, exports);
  Napi::Object features = Napi::Object::New(env);
  features.Set("video", Napi::Boolean::New(env, video));
  exports.Set("features", features);
  return exports;
}

NODE_API_MODULE(sightflow, Init)
