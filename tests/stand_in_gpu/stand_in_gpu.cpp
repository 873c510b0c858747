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
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist/comm/gloo_comm.h"
#include "dist/comm/host_staged_comm.h"
#include "ops/backend/backend.h"
#include "ops/backend/device_errors.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/stand_in_gpu/guarded_arena.h"
#include "tests/stand_in_gpu/stand_in_steps.h"

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

// The stand-in GPUs' error word (ops/backend/device_errors.h): checks made
// on the device set it, the next copy to the host raises it.
std::atomic<unsigned> error_word{0};

// A copy into [dst] while a step records (Note [Recorded steps on the
// stand-in]): recorded, and run now only into bytes the recording made.
void copy_recorded(void* dst, std::function<void()> copy) {
  if (stand_in::made_while_recording(dst)) {
    const stand_in::Access open;
    copy();
  }
  stand_in::record([copy] {
    const stand_in::Access open;
    copy();
  });
}

void not_patching(const char* what) {
  if (stand_in::mode() == stand_in::Mode::Patching)
    throw std::logic_error(
        std::string("stand-in gpu: a replay's refresh ran ") + what +
        ", which a graph's patch cannot do");
}

struct HostBytes : ss::ops::DeviceMemory {
  void* allocate(size_t nbytes, int index) override {
    current_gpu = index;
    void* p = stand_in::arena_allocate(nbytes);
    stand_in::note_allocated(p, nbytes);
    const stand_in::Access open;
    std::memset(p, 0xff, nbytes);  // NaN in every float dtype
    return p;
  }
  void release(void* p, size_t nbytes, int) override {
    if (stand_in::may_release(p, nbytes)) stand_in::arena_release(p, nbytes);
  }
  void to_host(void* dst, const void* src, size_t n, int index) override {
    stand_in::note_host_read();
    current_gpu = index;
    {
      const stand_in::Access open;
      std::memcpy(dst, src, n);
    }
    ss::ops::backend::raise_device_errors(error_word.exchange(0));
  }
  void from_host(void* dst, const void* src, size_t n, int index) override {
    not_patching("an upload");
    current_gpu = index;
    uploaded += n;
    if (stand_in::mode() == stand_in::Mode::Recording) {
      // A graph's copy from pinned bytes that the step keeps.
      auto bytes = std::make_shared<std::vector<char>>(
          static_cast<const char*>(src), static_cast<const char*>(src) + n);
      copy_recorded(dst, [dst, bytes] {
        std::memcpy(dst, bytes->data(), bytes->size());
      });
      return;
    }
    const stand_in::Access open;
    std::memcpy(dst, src, n);
  }
  void on_device(void* dst, const void* src, size_t n, int) override {
    not_patching("a copy");
    if (stand_in::mode() == stand_in::Mode::Recording) {
      copy_recorded(dst, [dst, src, n] { std::memmove(dst, src, n); });
      return;
    }
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

// A primitive's result computed again into the bytes it was first
// returned in (a replay of a recorded step).
void write_into(const Tensor& dst, const Tensor& src) {
  if (dst.defined() && dst.nbytes())
    std::memcpy(dst.storage()->data(), src.raw(), dst.nbytes());
}
template <size_t N>
void write_into(const std::array<Tensor, N>& dst,
                const std::array<Tensor, N>& src) {
  for (size_t i = 0; i < N; ++i) write_into(dst[i], src[i]);
}

// A primitive whose outputs are new: [f] computes them on the CPU
// backend, and they go to the operands' GPU. While a step records, the
// step keeps [f] to compute them again (Note [Recorded steps on the
// stand-in]).
template <class F>
auto run(std::initializer_list<const Tensor*> operands, F f) {
  not_patching("a kernel");
  const Device d = device_of(operands);
  const stand_in::Access open;
  auto out = on(f(), d);
  if (stand_in::mode() == stand_in::Mode::Recording)
    stand_in::record([f, out] { write_into(out, f()); });
  return out;
}

// The fused optimizers' arguments that change each step: recorded with
// their work, set again by each replay's refresh.
struct AdamwArgs : stand_in::Patchable {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  int64_t step = 0;
  void set(double l, double b1, double b2, double e, double wd, int64_t s) {
    lr = l, beta1 = b1, beta2 = b2, eps = e, weight_decay = wd, step = s;
  }
};
struct SgdArgs : stand_in::Patchable {
  double lr = 0, momentum = 0, weight_decay = 0;
  bool nesterov = false, first = false;
  void set(double l, double m, double wd, bool n, bool f) {
    lr = l, momentum = m, weight_decay = wd, nesterov = n, first = f;
  }
};

template <class A>
std::shared_ptr<A> next_patch(const char* what) {
  auto a = std::dynamic_pointer_cast<A>(stand_in::next_patchable());
  if (!a)
    throw std::logic_error(
        std::string("stand-in gpu: a replay's refresh ran ") + what +
        " where another call was recorded");
  return a;
}

// An update in place, run by [f] on the CPU backend (which may hand back
// new tensors: a half's update goes through f32) and written back into
// [ts]' own bytes. While a step records it only records: running it then
// and again at the first replay would apply it twice.
template <class F>
void update_in_place(std::vector<Tensor*> ts, F f) {
  std::vector<Tensor> own;
  for (Tensor* t : ts) own.push_back(t ? *t : Tensor());
  auto again = [f, own] {
    std::vector<Tensor> work = own;
    f(work);
    for (size_t i = 0; i < own.size(); ++i)
      if (own[i].defined() && !work[i].same_storage(own[i]))
        write_into(own[i], work[i]);
  };
  if (stand_in::mode() == stand_in::Mode::Recording) {
    stand_in::record([again] {
      const stand_in::Access open;
      again();
    });
    return;
  }
  const stand_in::Access open;
  again();
}

// A CUDA index kernel skips an index out of range and sets the device's
// error word (Note [Errors found on the device] in ops/cuda/cuda_memory.cu);
// the CPU's kernels trust their callers' checks, which a recorded step
// makes on the device (Note [Checks a recording defers] in ops/api.cpp),
// so a replay could hand them one. The stand-in checks first, as the GPU
// does: a bad index reads index 0 and sets the error word.
Tensor in_range(const Tensor& idx, int64_t n) {
  if (idx.dtype() != DType::I64 && idx.dtype() != DType::I32) return idx;
  const bool wide = idx.dtype() == DType::I64;
  auto at = [&](int64_t i) {
    return wide ? idx.data<int64_t>()[i] : int64_t{idx.data<int32_t>()[i]};
  };
  Tensor safe;
  for (int64_t i = 0, e = idx.numel(); i < e; ++i) {
    if (at(i) >= 0 && at(i) < n) continue;
    if (!safe.defined()) {
      safe = Tensor::empty(idx.shape(), idx.dtype());
      std::memcpy(safe.raw(), idx.raw(), idx.nbytes());
    }
    if (wide)
      safe.data<int64_t>()[i] = 0;
    else
      safe.data<int32_t>()[i] = 0;
    error_word |= ss::ops::backend::kIndexOutOfRange;
  }
  return safe.defined() ? safe : idx;
}

class StandInBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }

  Tensor unary(ss::ops::UnaryOp op, const Tensor& x) override {
    return run({&x}, [=] { return cpu().unary(op, x); });
  }
  Tensor binary(ss::ops::BinaryOp op,
                const Tensor& a,
                const Tensor& b) override {
    return run({&a, &b}, [=] { return cpu().binary(op, a, b); });
  }
  // The in-place primitives: the CPU's may hand back a new tensor (a
  // half's update goes through f32), which goes back to the device.
  void scale_in_place(Tensor& x, double s) override {
    not_patching("a kernel");
    device_of({&x});
    update_in_place(
        {&x}, [s](std::vector<Tensor>& t) { cpu().scale_in_place(t[0], s); });
  }
  void flag_if(const Tensor& flag, unsigned code) override {
    not_patching("a check");
    device_of({&flag});
    auto check = [flag, code] {
      const stand_in::Access open;
      if (*static_cast<const bool*>(flag.raw())) error_word |= code;
    };
    if (stand_in::mode() == stand_in::Mode::Recording)
      stand_in::record(check);
    else
      check();
  }
  Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) override {
    return run({&a, &b, &c}, [=] { return cpu().where(c, a, b); });
  }
  Tensor reduce(ss::ops::ReduceOp op,
                const Tensor& x,
                const std::vector<int>& axes,
                bool keepdims) override {
    return run({&x}, [=] { return cpu().reduce(op, x, axes, keepdims); });
  }
  Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) override {
    return run({&a, &b}, [=] { return cpu().matmul(a, b, ta, tb); });
  }
  std::array<Tensor, 2> matmul_epilogue(const Tensor& a,
                                        const Tensor& b,
                                        const ss::ops::Epilogue& e) override {
    return run({&a, &b}, [=] { return cpu().matmul_epilogue(a, b, e); });
  }
  Tensor activation_backward(ss::ops::Activation act,
                             const Tensor& g,
                             const Tensor& x) override {
    return run({&g, &x}, [=] { return cpu().activation_backward(act, g, x); });
  }
  Tensor cast(const Tensor& x, DType to) override {
    return run({&x}, [=] { return cpu().cast(x, to); });
  }
  Tensor permute(const Tensor& x, const std::vector<int>& perm) override {
    return run({&x}, [=] { return cpu().permute(x, perm); });
  }
  Tensor broadcast_to(const Tensor& x, const Shape& shape) override {
    return run({&x}, [=] { return cpu().broadcast_to(x, shape); });
  }
  Tensor slice(const Tensor& x,
               int axis,
               int64_t start,
               int64_t stop,
               int64_t step) override {
    return run({&x}, [=] { return cpu().slice(x, axis, start, stop, step); });
  }
  Tensor concat(const std::vector<Tensor>& xs, int axis) override {
    return run({xs.empty() ? nullptr : &xs[0]},
               [=] { return cpu().concat(xs, axis); });
  }
  Tensor pad(const Tensor& x,
             int axis,
             int64_t before,
             int64_t after,
             double value) override {
    return run({&x}, [=] { return cpu().pad(x, axis, before, after, value); });
  }
  Tensor take(const Tensor& x, const Tensor& idx, int axis) override {
    return run({&x, &idx}, [=] {
      return cpu().take(x, in_range(idx, x.shape()[axis]), axis);
    });
  }
  Tensor take_add(const Tensor& v,
                  const Tensor& idx,
                  int axis,
                  int64_t n) override {
    return run({&v, &idx},
               [=] { return cpu().take_add(v, in_range(idx, n), axis, n); });
  }
  Tensor gather(const Tensor& x, const Tensor& idx, int axis) override {
    return run({&x, &idx}, [=] {
      return cpu().gather(x, in_range(idx, x.shape()[axis]), axis);
    });
  }
  Tensor scatter_add(const Shape& shape,
                     const Tensor& idx,
                     const Tensor& v,
                     int axis) override {
    return run({&v, &idx}, [=] {
      return cpu().scatter_add(shape, in_range(idx, shape[axis]), v, axis);
    });
  }
  Tensor cumsum(const Tensor& x, int axis, bool reverse) override {
    return run({&x}, [=] { return cpu().cumsum(x, axis, reverse); });
  }
  std::pair<Tensor, Tensor> sort(const Tensor& x,
                                 int axis,
                                 bool descending) override {
    auto vi = run({&x}, [=] {
      auto [v, i] = cpu().sort(x, axis, descending);
      return std::array<Tensor, 2>{v, i};
    });
    return {vi[0], vi[1]};
  }
  Tensor random(const Shape& shape,
                DType dtype,
                uint64_t key,
                uint64_t stream,
                uint64_t offset,
                bool normal) override {
    return run({}, [=] {
      return cpu().random(shape, dtype, key, stream, offset, normal);
    });
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
    if (stand_in::mode() == stand_in::Mode::Patching) {
      next_patch<AdamwArgs>("adamw_update")
          ->set(lr, beta1, beta2, eps, weight_decay, step);
      return;
    }
    device_of({&p, &g});
    auto a = std::make_shared<AdamwArgs>();
    a->set(lr, beta1, beta2, eps, weight_decay, step);
    if (stand_in::mode() == stand_in::Mode::Recording)
      stand_in::record_patchable(a);
    update_in_place({&p, &m, &v}, [a, g](std::vector<Tensor>& t) {
      cpu().adamw_update(t[0],
                         g,
                         t[1],
                         t[2],
                         a->lr,
                         a->beta1,
                         a->beta2,
                         a->eps,
                         a->weight_decay,
                         a->step);
    });
  }
  void sgd_update(Tensor& p,
                  const Tensor& g,
                  Tensor* buf,
                  double lr,
                  double momentum,
                  double weight_decay,
                  bool nesterov,
                  bool first) override {
    if (stand_in::mode() == stand_in::Mode::Patching) {
      next_patch<SgdArgs>("sgd_update")
          ->set(lr, momentum, weight_decay, nesterov, first);
      return;
    }
    device_of({&p, &g});
    auto a = std::make_shared<SgdArgs>();
    a->set(lr, momentum, weight_decay, nesterov, first);
    if (stand_in::mode() == stand_in::Mode::Recording)
      stand_in::record_patchable(a);
    update_in_place({&p, buf}, [a, g](std::vector<Tensor>& t) {
      cpu().sgd_update(t[0],
                       g,
                       t[1].defined() ? &t[1] : nullptr,
                       a->lr,
                       a->momentum,
                       a->weight_decay,
                       a->nesterov,
                       a->first);
    });
  }
  Tensor softmax_last(const Tensor& x, bool log) override {
    return run({&x}, [=] { return cpu().softmax_last(x, log); });
  }
  Tensor softmax_last_backward(const Tensor& g,
                               const Tensor& y,
                               bool log) override {
    return run({&g, &y},
               [=] { return cpu().softmax_last_backward(g, y, log); });
  }
  std::array<Tensor, 3> norm_last(const Tensor& x,
                                  double eps,
                                  bool centered,
                                  const Tensor& gamma,
                                  const Tensor& beta) override {
    return run({&x},
               [=] { return cpu().norm_last(x, eps, centered, gamma, beta); });
  }
  std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                           const Tensor& x,
                                           const Tensor& mean,
                                           const Tensor& rstd,
                                           bool centered,
                                           const Tensor& gamma) override {
    return run({&g, &x}, [=] {
      return cpu().norm_last_backward(g, x, mean, rstd, centered, gamma);
    });
  }
  Tensor gelu(const Tensor& x, bool tanh) override {
    return run({&x}, [=] { return cpu().gelu(x, tanh); });
  }
  Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh) override {
    return run({&g, &x}, [=] { return cpu().gelu_backward(g, x, tanh); });
  }
  std::array<Tensor, 2> attention(const Tensor& q,
                                  const Tensor& k,
                                  const Tensor& v,
                                  double scale,
                                  bool causal) override {
    return run({&q}, [=] { return cpu().attention(q, k, v, scale, causal); });
  }
  std::array<Tensor, 3> attention_backward(const Tensor& go,
                                           const Tensor& q,
                                           const Tensor& k,
                                           const Tensor& v,
                                           const Tensor& o,
                                           const Tensor& lse,
                                           double scale,
                                           bool causal) override {
    return run({&go, &q}, [=] {
      return cpu().attention_backward(go, q, k, v, o, lse, scale, causal);
    });
  }
  Tensor conv2d(const Tensor& x,
                const Tensor& k,
                const ss::ops::ConvShape& cs) override {
    return run({&x, &k}, [=] { return cpu().conv2d(x, k, cs); });
  }
  Tensor conv2d_grad_input(const Tensor& gy,
                           const Tensor& k,
                           const Shape& x_shape,
                           const ss::ops::ConvShape& cs) override {
    return run({&gy, &k},
               [=] { return cpu().conv2d_grad_input(gy, k, x_shape, cs); });
  }
  Tensor conv2d_grad_kernel(const Tensor& gy,
                            const Tensor& x,
                            const Shape& k_shape,
                            const ss::ops::ConvShape& cs) override {
    return run({&gy, &x},
               [=] { return cpu().conv2d_grad_kernel(gy, x, k_shape, cs); });
  }
};

}  // namespace

extern "C" {

/// The CUDA module's entry (ops/cuda/cuda_backend.cu's twin).
Backend* ss_cuda_backend(char*, unsigned long) {
  static HostBytes memory;
  static StandInBackend backend;
  ss::ops::set_device_memory(Device::Kind::Cuda, &memory);
  ss::ops::set_step_recorder(Device::Kind::Cuda, &stand_in::recorder());
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
