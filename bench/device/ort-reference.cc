// The GPU check's reference for a host that has neither TensorRT nor ONNX Runtime's CUDA provider for Python
// (scripts/gpu-check.sh): ONNX Runtime driven from its own C++ API, the release the bundle carries (the one
// sightflow's binding loads), on the CUDA provider, with the input and outputs resident on the card (IO binding),
// cuDNN's exhaustive algorithm search and, where every node of the graph runs on the card, CUDA graphs; the graph
// as given (gpu-check.sh gives it in float16 where the host's Python can convert it). One stream, run after run:
// what ONNX Runtime itself does at best on the card, the ceiling of any route through it. On a host without a
// GPU (the dry run) the same code runs on the CPU provider with host memory, so it cannot rot.
//   ort-reference --model M.onnx --input NAME --dims 1,3,640,640 --batch 1,8,32 --seconds 3
//                 --provider cuda|cpu --precision fp16|fp32 --out R.json
// Built by scripts/lib/stage-reference.sh against ONNX Runtime's C++ headers, linked to the bundle's
// libonnxruntime.so.1 (found through its rpath).
#include <onnxruntime_cxx_api.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Args {
  std::string model, input, provider = "cpu", precision = "fp32", out;
  std::vector<int64_t> dims;
  std::vector<int> batches{1};
  double seconds = 3;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);) out.push_back(item);
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--model") a.model = v;
    else if (k == "--input") a.input = v;
    else if (k == "--provider") a.provider = v;
    else if (k == "--precision") a.precision = v;
    else if (k == "--out") a.out = v;
    else if (k == "--seconds") a.seconds = std::stod(v);
    else if (k == "--dims") {
      for (auto& d : split(v, ',')) a.dims.push_back(std::stoll(d));
    } else if (k == "--batch") {
      a.batches.clear();
      for (auto& b : split(v, ',')) a.batches.push_back(std::stoi(b));
    } else {
      throw std::runtime_error("unknown option " + k);
    }
  }
  if (a.model.empty() || a.input.empty() || a.dims.empty() || a.out.empty())
    throw std::runtime_error("usage: ort-reference --model M --input NAME --dims 1,3,640,640 --out R.json ...");
  return a;
}

// cudaMemcpy from the CUDA runtime the provider loaded: the input goes to the card once, before the timed runs,
// without this program linking CUDA itself. Null where it is not loaded (no GPU, or another soname).
using CudaMemcpy = int (*)(void*, const void*, size_t, int);
CudaMemcpy findCudaMemcpy() {
  for (const char* so : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}) {
    void* h = dlopen(so, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;
    if (auto f = reinterpret_cast<CudaMemcpy>(dlsym(h, "cudaMemcpy"))) return f;
  }
  return nullptr;
}

size_t elementBytes(ONNXTensorElementDataType t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
      return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
      return 2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
      return 8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
      return 1;
    default:
      return 0;
  }
}

struct Row {
  int batch = 0;
  double imagesPerS = 0, p50 = 0;
  bool cudaGraph = false;
  std::string input, error;
};

std::string jsonString(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
    else o += c;
  }
  return o + "\"";
}

Row runBatch(Ort::Env& env, const Args& a, int batch, bool cudaGraph) {
  Row row;
  row.batch = batch;
  row.cudaGraph = cudaGraph;
  const bool cuda = a.provider == "cuda";
  Ort::SessionOptions so;
  so.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
  if (cuda) {
    const OrtApi& api = Ort::GetApi();
    OrtCUDAProviderOptionsV2* o = nullptr;
    Ort::ThrowOnError(api.CreateCUDAProviderOptions(&o));
    const char* keys[] = {"device_id", "cudnn_conv_algo_search", "do_copy_in_default_stream", "enable_cuda_graph"};
    const char* vals[] = {"0", "EXHAUSTIVE", "1", cudaGraph ? "1" : "0"};
    Ort::ThrowOnError(api.UpdateCUDAProviderOptions(o, keys, vals, 4));
    so.AppendExecutionProvider_CUDA_V2(*o);
    api.ReleaseCUDAProviderOptions(o);
  }
  Ort::Session session(env, a.model.c_str(), so);

  std::vector<int64_t> shape = a.dims;
  shape[0] = batch;
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  std::vector<float> host(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (auto& x : host) x = u(rng);

  Ort::MemoryInfo cpuMem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  Ort::MemoryInfo cudaMem("Cuda", OrtDeviceAllocator, 0, OrtMemTypeDefault);
  std::unique_ptr<Ort::Allocator> cudaAlloc;
  void* device = nullptr;
  Ort::Value in{nullptr};
  CudaMemcpy memcpyToCard = cuda ? findCudaMemcpy() : nullptr;
  if (memcpyToCard) {
    cudaAlloc = std::make_unique<Ort::Allocator>(session, cudaMem);
    device = cudaAlloc->Alloc(n * sizeof(float));
    if (memcpyToCard(device, host.data(), n * sizeof(float), 1 /* cudaMemcpyHostToDevice */) != 0)
      throw std::runtime_error("cudaMemcpy to the card failed");
    in = Ort::Value::CreateTensor(cudaMem, device, n * sizeof(float), shape.data(), shape.size(),
                                  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
    row.input = "device";
  } else {
    in = Ort::Value::CreateTensor<float>(cpuMem, host.data(), n, shape.data(), shape.size());
    row.input = "host";
  }
  Ort::IoBinding binding(session);
  binding.BindInput(a.input.c_str(), in);
  Ort::AllocatorWithDefaultOptions defaultAlloc;
  // On the card the outputs are memory made once (CUDA graphs replay into fixed addresses); an output whose
  // shape is not known before the run (beyond the batch) is left to ONNX Runtime, and refuses CUDA graphs.
  std::vector<void*> deviceOutputs;
  std::vector<Ort::Value> outputs;
  for (size_t i = 0; i < session.GetOutputCount(); i++) {
    auto name = session.GetOutputNameAllocated(i, defaultAlloc);
    auto info = session.GetOutputTypeInfo(i).GetTensorTypeAndShapeInfo();
    std::vector<int64_t> oshape = info.GetShape();
    if (!oshape.empty()) oshape[0] = batch;
    const size_t elem = elementBytes(info.GetElementType());
    size_t count = 1;
    bool known = elem > 0;
    for (auto d : oshape) known = known && d > 0, count *= d > 0 ? static_cast<size_t>(d) : 1;
    if (memcpyToCard && known) {
      void* p = cudaAlloc->Alloc(count * elem);
      deviceOutputs.push_back(p);
      outputs.push_back(Ort::Value::CreateTensor(cudaMem, p, count * elem, oshape.data(), oshape.size(),
                                                 info.GetElementType()));
      binding.BindOutput(name.get(), outputs.back());
    } else {
      if (cudaGraph) throw std::runtime_error(std::string("output ") + name.get() + " has a shape known only at run time");
      binding.BindOutput(name.get(), cuda ? cudaMem : cpuMem);
    }
  }
  Ort::RunOptions ro;
  auto step = [&] {
    session.Run(ro, binding);
    binding.SynchronizeOutputs();
  };
  for (int i = 0; i < 5; i++) step();
  std::vector<double> lat;
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto end = start + std::chrono::duration<double>(a.seconds);
  while (clock::now() < end) {
    const auto t0 = clock::now();
    step();
    lat.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  }
  const double wall = std::chrono::duration<double>(clock::now() - start).count();
  std::sort(lat.begin(), lat.end());
  row.imagesPerS = batch * lat.size() / wall;
  row.p50 = lat.empty() ? 0 : lat[lat.size() / 2];
  binding.ClearBoundInputs();
  binding.ClearBoundOutputs();
  outputs.clear();
  for (void* p : deviceOutputs) cudaAlloc->Free(p);
  if (device) cudaAlloc->Free(device);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  try {
    a = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ort-reference: %s\n", e.what());
    return 2;
  }
  Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "ort-reference");
  std::vector<Row> rows;
  for (int b : a.batches) {
    Row r;
    // CUDA graphs first: a graph with a node left on the CPU refuses them, and then runs without.
    std::string graphRefused;
    if (a.provider == "cuda") {
      try {
        r = runBatch(env, a, b, true);
      } catch (const std::exception& e) {
        graphRefused = e.what();
      }
    }
    if (a.provider != "cuda" || !graphRefused.empty()) {
      try {
        r = runBatch(env, a, b, false);
      } catch (const std::exception& e) {
        r.batch = b;
        r.error = e.what();
      }
    }
    if (!graphRefused.empty()) r.input += "; CUDA graphs refused: " + graphRefused;
    std::fprintf(stderr, "ort-reference: batch %d %.1f images/s p50 %.2f ms %s %s\n", b, r.imagesPerS, r.p50,
                 r.input.c_str(), r.error.c_str());
    rows.push_back(r);
  }
  std::ofstream f(a.out);
  f << "{\"engine\": \"ort-c-api\", \"version\": " << jsonString(Ort::GetVersionString())
    << ", \"provider\": " << jsonString(a.provider) << ", \"precision\": " << jsonString(a.precision)
    << ", \"rows\": [";
  for (size_t i = 0; i < rows.size(); i++) {
    const Row& r = rows[i];
    char nums[160];
    std::snprintf(nums, sizeof nums, "\"batch\": %d, \"images_per_s\": %.2f, \"p50_ms\": %.3f", r.batch, r.imagesPerS,
                  r.p50);
    f << (i ? ", " : "") << "{" << nums << ", \"cuda_graph\": " << (r.cudaGraph ? "true" : "false")
      << ", \"input\": " << jsonString(r.input);
    if (!r.error.empty()) f << ", \"error\": " << jsonString(r.error);
    f << "}";
  }
  f << "]}\n";
  return 0;
}
