// Note [Recorded steps on a GPU]
// The CUDA module's StepRecorder (ops/backend/recorded_step.h; what is
// recorded and when: Note [Recorded steps] in
// interp/devices/recorded_calls.cpp). A recording is a capture of the
// device's compute stream (relaxed mode, so the pool's cudaMalloc calls
// are legal), its allocations from a pool of its own (Note [A recorded
// step's pool] in cuda_memory.cu); the step is the instantiated graph, and
// a replay is one cudaGraphLaunch on the stream. The fused optimizers'
// kernels are patchable (for_each_patchable): their constants change each
// step (the step count's bias corrections, the learning rate), so a
// replay's refresh reads each one's recorded arguments from the graph,
// changes the constants only, and sets them on the instantiated graph
// (cudaGraphExecKernelNodeSetParams): no new instantiation, no copy.
//
// Note [Host calls in a recorded step]
// A host call (StepRecorder::host_call: the collectives of ranks that
// share one GPU, Note [Collectives through the host] in
// dist/comm/host_staged_comm.cpp) is recorded as three steps on the
// stream: copies of its reads into pinned bytes the step keeps, a host
// node (cudaLaunchHostFunc) that runs it on the driver's thread, and
// copies of its results out of pinned bytes. The node may make no CUDA
// call, which is why the copies are the graph's and not the call's. What
// the call throws cannot cross the driver's thread: it is kept with the
// step, the host calls after it in that replay do nothing, and settle()
// waits for the stream and rethrows it.

#include <cuda_runtime.h>

#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/backend/recorded_step.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

// The first error of a replay's host calls (Note [Host calls in a
// recorded step]).
struct HostErrors {
  std::mutex mu;
  std::exception_ptr first;
};

// One host call: what the host node runs, on the step's pinned bytes.
struct HostCall {
  StepRecorder::HostFn fn;
  std::vector<Tensor> reads, writes;
  std::vector<void*> write_bytes;  // the pinned bytes [writes] began on
  std::shared_ptr<HostErrors> errors;
};

void CUDART_CB run_host_call(void* p) {
  HostCall& h = *static_cast<HostCall*>(p);
  {
    std::lock_guard<std::mutex> lock(h.errors->mu);
    if (h.errors->first) return;
  }
  try {
    h.fn(h.reads, h.writes);
    // A call that replaced a result tensor leaves it in the copied bytes.
    for (size_t i = 0; i < h.writes.size(); ++i) {
      Tensor& w = h.writes[i];
      if (w.raw() == h.write_bytes[i]) continue;
      std::memcpy(h.write_bytes[i], w.raw(), w.nbytes());
      w = Tensor::external(
          h.write_bytes[i], w.shape(), w.dtype(), w.storage(), Device{});
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(h.errors->mu);
    if (!h.errors->first) h.errors->first = std::current_exception();
  }
}

class CudaStep final : public RecordedStep {
 public:
  ~CudaStep() override {
    if (pool) drop_pool(*pool);  // waits for a replay still running
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  void replay(const std::function<void()>& refresh) override;
  size_t nodes() const override { return node_count; }
  size_t patchable() const override { return patches.size(); }
  void settle() override;

  int index = 0;
  std::vector<std::unique_ptr<HostCall>> host_calls;
  std::shared_ptr<HostErrors> host_errors;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::shared_ptr<GraphPool> pool;
  std::vector<cudaGraphNode_t> patches;
  size_t node_count = 0;
  size_t cursor = 0;
};

struct Capture {
  int index = 0;
  std::shared_ptr<GraphPool> pool;
  std::vector<cudaGraphNode_t> patches;
  std::vector<std::unique_ptr<HostCall>> host_calls;
  std::shared_ptr<HostErrors> host_errors = std::make_shared<HostErrors>();
};

thread_local Capture* capturing = nullptr;
thread_local RecordedStep* patching_step = nullptr;

void CudaStep::replay(const std::function<void()>& refresh) {
  run_refresh(patching_step, cursor, patches.size(), refresh, "cuda");
  SS_CUDA_CHECK(cudaSetDevice(index));
  SS_CUDA_CHECK(cudaGraphLaunch(exec, stream()));
}

void CudaStep::settle() {
  if (host_calls.empty()) return;
  SS_CUDA_CHECK(cudaSetDevice(index));
  SS_CUDA_CHECK(cudaStreamSynchronize(stream()));
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> lock(host_errors->mu);
    std::swap(e, host_errors->first);
  }
  if (e) std::rethrow_exception(e);
}

class CudaRecorder final : public StepRecorder {
 public:
  void begin(int index) override {
    if (capturing || patching_step)
      throw std::logic_error("[cuda] a recording inside a recording");
    auto c = std::make_unique<Capture>();
    c->index = index;
    c->pool = begin_capture(index);
    capturing = c.release();
  }
  void adopt(const Tensor& t) override {
    if (t.defined() && t.nbytes())
      adopt_block(*capturing->pool, t.storage()->data(), t.nbytes());
  }
  std::unique_ptr<RecordedStep> end(std::string& why) override {
    std::unique_ptr<Capture> c(capturing);
    capturing = nullptr;
    auto step = std::make_unique<CudaStep>();
    step->index = c->index;
    step->pool = c->pool;
    step->patches = std::move(c->patches);
    step->host_calls = std::move(c->host_calls);
    step->host_errors = c->host_errors;
    cudaError_t e = end_capture(c->index, &step->graph);
    if (e == cudaSuccess) e = cudaGraphInstantiate(&step->exec, step->graph, 0);
    if (e == cudaSuccess)
      e = cudaGraphGetNodes(step->graph, nullptr, &step->node_count);
    if (e != cudaSuccess) {
      cudaGetLastError();
      why = cudaGetErrorString(e);
      return nullptr;
    }
    return step;
  }
  bool recording() const override { return capturing != nullptr; }
  // Note [Host calls in a recorded step]
  void host_call(std::vector<Tensor> reads,
                 std::vector<Tensor> writes,
                 HostFn fn) override {
    Capture& c = *capturing;
    auto h = std::make_unique<HostCall>();
    h->fn = std::move(fn);
    h->errors = c.host_errors;
    // The host tensors keep the pool (their bytes are its).
    std::shared_ptr<void> keep = c.pool;
    auto pinned = [&](const Tensor& t) {
      char* bytes = recorded_host_bytes(*c.pool, t.nbytes());
      return Tensor::external(bytes, t.shape(), t.dtype(), keep, Device{});
    };
    for (const Tensor& t : reads) {
      h->reads.push_back(pinned(t));
      SS_CUDA_CHECK(cudaMemcpyAsync(h->reads.back().raw(),
                                    t.raw(),
                                    t.nbytes(),
                                    cudaMemcpyDeviceToHost,
                                    stream()));
    }
    for (const Tensor& t : writes) {
      h->writes.push_back(pinned(t));
      h->write_bytes.push_back(h->writes.back().raw());
    }
    SS_CUDA_CHECK(cudaLaunchHostFunc(stream(), run_host_call, h.get()));
    for (size_t i = 0; i < writes.size(); ++i)
      SS_CUDA_CHECK(cudaMemcpyAsync(writes[i].raw(),
                                    h->write_bytes[i],
                                    writes[i].nbytes(),
                                    cudaMemcpyHostToDevice,
                                    stream()));
    c.host_calls.push_back(std::move(h));
  }
};

}  // namespace

bool patching() {
  return patching_step != nullptr;
}

void note_patchable() {
  if (!capturing) return;
  cudaStreamCaptureStatus status{};
  const cudaGraphNode_t* deps = nullptr;
  size_t n = 0;
  SS_CUDA_CHECK(cudaStreamGetCaptureInfo(
      stream(), &status, nullptr, nullptr, &deps, nullptr, &n));
  if (status != cudaStreamCaptureStatusActive || n != 1)
    throw std::logic_error(
        "[cuda] a patchable kernel is not the stream's "
        "last node in its recording");
  capturing->patches.push_back(deps[0]);
}

void patch_next(const void* kernel,
                size_t size,
                const std::function<void(void*)>& edit) {
  CudaStep& s = *static_cast<CudaStep*>(patching_step);
  if (s.cursor >= s.patches.size())
    throw std::logic_error(
        "[cuda] a replay's refresh patched more kernels than were recorded");
  cudaGraphNode_t node = s.patches[s.cursor++];
  cudaKernelNodeParams p{};
  SS_CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
  // The node names its kernel by the host stub or by the function's
  // handle.
  cudaFunction_t handle = nullptr;
  const bool same = p.func == kernel ||
                    (cudaGetFuncBySymbol(&handle, kernel) == cudaSuccess &&
                     reinterpret_cast<void*>(handle) == p.func);
  if (!same)
    throw std::logic_error(
        "[cuda] a replay's refresh patched another kernel than was recorded");
  // for_each_kernel's arguments: the count, then the functor, copied and
  // changed here.
  int64_t count = *static_cast<int64_t*>(p.kernelParams[0]);
  alignas(16) unsigned char functor[256];
  if (size > sizeof functor)
    throw std::logic_error("[cuda] a patchable kernel's functor is too big");
  std::memcpy(functor, p.kernelParams[1], size);
  edit(functor);
  void* args[] = {&count, functor};
  p.kernelParams = args;
  p.extra = nullptr;
  SS_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(s.exec, node, &p));
}

StepRecorder& recorder() {
  static CudaRecorder r;
  return r;
}

}  // namespace ss::ops::cuda
