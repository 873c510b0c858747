// The CPU backend: the Backend interface forwarded to the kernels of
// ops/cpu/*.cpp (see cpu_common.h for who does what).

#include "ops/cpu/cpu_backend.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "ops/backend/device_errors.h"
#include "ops/cpu/cpu_blas_pages.h"
#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_features.h"
#include "ops/cpu/cpu_threads.h"

namespace ss::ops {

namespace {

class CpuBackend final : public Backend {
 public:
  CpuBackend() {
    // OpenBLAS reads OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS) itself at
    // load time; only choose when neither is set. See deps.md §4.
    if (!std::getenv("OPENBLAS_NUM_THREADS") &&
        !std::getenv("OMP_NUM_THREADS")) {
      unsigned hw = std::max(1u, std::thread::hardware_concurrency());
      openblas_set_num_threads(static_cast<int>(hw));
    }
    cpu::advise_blas_huge_pages(openblas_get_num_threads());
  }
  const char* name() const override { return "cpu"; }

  // The host reads its own bytes: nothing waits to be raised.
  void flag_if(const Tensor& flag, unsigned code) override {
    if (flag.item() != 0) backend::raise_device_errors(code);
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
    cpu::adamw_update(p, g, m, v, lr, b1, b2, eps, wd, step);
  }
  void sgd_update(Tensor& p,
                  const Tensor& g,
                  Tensor* buf,
                  double lr,
                  double momentum,
                  double wd,
                  bool nesterov,
                  bool first) override {
    cpu::sgd_update(p, g, buf, lr, momentum, wd, nesterov, first);
  }

  Tensor unary(UnaryOp op, const Tensor& x) override {
    return cpu::unary(op, x);
  }
  Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) override {
    return cpu::binary(op, a, b);
  }
  void scale_in_place(Tensor& x, double s) override {
    cpu::scale_in_place(x, s);
  }
  Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) override {
    return cpu::where(c, a, b);
  }
  Tensor reduce(ReduceOp op,
                const Tensor& x,
                const std::vector<int>& axes,
                bool keepdims) override {
    return cpu::reduce(op, x, axes, keepdims);
  }
  Tensor matmul(const Tensor& a,
                const Tensor& b,
                bool trans_a,
                bool trans_b) override {
    return cpu::matmul(a, b, trans_a, trans_b);
  }
  std::array<Tensor, 2> matmul_epilogue(const Tensor& a,
                                        const Tensor& b,
                                        const Epilogue& e) override {
    return cpu::matmul_epilogue(a, b, e);
  }
  Tensor activation_backward(Activation act,
                             const Tensor& g,
                             const Tensor& x) override {
    return cpu::activation_backward(act, g, x);
  }
  Tensor cast(const Tensor& x, DType to) override { return cpu::cast(x, to); }
  Tensor permute(const Tensor& x, const std::vector<int>& perm) override {
    return cpu::permute(x, perm);
  }
  Tensor broadcast_to(const Tensor& x, const Shape& shape) override {
    return cpu::broadcast_to(x, shape);
  }
  Tensor slice(const Tensor& x,
               int axis,
               int64_t start,
               int64_t stop,
               int64_t step) override {
    return cpu::slice(x, axis, start, stop, step);
  }
  Tensor concat(const std::vector<Tensor>& xs, int axis) override {
    return cpu::concat(xs, axis);
  }
  Tensor pad(const Tensor& x,
             int axis,
             int64_t before,
             int64_t after,
             double value) override {
    return cpu::pad(x, axis, before, after, value);
  }
  Tensor take(const Tensor& x, const Tensor& idx, int axis) override {
    return cpu::take(x, idx, axis);
  }
  Tensor take_add(const Tensor& v,
                  const Tensor& idx,
                  int axis,
                  int64_t n) override {
    return cpu::take_add(v, idx, axis, n);
  }
  Tensor gather(const Tensor& x, const Tensor& idx, int axis) override {
    return cpu::gather(x, idx, axis);
  }
  Tensor scatter_add(const Shape& shape,
                     const Tensor& idx,
                     const Tensor& v,
                     int axis) override {
    return cpu::scatter_add(shape, idx, v, axis);
  }
  Tensor cumsum(const Tensor& x, int axis, bool reverse) override {
    return cpu::cumsum(x, axis, reverse);
  }
  std::pair<Tensor, Tensor> sort(const Tensor& x,
                                 int axis,
                                 bool descending) override {
    return cpu::sort(x, axis, descending);
  }
  Tensor random(const Shape& shape,
                DType dtype,
                uint64_t key,
                uint64_t stream,
                uint64_t offset,
                bool normal) override {
    return cpu::random(shape, dtype, key, stream, offset, normal);
  }
  Tensor softmax_last(const Tensor& x, bool log) override {
    return cpu::softmax_last(x, log);
  }
  Tensor softmax_last_backward(const Tensor& g,
                               const Tensor& y,
                               bool log) override {
    return cpu::softmax_last_backward(g, y, log);
  }
  std::array<Tensor, 3> norm_last(const Tensor& x,
                                  double eps,
                                  bool centered,
                                  const Tensor& gamma,
                                  const Tensor& beta) override {
    return cpu::norm_last(x, eps, centered, gamma, beta);
  }
  std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                           const Tensor& x,
                                           const Tensor& mean,
                                           const Tensor& rstd,
                                           bool centered,
                                           const Tensor& gamma) override {
    return cpu::norm_last_backward(g, x, mean, rstd, centered, gamma);
  }
  Tensor gelu(const Tensor& x, bool tanh) override {
    return cpu::gelu(x, tanh);
  }
  Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh) override {
    return cpu::gelu_backward(g, x, tanh);
  }
  std::array<Tensor, 2> attention(const Tensor& q,
                                  const Tensor& k,
                                  const Tensor& v,
                                  double scale,
                                  bool causal) override {
    return cpu::attention(q, k, v, scale, causal);
  }
  std::array<Tensor, 3> attention_backward(const Tensor& go,
                                           const Tensor& q,
                                           const Tensor& k,
                                           const Tensor& v,
                                           const Tensor& o,
                                           const Tensor& lse,
                                           double scale,
                                           bool causal) override {
    return cpu::attention_backward(go, q, k, v, o, lse, scale, causal);
  }
  Tensor conv2d(const Tensor& x,
                const Tensor& k,
                const ConvShape& cs) override {
    return cpu::conv2d(x, k, cs);
  }
  Tensor conv2d_grad_input(const Tensor& gy,
                           const Tensor& k,
                           const Shape& x_shape,
                           const ConvShape& cs) override {
    return cpu::conv2d_grad_input(gy, k, x_shape, cs);
  }
  Tensor conv2d_grad_kernel(const Tensor& gy,
                            const Tensor& x,
                            const Shape& k_shape,
                            const ConvShape& cs) override {
    return cpu::conv2d_grad_kernel(gy, x, k_shape, cs);
  }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

void set_cpu_threads(int n) {
  cpu_backend();  // so the constructor's default cannot override this later
  cpu::set_intra_op_threads(0);
  openblas_set_num_threads(std::max(1, n));
  cpu::advise_blas_huge_pages(std::max(1, n));
}

int cpu_threads() {
  cpu_backend();
  return cpu::intra_op_threads();
}

// Note [One BLAS thread]
// OpenBLAS runs a product of one shape through another driver when it
// has more than one thread (level3_thread.c, not level3.c: other blocks
// of the shared dimension), so a row of `x @ w` on a one-device run with
// two threads differed in its last bit from the same row on a worker,
// which has one (measured on the README MLP: every param 1 ulp apart
// after 15 steps, and equal with OPENBLAS_NUM_THREADS=1). Deterministic
// mode (Note [Deterministic mode] in interp/devices/lower/chunks.h)
// therefore runs every product on one thread in every process, and its
// f32 products on OpenBLAS, not oneDNN (Note [f32 products on oneDNN]); the
// elementwise and row kernels, whose results do not depend on their
// split (Note [Intra-op threads]), keep the process's threads.
std::string kernel_signature() {
  // Once per process: OpenBLAS 0.3.21's openblas_get_config() appends to
  // a static buffer, so ranks that are threads of one process asking
  // together read each other's " MAX_THREADS=64" (and their signatures
  // differ: a false refusal, found by the [deterministic] property test).
  static const std::string signature = [] {
    cpu_backend();
    std::string s = std::string("OpenBLAS ") + openblas_get_corename() + " (" +
                    openblas_get_config() + "), " + cpu::onednn_version() +
                    ", ";
    s += cpu::has_avx512()     ? "AVX-512"
         : cpu::has_avx2_fma() ? "AVX2 + FMA"
                               : "portable loops";
    return s;
  }();
  return signature;
}

void warm_up_cpu_backend() {
  cpu_backend();
  if (!cpu::products_on_openblas()) cpu::start_onednn_warm_up();
}

void allow_cpu_warm_up() {
  cpu::allow_onednn_warm_up();
}

void settle_cpu_backend() {
  cpu::wait_for_onednn_warm_up();
}

void pin_blas_to_one_thread() {
  cpu_backend();
  cpu::set_intra_op_threads(openblas_get_num_threads());
  openblas_set_num_threads(1);
  cpu::set_products_on_openblas(true);  // Note [f32 products on oneDNN]
}

}  // namespace ss::ops
