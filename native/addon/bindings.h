// Each *_binding.cc registers its exports here; addon.cc only calls them.
#pragma once
#include <napi.h>

namespace sightflow {
void InitDecode(Napi::Env env, Napi::Object exports);
void InitGpu(Napi::Env env, Napi::Object exports);
void InitImage(Napi::Env env, Napi::Object exports);
void InitTrack(Napi::Env env, Napi::Object exports);
void InitVectorIndex(Napi::Env env, Napi::Object exports);
}  // namespace sightflow
