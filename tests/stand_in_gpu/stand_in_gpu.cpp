// A stand-in for the CUDA module, for machines without a GPU (these, CI):
// libss_stand_in_gpu.so has the CUDA module's entries (ss_cuda_backend,
// ss_cuda_device_count, ss_nccl_join), and ss opens it in its place when
// SS_CUDA_MODULE names it (Note [The CUDA module is loaded on demand] in
// ops/cuda_loader/cuda_module.cpp).
//
// Note [A stand-in GPU]
// What runs on a GPU is decided by where values are placed (Note [Values
// on a GPU] in interp/devices/one_device.cpp; Note [Several GPUs] in
// interp/devices/gpu_ranks.cpp), and a misplaced value is an error the op
// layer raises ("arguments are on different devices"), not a wrong
// number. So the placement can be proven without a GPU: the stand-in's
// "device" bytes are host memory, registered as the Cuda kind's
// DeviceMemory (its copies counted as uploads and downloads are), and its
// backend runs each primitive on the CPU backend and hands the result back
// on its operands' device. `cuda[0]` and `cuda[0 1 2]` then run the whole
// conformance suite here (tests/stand_in_gpu/run_conformance.sh), its
// values tagged with their GPUs, each rank's its own, its collectives
// through ss_nccl_join as a GPU run's are (here Gloo through the host,
// Note [Collectives through the host]). What it cannot prove is the CUDA
// kernels and NCCL (ss_cuda_tests on a GPU), nor a host read of device
// bytes (its bytes are the host's): scripts/gpu_check.sh on the lent GPU.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "dist/comm/gloo_comm.h"
#include "dist/comm/host_staged_comm.h"
#include "ops/backend/backend.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/stand_in_gpu/guarded_arena.h"

namespace {

using ss::ops::Backend;
using ss::ops::Device;
using ss::ops::Shape;
using ss::ops::Tensor;
using ss::types::DType;

// The thread's GPU, as the CUDA runtime keeps it: GPU 0 on a new thread,
// then the last one its allocations, copies or ss_cuda_use_device chose.
// Each primitive refuses operands of another GPU (Note [The thread's GPU]
// in ops/backend/backend.cpp).
thread_local int current_gpu = 0;

Device gpu(int i) {
  return Device{Device::Kind::Cuda, i};
}

// Bytes copied to the stand-in GPUs, which SS_STAND_IN_REPORT=1 prints to
// standard error as the process exits ("stand-in gpu: N bytes uploaded"):
// what a test of Note [Datasets kept on a GPU] counts.
std::atomic<uint64_t> uploaded{0};

struct HostBytes : ss::ops::DeviceMemory {
  void* allocate(size_t nbytes, int index) override {
    current_gpu = index;
    void* p = stand_in::arena_allocate(nbytes);
    const stand_in::Access open;
    std::memset(p, 0xff, nbytes);  // NaN in every float dtype
    return p;
  }
  void release(void* p, size_t nbytes, int) override {
    stand_in::arena_release(p, nbytes);
  }
  void to_host(void* dst, const void* src, size_t n, int index) override {
    current_gpu = index;
    const stand_in::Access open;
    std::memcpy(dst, src, n);
  }
  void from_host(void* dst, const void* src, size_t n, int index) override {
    current_gpu = index;
    uploaded += n;
    const stand_in::Access open;
    std::memcpy(dst, src, n);
  }
  void on_device(void* dst, const void* src, size_t n, int) override {
    const stand_in::Access open;
    std::memmove(dst, src, n);
  }
};

// The device of a primitive's operands (they share one: ops/api.cpp
// checks), which must be the thread's GPU, as a kernel's are; with none
// (random), the thread's GPU.
Device device_of(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t && t->defined() && t->device().kind == Device::Kind::Cuda) {
      if (t->device().index != current_gpu)
        throw std::runtime_error(
            "stand-in gpu: a kernel of GPU " + std::to_string(current_gpu) +
            " was handed a tensor of GPU " + std::to_string(t->device().index) +
            " (Note [The thread's GPU] in ops/backend/backend.cpp)");
      return t->device();
    }
  return gpu(current_gpu);
}

// A CPU backend's result in bytes of [d]'s own, as a GPU backend's
// result owns its storage (shard params' copies are let go and made again
// in theirs: Note [Bytes made again] in ops/core/tensor.cpp).
Tensor on(const Tensor& t, Device d) {
  if (!t.defined() || t.device() == d) return t;
  Tensor out = Tensor::empty(t.shape(), t.dtype(), d);
  if (t.nbytes()) std::memcpy(out.raw(), t.raw(), t.nbytes());  // no upload
  return out;
}

template <size_t N>
std::array<Tensor, N> on(std::array<Tensor, N> ts, Device d) {
  for (Tensor& t : ts) t = on(t, d);
  return ts;
}

Backend& cpu() {
  return ss::ops::cpu_backend();
}

class StandInBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }

  Tensor unary(ss::ops::UnaryOp op, const Tensor& x) override {
    const stand_in::Access open;
    return on(cpu().unary(op, x), device_of({&x}));
  }
  Tensor binary(ss::ops::BinaryOp op,
                const Tensor& a,
                const Tensor& b) override {
    const stand_in::Access open;
    return on(cpu().binary(op, a, b), device_of({&a, &b}));
  }
  // The in-place primitives: the CPU's may hand back a new tensor (a
  // half's update goes through f32), which goes back to the device.
  void scale_in_place(Tensor& x, double s) override {
    const stand_in::Access open;
    const Device d = device_of({&x});
    cpu().scale_in_place(x, s);
    x = on(x, d);
  }
  Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) override {
    const stand_in::Access open;
    return on(cpu().where(c, a, b), device_of({&a, &b, &c}));
  }
  Tensor reduce(ss::ops::ReduceOp op,
                const Tensor& x,
                const std::vector<int>& axes,
                bool keepdims) override {
    const stand_in::Access open;
    return on(cpu().reduce(op, x, axes, keepdims), device_of({&x}));
  }
  Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) override {
    const stand_in::Access open;
    return on(cpu().matmul(a, b, ta, tb), device_of({&a, &b}));
  }
  std::array<Tensor, 2> matmul_epilogue(const Tensor& a,
                                        const Tensor& b,
                                        const ss::ops::Epilogue& e) override {
    const stand_in::Access open;
    return on(cpu().matmul_epilogue(a, b, e), device_of({&a, &b}));
  }
  Tensor activation_backward(ss::ops::Activation act,
                             const Tensor& g,
                             const Tensor& x) override {
    const stand_in::Access open;
    return on(cpu().activation_backward(act, g, x), device_of({&g, &x}));
  }
  Tensor cast(const Tensor& x, DType to) override {
    const stand_in::Access open;
    return on(cpu().cast(x, to), device_of({&x}));
  }
  Tensor permute(const Tensor& x, const std::vector<int>& perm) override {
    const stand_in::Access open;
    return on(cpu().permute(x, perm), device_of({&x}));
  }
  Tensor broadcast_to(const Tensor& x, const Shape& shape) override {
    const stand_in::Access open;
    return on(cpu().broadcast_to(x, shape), device_of({&x}));
  }
  Tensor slice(const Tensor& x,
               int axis,
               int64_t start,
               int64_t stop,
               int64_t step) override {
    const stand_in::Access open;
    return on(cpu().slice(x, axis, start, stop, step), device_of({&x}));
  }
  Tensor concat(const std::vector<Tensor>& xs, int axis) override {
    const stand_in::Access open;
    return on(cpu().concat(xs, axis),
              device_of({xs.empty() ? nullptr : &xs[0]}));
  }
  Tensor pad(const Tensor& x,
             int axis,
             int64_t before,
             int64_t after,
             double value) override {
    const stand_in::Access open;
    return on(cpu().pad(x, axis, before, after, value), device_of({&x}));
  }
  Tensor take(const Tensor& x, const Tensor& idx, int axis) override {
    const stand_in::Access open;
    return on(cpu().take(x, idx, axis), device_of({&x, &idx}));
  }
  Tensor take_add(const Tensor& v,
                  const Tensor& idx,
                  int axis,
                  int64_t n) override {
    const stand_in::Access open;
    return on(cpu().take_add(v, idx, axis, n), device_of({&v, &idx}));
  }
  Tensor gather(const Tensor& x, const Tensor& idx, int axis) override {
    const stand_in::Access open;
    return on(cpu().gather(x, idx, axis), device_of({&x, &idx}));
  }
  Tensor scatter_add(const Shape& shape,
                     const Tensor& idx,
                     const Tensor& v,
                     int axis) override {
    const stand_in::Access open;
    return on(cpu().scatter_add(shape, idx, v, axis), device_of({&v, &idx}));
  }
  Tensor cumsum(const Tensor& x, int axis, bool reverse) override {
    const stand_in::Access open;
    return on(cpu().cumsum(x, axis, reverse), device_of({&x}));
  }
  std::pair<Tensor, Tensor> sort(const Tensor& x,
                                 int axis,
                                 bool descending) override {
    const stand_in::Access open;
    auto [v, i] = cpu().sort(x, axis, descending);
    const Device d = device_of({&x});
    return {on(v, d), on(i, d)};
  }
  Tensor random(const Shape& shape,
                DType dtype,
                uint64_t key,
                uint64_t stream,
                uint64_t offset,
                bool normal) override {
    const stand_in::Access open;
    return on(cpu().random(shape, dtype, key, stream, offset, normal),
              device_of({}));
  }
  void adamw_update(Tensor& p,
                    const Tensor& g,
                    Tensor& m,
                    Tensor& v,
                    double lr,
                    double beta1,
                    double beta2,
                    double eps,
                    double weight_decay,
                    int64_t step) override {
    const stand_in::Access open;
    const Device d = device_of({&p});
    cpu().adamw_update(p, g, m, v, lr, beta1, beta2, eps, weight_decay, step);
    p = on(p, d);
    m = on(m, d);
    v = on(v, d);
  }
  void sgd_update(Tensor& p,
                  const Tensor& g,
                  Tensor* buf,
                  double lr,
                  double momentum,
                  double weight_decay,
                  bool nesterov,
                  bool first) override {
    const stand_in::Access open;
    const Device d = device_of({&p});
    cpu().sgd_update(p, g, buf, lr, momentum, weight_decay, nesterov, first);
    p = on(p, d);
    if (buf) *buf = on(*buf, d);
  }
  Tensor softmax_last(const Tensor& x, bool log) override {
    const stand_in::Access open;
    return on(cpu().softmax_last(x, log), device_of({&x}));
  }
  Tensor softmax_last_backward(const Tensor& g,
                               const Tensor& y,
                               bool log) override {
    const stand_in::Access open;
    return on(cpu().softmax_last_backward(g, y, log), device_of({&g, &y}));
  }
  std::array<Tensor, 3> norm_last(const Tensor& x,
                                  double eps,
                                  bool centered,
                                  const Tensor& gamma,
                                  const Tensor& beta) override {
    const stand_in::Access open;
    return on(cpu().norm_last(x, eps, centered, gamma, beta), device_of({&x}));
  }
  std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                           const Tensor& x,
                                           const Tensor& mean,
                                           const Tensor& rstd,
                                           bool centered,
                                           const Tensor& gamma) override {
    const stand_in::Access open;
    return on(cpu().norm_last_backward(g, x, mean, rstd, centered, gamma),
              device_of({&g, &x}));
  }
  Tensor gelu(const Tensor& x, bool tanh) override {
    const stand_in::Access open;
    return on(cpu().gelu(x, tanh), device_of({&x}));
  }
  Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh) override {
    const stand_in::Access open;
    return on(cpu().gelu_backward(g, x, tanh), device_of({&g, &x}));
  }
  std::array<Tensor, 2> attention(const Tensor& q,
                                  const Tensor& k,
                                  const Tensor& v,
                                  double scale,
                                  bool causal) override {
    const stand_in::Access open;
    return on(cpu().attention(q, k, v, scale, causal), device_of({&q}));
  }
  std::array<Tensor, 3> attention_backward(const Tensor& go,
                                           const Tensor& q,
                                           const Tensor& k,
                                           const Tensor& v,
                                           const Tensor& o,
                                           const Tensor& lse,
                                           double scale,
                                           bool causal) override {
    const stand_in::Access open;
    return on(cpu().attention_backward(go, q, k, v, o, lse, scale, causal),
              device_of({&go, &q}));
  }
  Tensor conv2d(const Tensor& x,
                const Tensor& k,
                const ss::ops::ConvShape& cs) override {
    const stand_in::Access open;
    return on(cpu().conv2d(x, k, cs), device_of({&x, &k}));
  }
  Tensor conv2d_grad_input(const Tensor& gy,
                           const Tensor& k,
                           const Shape& x_shape,
                           const ss::ops::ConvShape& cs) override {
    const stand_in::Access open;
    return on(cpu().conv2d_grad_input(gy, k, x_shape, cs),
              device_of({&gy, &k}));
  }
  Tensor conv2d_grad_kernel(const Tensor& gy,
                            const Tensor& x,
                            const Shape& k_shape,
                            const ss::ops::ConvShape& cs) override {
    const stand_in::Access open;
    return on(cpu().conv2d_grad_kernel(gy, x, k_shape, cs),
              device_of({&gy, &x}));
  }
};

}  // namespace

extern "C" {

/// The CUDA module's entry (ops/cuda/cuda_backend.cu's twin).
Backend* ss_cuda_backend(char*, unsigned long) {
  static HostBytes memory;
  static StandInBackend backend;
  ss::ops::set_device_memory(Device::Kind::Cuda, &memory);
  if (const char* r = std::getenv("SS_STAND_IN_REPORT"); r && *r == '1')
    std::atexit([] {
      std::fprintf(stderr,
                   "stand-in gpu: %llu bytes uploaded\n",
                   static_cast<unsigned long long>(uploaded.load()));
    });
  return &backend;
}

/// Makes GPU [index] the thread's (ops::use_cuda_device).
void ss_cuda_use_device(int index) {
  current_gpu = index;
}

/// Its kernels are the CPU backend's.
void ss_cuda_kernel_signature(int, char* out, unsigned long size) {
  std::snprintf(
      out, size, "stand-in GPU over %s", ss::ops::kernel_signature().c_str());
}

/// Four GPUs, or SS_STAND_IN_GPUS of them.
int ss_cuda_device_count() {
  const char* n = std::getenv("SS_STAND_IN_GPUS");
  return n && *n ? std::atoi(n) : 4;
}

/// NCCL's entry (dist/comm/nccl/nccl_comm.cpp's twin): the group over
/// Gloo, each tensor through the host.
ss::dist::Communicator* ss_nccl_join(int rank,
                                     int size,
                                     const char* store,
                                     const char* prefix,
                                     int gpu_index,
                                     long long timeout_ms) {
  current_gpu = gpu_index;
  return new ss::dist::HostStagedComm(
      std::make_unique<ss::dist::GlooComm>(
          rank, size, store, prefix, std::chrono::milliseconds(timeout_ms)),
      gpu(gpu_index));
}
}
