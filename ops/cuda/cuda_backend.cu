// The CUDA backend: the Backend interface forwarded to the kernels of
// ops/cuda/*.cu (cuda_kernels.h), and the module's entry point, which
// ops/cuda_loader/cuda_module.cpp calls once after dlopen (Note [The CUDA
// module is loaded on demand] there).

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>

#include "ops/backend/recorded_step.h"
#include "ops/cuda/cuda_common.cuh"
#include "ops/cuda/cuda_memory.h"

namespace ss::ops {

namespace {

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }

  void flag_if(const Tensor& flag, unsigned code) override {
    cuda::flag_if(flag, code);
  }

  void adamw_update(Tensor& p,
                    const Tensor& g,
                    Tensor& m,
                    Tensor& v,
                    double lr,
                    double b1,
                    double b2,
                    double eps,
                    double wd,
                    int64_t step) override {
    cuda::adamw_update(p, g, m, v, lr, b1, b2, eps, wd, step);
  }
  void sgd_update(Tensor& p,
                  const Tensor& g,
                  Tensor* buf,
                  double lr,
                  double momentum,
                  double wd,
                  bool nesterov,
                  bool first) override {
    cuda::sgd_update(p, g, buf, lr, momentum, wd, nesterov, first);
  }

  Tensor unary(UnaryOp op, const Tensor& x) override {
    return cuda::unary(op, x);
  }
  Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) override {
    return cuda::binary(op, a, b);
  }
  void scale_in_place(Tensor& x, double s) override {
    cuda::scale_in_place(x, s);
  }
  Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) override {
    return cuda::where(c, a, b);
  }
  Tensor reduce(ReduceOp op,
                const Tensor& x,
                const std::vector<int>& axes,
                bool keepdims) override {
    return cuda::reduce(op, x, axes, keepdims);
  }
  Tensor matmul(const Tensor& a,
                const Tensor& b,
                bool trans_a,
                bool trans_b) override {
    return cuda::matmul(a, b, trans_a, trans_b);
  }
  Tensor cast(const Tensor& x, DType to) override { return cuda::cast(x, to); }
  Tensor permute(const Tensor& x, const std::vector<int>& perm) override {
    return cuda::permute(x, perm);
  }
  Tensor broadcast_to(const Tensor& x, const Shape& shape) override {
    return cuda::broadcast_to(x, shape);
  }
  Tensor slice(const Tensor& x,
               int axis,
               int64_t start,
               int64_t stop,
               int64_t step) override {
    return cuda::slice(x, axis, start, stop, step);
  }
  Tensor concat(const std::vector<Tensor>& xs, int axis) override {
    return cuda::concat(xs, axis);
  }
  Tensor pad(const Tensor& x,
             int axis,
             int64_t before,
             int64_t after,
             double value) override {
    return cuda::pad(x, axis, before, after, value);
  }
  Tensor take(const Tensor& x, const Tensor& idx, int axis) override {
    return cuda::take(x, idx, axis);
  }
  Tensor take_add(const Tensor& v,
                  const Tensor& idx,
                  int axis,
                  int64_t n) override {
    return cuda::take_add(v, idx, axis, n);
  }
  Tensor gather(const Tensor& x, const Tensor& idx, int axis) override {
    return cuda::gather(x, idx, axis);
  }
  Tensor scatter_add(const Shape& shape,
                     const Tensor& idx,
                     const Tensor& v,
                     int axis) override {
    return cuda::scatter_add(shape, idx, v, axis);
  }
  Tensor cumsum(const Tensor& x, int axis, bool reverse) override {
    return cuda::cumsum(x, axis, reverse);
  }
  std::pair<Tensor, Tensor> sort(const Tensor& x,
                                 int axis,
                                 bool descending) override {
    return cuda::sort(x, axis, descending);
  }
  Tensor random(const Shape& shape,
                DType dtype,
                uint64_t key,
                uint64_t stream,
                uint64_t offset,
                bool normal) override {
    return cuda::random(shape, dtype, key, stream, offset, normal);
  }
  Tensor softmax_last(const Tensor& x, bool log) override {
    return cuda::softmax_last(x, log);
  }
  Tensor softmax_last_backward(const Tensor& g,
                               const Tensor& y,
                               bool log) override {
    return cuda::softmax_last_backward(g, y, log);
  }
  std::array<Tensor, 3> norm_last(const Tensor& x,
                                  double eps,
                                  bool centered,
                                  const Tensor& gamma,
                                  const Tensor& beta) override {
    return cuda::norm_last(x, eps, centered, gamma, beta);
  }
  std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                           const Tensor& x,
                                           const Tensor& mean,
                                           const Tensor& rstd,
                                           bool centered,
                                           const Tensor& gamma) override {
    return cuda::norm_last_backward(g, x, mean, rstd, centered, gamma);
  }
  Tensor gelu(const Tensor& x, bool tanh) override {
    return cuda::gelu(x, tanh);
  }
  Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh) override {
    return cuda::gelu_backward(g, x, tanh);
  }
  std::array<Tensor, 2> attention(const Tensor& q,
                                  const Tensor& k,
                                  const Tensor& v,
                                  double scale,
                                  bool causal) override {
    return cuda::attention(q, k, v, scale, causal);
  }
  std::array<Tensor, 3> attention_backward(const Tensor& go,
                                           const Tensor& q,
                                           const Tensor& k,
                                           const Tensor& v,
                                           const Tensor& o,
                                           const Tensor& lse,
                                           double scale,
                                           bool causal) override {
    return cuda::attention_backward(go, q, k, v, o, lse, scale, causal);
  }
  Tensor conv2d(const Tensor& x,
                const Tensor& k,
                const ConvShape& cs) override {
    return cuda::conv2d(x, k, cs);
  }
  Tensor conv2d_grad_input(const Tensor& gy,
                           const Tensor& k,
                           const Shape& x_shape,
                           const ConvShape& cs) override {
    return cuda::conv2d_grad_input(gy, k, x_shape, cs);
  }
  Tensor conv2d_grad_kernel(const Tensor& gy,
                            const Tensor& x,
                            const Shape& k_shape,
                            const ConvShape& cs) override {
    return cuda::conv2d_grad_kernel(gy, x, k_shape, cs);
  }
};

}  // namespace

}  // namespace ss::ops

/// Makes GPU [index] the calling thread's (ops::use_cuda_device).
extern "C" void ss_cuda_use_device(int index) {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != index)
    ss::ops::cuda::check(cudaSetDevice(index), "cudaSetDevice");
}

/// What computes on GPU [index] (ops::cuda_kernel_signature): the same
/// model, SM count and libraries give the same bits (cuBLAS promises its
/// bits for one version on one architecture and SM count).
extern "C" void ss_cuda_kernel_signature(int index,
                                         char* out,
                                         unsigned long size) {
  cudaDeviceProp p{};
  int cublas = 0, runtime = 0;
  cudaGetDeviceProperties(&p, index);
  cublasGetProperty(MAJOR_VERSION, &cublas);
  int minor = 0;
  cublasGetProperty(MINOR_VERSION, &minor);
  cudaRuntimeGetVersion(&runtime);
  std::snprintf(out,
                size,
                "CUDA %s (sm_%d%d, %d SMs), runtime %d, cuBLAS %d.%d",
                p.name,
                p.major,
                p.minor,
                p.multiProcessorCount,
                runtime,
                cublas,
                minor);
}

/// How many GPUs answer (ops::cuda_device_count).
extern "C" int ss_cuda_device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

/// The module's entry: the backend, or nullptr with [error] filled in
/// when no GPU answers (a machine with the toolkit and no device, as CI).
extern "C" ss::ops::Backend* ss_cuda_backend(char* error,
                                             unsigned long error_size) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::snprintf(error,
                  error_size,
                  "no CUDA device answers on this machine (%s)",
                  e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return nullptr;
  }
  try {
    ss::ops::cuda::start_memory(count);
    ss::ops::set_step_recorder(ss::ops::Device::Kind::Cuda,
                               &ss::ops::cuda::recorder());
    static ss::ops::CudaBackend backend;
    return &backend;
  } catch (const std::exception& ex) {
    std::snprintf(
        error, error_size, "the CUDA backend failed to start: %s", ex.what());
    return nullptr;
  }
}
