// sightflow_ort.node: ONNX Runtime driven through its own C/C++ API, the inference engine that reaches what
// onnxruntime-node's binding cannot ask of a GPU provider (the binding passes CUDA and TensorRT a device id and
// nothing else): TensorRT in FP16 with its engine and timing caches kept on disk, and the CUDA provider's cuDNN
// search and stream settings. It links the very libonnxruntime.so.1 that onnxruntime-node ships, so one process
// has one ONNX Runtime whichever engine a model uses. Built apart from the main addon, by
// scripts/lib/build-ort-engine.sh, because ONNX Runtime's headers come from a large npm package; an opt-in
// build for GPU hosts (src/inference/native-session.ts is its face).
//
// Exports: version, apiVersion, availableProviders(), createSession(source, options) -> Promise<Session>.
// A Session has inputNames, outputNames, inputMetadata, outputMetadata (as onnxruntime-node gives them),
// run(feeds, fetch?) -> Promise<{name: {type, dims, data}}> (on the libuv pool; inputs are read in place, so
// their memory must not change until the promise settles), hostBuffer(bytes) (page-locked memory for inputs,
// where pinnedHost), graphStatus() and release(). Errors carry a code,
// ERR_SIGHTFLOW_INFERENCE_INVALID_ARG or ERR_SIGHTFLOW_INFERENCE_FAILED.
#define ORT_API_MANUAL_INIT
#include <onnxruntime_cxx_api.h>

#include <napi.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

Napi::Error Coded(Napi::Env env, const char* reason, const std::string& message) {
  Napi::Error e = std::strcmp(reason, "INVALID_ARG") == 0 ? Napi::TypeError::New(env, message) : Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, std::string("ERR_SIGHTFLOW_INFERENCE_") + reason));
  return e;
}

// The API table of the loaded library, asked for at the version these headers were written for (a library
// older than that has no such table, and every call says so rather than crashing).
const OrtApi* Api() {
  static const OrtApi* api = [] {
    const OrtApi* a = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    if (a) Ort::InitApi(a);
    return a;
  }();
  return api;
}

Ort::Env& Environment() {
  static std::once_flag once;
  static std::unique_ptr<Ort::Env> env;
  std::call_once(once, [] { env = std::make_unique<Ort::Env>(ORT_LOGGING_LEVEL_WARNING, "sightflow"); });
  return *env;
}

struct ElementType {
  const char* name;
  ONNXTensorElementDataType onnx;
  napi_typedarray_type array;
  size_t bytes;
};

const ElementType kTypes[] = {
    {"float32", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, napi_float32_array, 4},
    {"uint8", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, napi_uint8_array, 1},
    {"int8", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, napi_int8_array, 1},
    {"uint16", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, napi_uint16_array, 2},
    {"int16", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, napi_int16_array, 2},
    {"int32", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, napi_int32_array, 4},
    {"int64", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, napi_bigint64_array, 8},
    {"bool", ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, napi_uint8_array, 1},
    {"float16", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, napi_uint16_array, 2},
    {"float64", ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, napi_float64_array, 8},
    {"uint32", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, napi_uint32_array, 4},
    {"uint64", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, napi_biguint64_array, 8},
};

const ElementType* ByName(const std::string& name) {
  for (const auto& t : kTypes)
    if (name == t.name) return &t;
  return nullptr;
}

const ElementType* ByOnnx(ONNXTensorElementDataType onnx) {
  for (const auto& t : kTypes)
    if (t.onnx == onnx) return &t;
  return nullptr;
}

struct ValueInfo {
  std::string name;
  bool tensor = false;
  std::string type;             // empty for a type this engine does not pass
  std::vector<int64_t> dims;    // -1 where free
  std::vector<std::string> symbolic;  // the free dimensions' names ("" where unnamed)
};

ValueInfo Describe(const std::string& name, const Ort::TypeInfo& info) {
  ValueInfo v;
  v.name = name;
  v.tensor = info.GetONNXType() == ONNX_TYPE_TENSOR;
  if (!v.tensor) return v;
  auto shape = info.GetTensorTypeAndShapeInfo();
  const ElementType* t = ByOnnx(shape.GetElementType());
  if (t) v.type = t->name;
  v.dims = shape.GetShape();
  std::vector<const char*> sym(v.dims.size(), nullptr);
  if (!sym.empty()) shape.GetSymbolicDimensions(sym.data(), sym.size());
  for (const char* s : sym) v.symbolic.emplace_back(s ? s : "");
  return v;
}

struct SessionOptionsIn {
  std::vector<std::string> providers;  // in order of preference; cpu is always last
  int device = 0;
  int intraOpThreads = 0;
  std::string cudnnSearch = "EXHAUSTIVE";
  bool fp16 = false;
  std::string cacheDir;  // TensorRT's engine and timing caches; empty: none kept
  // TensorRT's optimisation profile ("input:1x3x640x640,..."): one engine for every batch up to the most, built
  // once, rather than one built again for each new batch size. Empty: TensorRT's own (the shapes it meets).
  std::string profileMin, profileOpt, profileMax;
  bool cudaGraph = false;  // CUDA provider: capture each input shape's run as a CUDA graph and replay it
  // The graph path's fixed buffers and binding in host memory, on the CPU: how that path is tested without a card.
  bool fixedBuffers = false;
};

// The CUDA runtime's few calls the graph path and page-locked inputs make, from the libcudart the GPU provider
// has loaded (never linked: a host without CUDA loads this engine all the same).
struct CudaRuntime {
  int (*memcpy)(void*, const void*, size_t, int) = nullptr;
  int (*streamSynchronize)(void*) = nullptr;
  int (*setDevice)(int) = nullptr;
  int (*hostAlloc)(void**, size_t, unsigned) = nullptr;
  int (*freeHost)(void*) = nullptr;
  bool ok() const { return memcpy && streamSynchronize && setDevice; }
  bool pinnable() const { return hostAlloc && freeHost; }
};

// The same calls on host memory, for fixedBuffers.
int HostMemcpy(void* to, const void* from, size_t n, int) {
  std::memcpy(to, from, n);
  return 0;
}
int HostNoop(void*) { return 0; }
int HostSetDevice(int) { return 0; }
int HostAlloc(void** p, size_t n, unsigned) {
  *p = std::aligned_alloc(4096, (n + 4095) / 4096 * 4096);
  return *p ? 0 : 2;
}
int HostFree(void* p) {
  std::free(p);
  return 0;
}
const CudaRuntime kHostRuntime{HostMemcpy, HostNoop, HostSetDevice, HostAlloc, HostFree};

CudaRuntime FindCudaRuntime() {
  CudaRuntime r;
  for (const char* so : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}) {
    void* h = dlopen(so, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;
    r.memcpy = reinterpret_cast<decltype(r.memcpy)>(dlsym(h, "cudaMemcpy"));
    r.streamSynchronize = reinterpret_cast<decltype(r.streamSynchronize)>(dlsym(h, "cudaStreamSynchronize"));
    r.setDevice = reinterpret_cast<decltype(r.setDevice)>(dlsym(h, "cudaSetDevice"));
    r.hostAlloc = reinterpret_cast<decltype(r.hostAlloc)>(dlsym(h, "cudaHostAlloc"));
    r.freeHost = reinterpret_cast<decltype(r.freeHost)>(dlsym(h, "cudaFreeHost"));
    if (r.ok()) return r;
  }
  return CudaRuntime{};
}

// One input shape's CUDA graph: inputs and outputs in card memory at addresses that stay (a replayed graph
// reads and writes where it was captured), bound once. The session's runMu holds it for a run.
struct GraphSlot {
  int id = 0;
  std::vector<void*> in, out;
  std::vector<size_t> inBytes, outBytes;
  std::vector<std::vector<int64_t>> outShapes;
  std::unique_ptr<Ort::IoBinding> binding;
};

// The shared state of one session: the JS object and the runs in flight hold it, so a release while a run is on
// the pool frees the session when that run ends.
struct State {
  std::unique_ptr<Ort::Session> session;
  std::vector<ValueInfo> inputs, outputs;
  // The CUDA graph path (SessionOptionsIn::cudaGraph on the CUDA provider), or why it is off; `bound`: runs go
  // through a shape's fixed buffers and binding (the graph path, or fixedBuffers in host memory).
  bool bound = false;
  bool cudaGraph = false;
  std::string cudaGraphNote;
  int device = 0;
  CudaRuntime cuda;
  // Page-locked host memory for the caller's inputs (hostBuffer()): a card copies from it directly, at the bus's
  // speed, where a copy from pageable memory goes through the driver's staging buffers. On a GPU provider with
  // libcudart loaded; with fixedBuffers on the CPU, page-aligned host memory stands in for it.
  CudaRuntime host;
  bool pinned = false;
  std::unique_ptr<Ort::MemoryInfo> cudaMem;
  std::unique_ptr<Ort::Allocator> cudaAlloc;
  // One bound run at a time: a shape's buffers are its graph's, and ONNX Runtime captures one graph at a time.
  std::mutex runMu;
  // Set when a bound run failed: the session runs plain runs since (read before taking runMu).
  std::atomic<bool> graphFailed{false};
  // cudaGraphNote once the session is made: written when a bound run fails, read by graphStatus() on the JS thread.
  std::mutex noteMu;
  std::map<std::string, std::unique_ptr<GraphSlot>> slots;

  // Host buffers (fixedBuffers) on 64-byte lines, as ONNX Runtime's own CPU allocations are.
  void* Alloc(size_t n) { return cudaAlloc ? cudaAlloc->Alloc(n) : std::aligned_alloc(64, (n + 63) / 64 * 64); }
  void Free(void* p) {
    if (cudaAlloc) cudaAlloc->Free(p);
    else std::free(p);
  }

  ~State() {
    // The card memory goes back through the allocator before the allocator and the session go.
    for (auto& [key, slot] : slots) {
      slot->binding.reset();
      for (void* p : slot->in) Free(p);
      for (void* p : slot->out) Free(p);
    }
    slots.clear();
    cudaAlloc.reset();
    session.reset();
  }
};

void AppendProviders(Ort::SessionOptions& so, const SessionOptionsIn& o) {
  const OrtApi& api = *Api();
  const std::string device = std::to_string(o.device);
  for (const auto& p : o.providers) {
    if (p == "tensorrt") {
      OrtTensorRTProviderOptionsV2* trt = nullptr;
      Ort::ThrowOnError(api.CreateTensorRTProviderOptions(&trt));
      std::unique_ptr<OrtTensorRTProviderOptionsV2, void (*)(OrtTensorRTProviderOptionsV2*)> hold(
          trt, [](OrtTensorRTProviderOptionsV2* x) { Api()->ReleaseTensorRTProviderOptions(x); });
      std::vector<std::string> keys = {"device_id", "trt_fp16_enable"};
      std::vector<std::string> vals = {device, o.fp16 ? "1" : "0"};
      if (!o.profileMin.empty()) {
        keys.emplace_back("trt_profile_min_shapes"), vals.emplace_back(o.profileMin);
        keys.emplace_back("trt_profile_opt_shapes"), vals.emplace_back(o.profileOpt);
        keys.emplace_back("trt_profile_max_shapes"), vals.emplace_back(o.profileMax);
      }
      if (!o.cacheDir.empty()) {
        for (const char* k : {"trt_engine_cache_enable", "trt_timing_cache_enable"}) keys.emplace_back(k), vals.emplace_back("1");
        for (const char* k : {"trt_engine_cache_path", "trt_timing_cache_path"}) keys.emplace_back(k), vals.emplace_back(o.cacheDir);
      }
      std::vector<const char*> k, v;
      for (size_t i = 0; i < keys.size(); i++) k.push_back(keys[i].c_str()), v.push_back(vals[i].c_str());
      Ort::ThrowOnError(api.UpdateTensorRTProviderOptions(trt, k.data(), v.data(), k.size()));
      so.AppendExecutionProvider_TensorRT_V2(*trt);
    } else if (p == "cuda") {
      OrtCUDAProviderOptionsV2* cuda = nullptr;
      Ort::ThrowOnError(api.CreateCUDAProviderOptions(&cuda));
      std::unique_ptr<OrtCUDAProviderOptionsV2, void (*)(OrtCUDAProviderOptionsV2*)> hold(
          cuda, [](OrtCUDAProviderOptionsV2* x) { Api()->ReleaseCUDAProviderOptions(x); });
      const char* keys[] = {"device_id", "cudnn_conv_algo_search", "do_copy_in_default_stream", "enable_cuda_graph"};
      const char* vals[] = {device.c_str(), o.cudnnSearch.c_str(), "1", o.cudaGraph ? "1" : "0"};
      Ort::ThrowOnError(api.UpdateCUDAProviderOptions(cuda, keys, vals, 4));
      so.AppendExecutionProvider_CUDA_V2(*cuda);
    }
    // cpu: ONNX Runtime's own, always there after the others.
  }
}

class SessionWrap : public Napi::ObjectWrap<SessionWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Session",
                       {InstanceMethod<&SessionWrap::Run>("run"), InstanceMethod<&SessionWrap::Release>("release"),
                        InstanceMethod<&SessionWrap::GraphStatus>("graphStatus"),
                        InstanceMethod<&SessionWrap::HostBuffer>("hostBuffer")});
  }
  explicit SessionWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SessionWrap>(info) {}
  std::shared_ptr<State> state;

 private:
  Napi::Value Run(const Napi::CallbackInfo& info);
  Napi::Value Release(const Napi::CallbackInfo& info) {
    state.reset();
    return info.Env().Undefined();
  }
  // {cudaGraph, fixedBuffers, note?} now: a bound run that failed turned them off, and the note says why.
  Napi::Value GraphStatus(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!state) throw Coded(env, "FAILED", "session released");
    const bool failed = state->graphFailed;
    Napi::Object o = Napi::Object::New(env);
    o.Set("cudaGraph", Napi::Boolean::New(env, state->cudaGraph && !failed));
    o.Set("fixedBuffers", Napi::Boolean::New(env, state->bound && !failed));
    std::lock_guard<std::mutex> lock(state->noteMu);
    if (!state->cudaGraphNote.empty()) o.Set("note", state->cudaGraphNote);
    return o;
  }
  // hostBuffer(bytes): an ArrayBuffer over page-locked host memory for inputs (freed with it, whatever becomes of
  // the session), or undefined where the session has none or the allocation is refused: the caller's own memory
  // serves as well, more slowly on a card.
  Napi::Value HostBuffer(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsNumber() || !(info[0].As<Napi::Number>().DoubleValue() >= 1))
      throw Coded(env, "INVALID_ARG", "Expected a positive byte count for hostBuffer");
    if (!state || !state->pinned) return env.Undefined();
    const size_t bytes = static_cast<size_t>(info[0].As<Napi::Number>().Int64Value());
    const CudaRuntime& rt = state->host;
    void* p = nullptr;
    if (rt.setDevice(state->device) != 0 || rt.hostAlloc(&p, bytes, 1 /* portable: every card's context */) != 0 || !p)
      return env.Undefined();
    auto free = rt.freeHost;
    return Napi::ArrayBuffer::New(
        env, p, bytes, [](Napi::Env, void* data, int (*f)(void*)) { f(data); }, reinterpret_cast<int (*)(void*)>(free));
  }
};

struct EnvData {
  Napi::FunctionReference sessionClass;
};

Napi::Array Names(Napi::Env env, const std::vector<ValueInfo>& list) {
  Napi::Array a = Napi::Array::New(env, list.size());
  for (size_t i = 0; i < list.size(); i++) a.Set(static_cast<uint32_t>(i), list[i].name);
  return a;
}

Napi::Array Metadata(Napi::Env env, const std::vector<ValueInfo>& list) {
  Napi::Array a = Napi::Array::New(env, list.size());
  for (size_t i = 0; i < list.size(); i++) {
    const ValueInfo& v = list[i];
    Napi::Object m = Napi::Object::New(env);
    m.Set("name", v.name);
    m.Set("isTensor", Napi::Boolean::New(env, v.tensor));
    if (v.tensor) {
      m.Set("type", v.type.empty() ? Napi::Value(env.Undefined()) : Napi::String::New(env, v.type));
      Napi::Array shape = Napi::Array::New(env, v.dims.size());
      for (size_t d = 0; d < v.dims.size(); d++) {
        if (v.dims[d] >= 0) shape.Set(static_cast<uint32_t>(d), Napi::Number::New(env, static_cast<double>(v.dims[d])));
        else if (!v.symbolic[d].empty()) shape.Set(static_cast<uint32_t>(d), v.symbolic[d]);
        else shape.Set(static_cast<uint32_t>(d), Napi::Number::New(env, -1));
      }
      m.Set("shape", shape);
    }
    a.Set(static_cast<uint32_t>(i), m);
  }
  return a;
}

// Work on the libuv pool whose end settles a promise; its failure rejects it with ERR_SIGHTFLOW_INFERENCE_FAILED.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, const char* name) : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void OnError(const Napi::Error& e) override { deferred_.Reject(Coded(Env(), "FAILED", e.Message()).Value()); }
  Napi::Promise::Deferred deferred_;
};

class CreateWorker : public PromiseWorker {
 public:
  CreateWorker(Napi::Env env, std::string path, std::vector<uint8_t> bytes, SessionOptionsIn opts)
      : PromiseWorker(env, "sightflow.ortCreateSession"), path_(std::move(path)), bytes_(std::move(bytes)), opts_(std::move(opts)) {}

  void Execute() override {
    try {
      state_ = std::make_shared<State>();
      state_->device = opts_.device;
      auto make = [&](bool graph) {
        Ort::SessionOptions so;
        so.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
        so.SetExecutionMode(ExecutionMode::ORT_SEQUENTIAL);
        if (opts_.intraOpThreads > 0) so.SetIntraOpNumThreads(opts_.intraOpThreads);
        so.SetInterOpNumThreads(1);
        // Idle intra-op threads that spin take cores from the rest of the process, as with the binding's sessions.
        so.AddConfigEntry("session.intra_op.allow_spinning", "0");
        SessionOptionsIn o = opts_;
        o.cudaGraph = graph;
        AppendProviders(so, o);
        return path_.empty() ? std::make_unique<Ort::Session>(Environment(), bytes_.data(), bytes_.size(), so)
                             : std::make_unique<Ort::Session>(Environment(), path_.c_str(), so);
      };
      bool cuda = false;
      for (const auto& p : opts_.providers) cuda = cuda || p == "cuda";
      bool graph = opts_.cudaGraph && cuda;
      if (opts_.cudaGraph && !cuda) state_->cudaGraphNote = "CUDA graphs need the cuda provider";
      if (graph) {
        // ONNX Runtime refuses graphs for a model with a node it leaves on the CPU: then it runs without.
        // Anything short of a session with its card allocator makes a session without graphs: the model still runs
        // on its card, and says why.
        try {
          state_->session = make(true);
          state_->cuda = FindCudaRuntime();
          if (!state_->cuda.ok()) throw std::runtime_error("the CUDA runtime the provider loaded was not found (libcudart)");
          state_->cudaMem = std::make_unique<Ort::MemoryInfo>("Cuda", OrtDeviceAllocator, opts_.device, OrtMemTypeDefault);
          state_->cudaAlloc = std::make_unique<Ort::Allocator>(*state_->session, *state_->cudaMem);
          state_->cudaGraph = state_->bound = true;
        } catch (const std::exception& e) {
          state_->cudaGraphNote = std::string("refused: ") + e.what();
          state_->cudaAlloc.reset();
          state_->cudaMem.reset();
          state_->session.reset();
        }
      }
      if (!state_->session) {
        state_->session = make(false);
        if (opts_.fixedBuffers && !cuda) {
          state_->bound = true;
          state_->cuda = kHostRuntime;
          state_->cudaMem = std::make_unique<Ort::MemoryInfo>(Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault));
        }
      }
      bool gpu = false;
      for (const auto& p : opts_.providers) gpu = gpu || p == "cuda" || p == "tensorrt";
      if (gpu) {
        // The provider has loaded libcudart by now; without it (a session that fell to the CPU) inputs stay pageable.
        CudaRuntime rt = state_->cuda.ok() ? state_->cuda : FindCudaRuntime();
        if (rt.ok() && rt.pinnable()) state_->host = rt, state_->pinned = true;
      } else if (opts_.fixedBuffers) {
        state_->host = kHostRuntime;
        state_->pinned = true;
      }
      bytes_.clear();
      bytes_.shrink_to_fit();
      Ort::AllocatorWithDefaultOptions alloc;
      Ort::Session& s = *state_->session;
      for (size_t i = 0; i < s.GetInputCount(); i++)
        state_->inputs.push_back(Describe(s.GetInputNameAllocated(i, alloc).get(), s.GetInputTypeInfo(i)));
      for (size_t i = 0; i < s.GetOutputCount(); i++)
        state_->outputs.push_back(Describe(s.GetOutputNameAllocated(i, alloc).get(), s.GetOutputTypeInfo(i)));
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Object obj = env.GetInstanceData<EnvData>()->sessionClass.New({});
    SessionWrap::Unwrap(obj)->state = state_;
    obj.Set("inputNames", Names(env, state_->inputs));
    obj.Set("outputNames", Names(env, state_->outputs));
    obj.Set("inputMetadata", Metadata(env, state_->inputs));
    obj.Set("outputMetadata", Metadata(env, state_->outputs));
    obj.Set("cudaGraph", Napi::Boolean::New(env, state_->cudaGraph));
    obj.Set("fixedBuffers", Napi::Boolean::New(env, state_->bound));
    obj.Set("pinnedHost", Napi::Boolean::New(env, state_->pinned));
    if (!state_->cudaGraphNote.empty()) obj.Set("cudaGraphNote", state_->cudaGraphNote);
    deferred_.Resolve(obj);
  }

 private:
  std::string path_;
  std::vector<uint8_t> bytes_;
  SessionOptionsIn opts_;
  std::shared_ptr<State> state_;
};

struct Feed {
  std::string name;
  const ElementType* type;
  std::vector<int64_t> dims;
  void* data;
  size_t bytes;
};

class RunWorker : public PromiseWorker {
 public:
  RunWorker(Napi::Env env, std::shared_ptr<State> state, std::vector<Feed> feeds, std::vector<std::string> fetch,
            Napi::Object keep)
      : PromiseWorker(env, "sightflow.ortRun"), state_(std::move(state)), feeds_(std::move(feeds)), fetch_(std::move(fetch)), keep_(Napi::Persistent(keep)) {}

  void Execute() override {
    try {
      // The caller's mistakes are the run's errors, never the bound path's.
      for (const auto& name : fetch_) {
        bool known = false;
        for (const auto& o : state_->outputs) known = known || o.name == name;
        if (!known) throw std::runtime_error("no output named " + name);
      }
      if (state_->bound && !state_->graphFailed) {
        for (const auto& i : state_->inputs) FeedFor(i.name);
        std::lock_guard<std::mutex> lock(state_->runMu);
        if (!state_->graphFailed) {
          try {
            return RunGraph();
          } catch (const std::exception& e) {
            // The session goes on without its bound path (on a card: without graphs), this run and the later
            // ones as plain runs, and graphStatus() says why.
            std::lock_guard<std::mutex> note(state_->noteMu);
            state_->cudaGraphNote = std::string("failed at a run, runs without since: ") + e.what();
            state_->graphFailed = true;
            out_.clear();
          }
        }
      }
      Ort::RunOptions plain{nullptr};
      if (state_->cudaGraph) {
        plain = Ort::RunOptions();
        plain.AddConfigEntry("gpu_graph_id", "-1");
      }
      Ort::MemoryInfo cpu = Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
      std::vector<Ort::Value> in;
      std::vector<const char*> inNames, outNames;
      for (auto& f : feeds_) {
        in.push_back(Ort::Value::CreateTensor(cpu, f.data, f.bytes, f.dims.data(), f.dims.size(), f.type->onnx));
        inNames.push_back(f.name.c_str());
      }
      for (auto& n : fetch_) outNames.push_back(n.c_str());
      std::vector<Ort::Value> values = state_->session->Run(plain, inNames.data(), in.data(),
                                                            in.size(), outNames.data(), outNames.size());
      for (size_t i = 0; i < values.size(); i++) {
        Out o;
        o.name = fetch_[i];
        if (!values[i].IsTensor()) throw std::runtime_error("output " + o.name + " is not a tensor");
        auto info = values[i].GetTensorTypeAndShapeInfo();
        o.type = ByOnnx(info.GetElementType());
        if (!o.type) throw std::runtime_error("output " + o.name + " has a type this engine does not pass");
        o.shape = info.GetShape();
        o.value = std::move(values[i]);
        out_.push_back(std::move(o));
      }
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Object result = Napi::Object::New(env);
    for (Out& o : out_) {
      size_t count = 1;
      for (auto d : o.shape) count *= static_cast<size_t>(d);
      // The answer is a copy the caller owns (and may transfer): ONNX Runtime's output, or the graph path's.
      Napi::ArrayBuffer buf = Napi::ArrayBuffer::New(env, count * o.type->bytes);
      const void* src = o.value ? o.value.GetTensorRawData() : o.bytes.data();
      if (count) std::memcpy(buf.Data(), src, count * o.type->bytes);
      napi_value arr;
      napi_create_typedarray(env, o.type->array, count, buf, 0, &arr);
      Napi::Array dims = Napi::Array::New(env, o.shape.size());
      for (size_t d = 0; d < o.shape.size(); d++) dims.Set(static_cast<uint32_t>(d), Napi::Number::New(env, static_cast<double>(o.shape[d])));
      Napi::Object t = Napi::Object::New(env);
      t.Set("type", o.type->name);
      t.Set("dims", dims);
      t.Set("data", Napi::Value(env, arr));
      result.Set(o.name, t);
    }
    out_.clear();
    deferred_.Resolve(result);
  }

 private:
  struct Out {
    std::string name;
    const ElementType* type = nullptr;
    std::vector<int64_t> shape;
    Ort::Value value{nullptr};   // ONNX Runtime's output, or
    std::vector<uint8_t> bytes;  // the graph path's copy from the card
  };

  // The inputs copied to the card at the addresses this shape's graph was captured with, the graph run (captured
  // on its first runs, replayed after), the fetched outputs copied back.
  void RunGraph() {
    State& st = *state_;
    std::string key;
    for (const auto& f : feeds_) {
      key += f.name + ":";
      for (auto d : f.dims) key += std::to_string(d) + ",";
      key += ";";
    }
    auto it = st.slots.find(key);
    if (it == st.slots.end()) it = st.slots.emplace(key, MakeSlot(static_cast<int>(st.slots.size()))).first;
    GraphSlot* slot = it->second.get();
    const CudaRuntime& cu = st.cuda;
    if (cu.setDevice(st.device) != 0) throw std::runtime_error("cudaSetDevice failed");
    for (size_t i = 0; i < st.inputs.size(); i++) {
      const Feed& f = FeedFor(st.inputs[i].name);
      if (cu.memcpy(slot->in[i], f.data, f.bytes, 1 /* host to device */) != 0)
        throw std::runtime_error("copying input " + f.name + " to the card failed");
    }
    // A copy from pageable memory may return before its transfer ends; the legacy stream's end is the transfer's.
    if (cu.streamSynchronize(nullptr) != 0) throw std::runtime_error("waiting for the input copies failed");
    Ort::RunOptions ro;
    if (st.cudaGraph) ro.AddConfigEntry("gpu_graph_id", std::to_string(slot->id).c_str());
    st.session->Run(ro, *slot->binding);
    slot->binding->SynchronizeOutputs();
    for (const auto& name : fetch_) {
      size_t k = 0;
      while (k < st.outputs.size() && st.outputs[k].name != name) k++;
      if (k == st.outputs.size()) throw std::runtime_error("no output named " + name);
      Out o;
      o.name = name;
      o.type = ByName(st.outputs[k].type);
      o.shape = slot->outShapes[k];
      o.bytes.resize(slot->outBytes[k]);
      if (cu.memcpy(o.bytes.data(), slot->out[k], slot->outBytes[k], 2 /* device to host */) != 0)
        throw std::runtime_error("copying output " + name + " from the card failed");
      out_.push_back(std::move(o));
    }
  }

  const Feed& FeedFor(const std::string& name) const {
    for (const auto& f : feeds_)
      if (f.name == name) return f;
    throw std::runtime_error("input " + name + " was not given");
  }

  // A new input shape's card memory and binding. Every output's shape must follow from the inputs' batch: the
  // graph writes where it was captured, so a shape known only at run time cannot be bound beforehand.
  std::unique_ptr<GraphSlot> MakeSlot(int id) {
    State& st = *state_;
    auto slot = std::make_unique<GraphSlot>();
    slot->id = id;
    slot->binding = std::make_unique<Ort::IoBinding>(*st.session);
    const int64_t batch = feeds_.empty() || feeds_[0].dims.empty() ? 1 : feeds_[0].dims[0];
    auto hold = [&](size_t bytes) {
      void* p = st.Alloc(bytes ? bytes : 1);
      if (!p) throw std::runtime_error("out of memory for a bound buffer");
      return p;
    };
    try {
      Bind(*slot, batch, hold);
    } catch (...) {
      slot->binding.reset();
      for (void* p : slot->in) st.Free(p);
      for (void* p : slot->out) st.Free(p);
      throw;
    }
    return slot;
  }

  template <typename Hold>
  void Bind(GraphSlot& s, int64_t batch, Hold hold) {
    State& st = *state_;
    GraphSlot* slot = &s;
    for (const auto& info : st.inputs) {
      const Feed& f = FeedFor(info.name);
      void* p = hold(f.bytes);
      slot->in.push_back(p);
      slot->inBytes.push_back(f.bytes);
      slot->binding->BindInput(info.name.c_str(), Ort::Value::CreateTensor(*st.cudaMem, p, f.bytes, f.dims.data(), f.dims.size(), f.type->onnx));
    }
    for (const auto& info : st.outputs) {
      const ElementType* t = ByName(info.type);
      if (!info.tensor || !t) throw std::runtime_error("output " + info.name + " is not a tensor this engine passes");
      std::vector<int64_t> shape = info.dims;
      size_t count = 1;
      for (size_t d = 0; d < shape.size(); d++) {
        if (d == 0 && shape[d] < 0) shape[d] = batch;
        if (shape[d] < 0)
          throw std::runtime_error("output " + info.name + " has a shape known only at run time, which a CUDA graph cannot bind");
        count *= static_cast<size_t>(shape[d]);
      }
      void* p = hold(count * t->bytes);
      slot->out.push_back(p);
      slot->outBytes.push_back(count * t->bytes);
      slot->outShapes.push_back(shape);
      slot->binding->BindOutput(info.name.c_str(), Ort::Value::CreateTensor(*st.cudaMem, p, count * t->bytes, shape.data(), shape.size(), t->onnx));
    }
  }

  std::shared_ptr<State> state_;
  std::vector<Feed> feeds_;
  std::vector<std::string> fetch_;
  Napi::ObjectReference keep_;  // the feeds' typed arrays, alive until the run ends
  std::vector<Out> out_;
};

// Where a typed array's elements start, whether its memory is an ArrayBuffer or a SharedArrayBuffer (the runtime's
// inputs are often shared memory).
void* ViewData(Napi::Env env, const Napi::TypedArray& a) {
  void* data = nullptr;
  if (napi_get_typedarray_info(env, a, nullptr, nullptr, &data, nullptr, nullptr) != napi_ok)
    throw Coded(env, "INVALID_ARG", "Expected a readable typed array");
  return data;
}

std::vector<int64_t> Dims(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsArray()) throw Coded(env, "INVALID_ARG", "Expected array of dimensions for " + what);
  Napi::Array a = v.As<Napi::Array>();
  std::vector<int64_t> dims;
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value d = a.Get(i);
    if (!d.IsNumber() || d.As<Napi::Number>().DoubleValue() < 0)
      throw Coded(env, "INVALID_ARG", "Expected non-negative integer dimensions for " + what);
    dims.push_back(d.As<Napi::Number>().Int64Value());
  }
  return dims;
}

Napi::Value SessionWrap::Run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!state) throw Coded(env, "FAILED", "session released");
  if (!info[0].IsObject()) throw Coded(env, "INVALID_ARG", "Expected object of tensors for feeds");
  Napi::Object feeds = info[0].As<Napi::Object>();
  Napi::Object keep = Napi::Object::New(env);
  std::vector<Feed> list;
  Napi::Array keys = feeds.GetPropertyNames();
  for (uint32_t i = 0; i < keys.Length(); i++) {
    std::string name = keys.Get(i).As<Napi::String>().Utf8Value();
    Napi::Value tv = feeds.Get(name);
    if (!tv.IsObject()) throw Coded(env, "INVALID_ARG", "Expected tensor for feed " + name);
    Napi::Object t = tv.As<Napi::Object>();
    Napi::Value type = t.Get("type");
    const ElementType* et = type.IsString() ? ByName(type.As<Napi::String>().Utf8Value()) : nullptr;
    if (!et) throw Coded(env, "INVALID_ARG", "Expected a known tensor type for feed " + name);
    Napi::Value data = t.Get("data");
    if (!data.IsTypedArray()) throw Coded(env, "INVALID_ARG", "Expected typed array data for feed " + name);
    Napi::TypedArray arr = data.As<Napi::TypedArray>();
    Feed f{name, et, Dims(env, t.Get("dims"), "feed " + name), nullptr, arr.ByteLength()};
    size_t count = 1;
    for (auto d : f.dims) count *= static_cast<size_t>(d);
    if (count * et->bytes != f.bytes)
      throw Coded(env, "INVALID_ARG", "Expected " + std::to_string(count * et->bytes) + " bytes for feed " + name);
    f.data = ViewData(env, arr);
    keep.Set(name, data);
    list.push_back(std::move(f));
  }
  std::vector<std::string> fetch;
  if (info.Length() > 1 && info[1].IsArray()) {
    Napi::Array a = info[1].As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) fetch.push_back(a.Get(i).ToString().Utf8Value());
  } else {
    for (const auto& o : state->outputs) fetch.push_back(o.name);
  }
  auto* w = new RunWorker(env, state, std::move(list), std::move(fetch), keep);
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

std::string Str(const Napi::Object& o, const char* key, const std::string& fallback) {
  Napi::Value v = o.Get(key);
  return v.IsString() ? v.As<Napi::String>().Utf8Value() : fallback;
}

Napi::Value CreateSession(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Api()) throw Coded(env, "FAILED", "the loaded ONNX Runtime has no API version " + std::to_string(ORT_API_VERSION));
  std::string path;
  std::vector<uint8_t> bytes;
  if (info[0].IsString()) path = info[0].As<Napi::String>().Utf8Value();
  else if (info[0].IsTypedArray()) {
    Napi::TypedArray a = info[0].As<Napi::TypedArray>();
    const uint8_t* p = static_cast<const uint8_t*>(ViewData(env, a));
    bytes.assign(p, p + a.ByteLength());
  } else throw Coded(env, "INVALID_ARG", "Expected a path or bytes for source");
  if (path.empty() && bytes.empty()) throw Coded(env, "INVALID_ARG", "Expected a non-empty path or bytes for source");
  SessionOptionsIn o;
  if (info[1].IsObject()) {
    Napi::Object opts = info[1].As<Napi::Object>();
    Napi::Value providers = opts.Get("providers");
    if (providers.IsArray()) {
      Napi::Array a = providers.As<Napi::Array>();
      for (uint32_t i = 0; i < a.Length(); i++) {
        std::string p = a.Get(i).ToString().Utf8Value();
        if (p != "cpu" && p != "cuda" && p != "tensorrt")
          throw Coded(env, "INVALID_ARG", "Expected cpu, cuda or tensorrt for providers but received " + p);
        o.providers.push_back(p);
      }
    }
    if (opts.Get("deviceId").IsNumber()) o.device = opts.Get("deviceId").As<Napi::Number>().Int32Value();
    if (opts.Get("intraOpThreads").IsNumber()) o.intraOpThreads = opts.Get("intraOpThreads").As<Napi::Number>().Int32Value();
    o.cudnnSearch = Str(opts, "cudnnSearch", o.cudnnSearch);
    if (o.cudnnSearch != "EXHAUSTIVE" && o.cudnnSearch != "HEURISTIC" && o.cudnnSearch != "DEFAULT")
      throw Coded(env, "INVALID_ARG", "Expected EXHAUSTIVE, HEURISTIC or DEFAULT for cudnnSearch but received " + o.cudnnSearch);
    o.fp16 = opts.Get("fp16").ToBoolean().Value();
    o.cacheDir = Str(opts, "cacheDir", "");
    o.cudaGraph = opts.Get("cudaGraph").ToBoolean().Value();
    o.fixedBuffers = opts.Get("fixedBuffers").ToBoolean().Value();
    Napi::Value profile = opts.Get("trtProfile");
    if (profile.IsObject()) {
      Napi::Object p = profile.As<Napi::Object>();
      o.profileMin = Str(p, "min", "");
      o.profileOpt = Str(p, "opt", "");
      o.profileMax = Str(p, "max", "");
      if (o.profileMin.empty() || o.profileOpt.empty() || o.profileMax.empty())
        throw Coded(env, "INVALID_ARG", "Expected min, opt and max shapes for trtProfile");
    }
  }
  auto* w = new CreateWorker(env, std::move(path), std::move(bytes), std::move(o));
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

Napi::Value AvailableProviders(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Api()) return Napi::Array::New(env, 0);
  std::vector<std::string> list = Ort::GetAvailableProviders();
  Napi::Array a = Napi::Array::New(env, list.size());
  for (size_t i = 0; i < list.size(); i++) a.Set(static_cast<uint32_t>(i), list[i]);
  return a;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* data = new EnvData();
  data->sessionClass = Napi::Persistent(SessionWrap::Define(env));
  env.SetInstanceData(data);
  exports.Set("version", OrtGetApiBase()->GetVersionString());
  exports.Set("apiVersion", Napi::Number::New(env, ORT_API_VERSION));
  exports.Set("createSession", Napi::Function::New(env, CreateSession, "createSession"));
  exports.Set("availableProviders", Napi::Function::New(env, AvailableProviders, "availableProviders"));
  return exports;
}

}  // namespace

NODE_API_MODULE(sightflow_ort, Init)
