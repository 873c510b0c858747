// Products on the GPU: cuBLAS for f32 (in true f32: TF32 off, Note [No
// TF32]) and f64, a plain kernel for ints (i64 accumulation, as the CPU),
// halves through f32. Batch axes broadcast as numpy's matmul.

#include <cublas_v2.h>

#include <mutex>
#include <type_traits>
#include <vector>

#include "ops/backend/primitive_checks.h"
#include "ops/core/broadcast.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

// Note [No TF32]
// Hopper's tensor cores run f32 products in TF32 (10 mantissa bits) when
// asked; PyTorch defaults to asking since 1.12 for convolutions and not for
// matmul (torch.backends.cuda.matmul.allow_tf32 = False). ShapeScript's
// contract is that cuda[0] computes what cpu does within f32 rounding, so
// the handle stays in CUBLAS_DEFAULT_MATH with CUBLAS_COMPUTE_32F: true
// f32 (the torch op table checks 1e-5 against torch's CUDA results, which
// TF32's 1e-3 would fail). A program that wants TF32 will ask for it.

cublasHandle_t handle() {
  static std::mutex mu;
  static std::vector<cublasHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  int d = current_device();
  if (static_cast<int>(handles.size()) <= d) handles.resize(d + 1, nullptr);
  if (!handles[d]) {
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("[cuda] cublasCreate failed");
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    handles[d] = h;
  }
  cublasSetStream(handles[d], stream());
  return handles[d];
}

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("[cuda] ") + what + ": " +
                             cublasGetStatusString(s));
}

/// One operand's batch as the product sees it: a stride between matrices
/// (0 when one matrix serves every batch entry), or materialised to the
/// output's batch when its broadcast is partial.
Tensor batched_operand(const Tensor& x, const Shape& batch, int64_t& stride) {
  Shape xb(x.shape().begin(), x.shape().end() - 2);
  int64_t mat = x.shape()[x.rank() - 2] * x.shape()[x.rank() - 1];
  if (numel_of(xb) == 1) {
    stride = 0;
    return x;
  }
  if (numel_of(xb) == numel_of(batch) && broadcast_sizes(xb, batch) == batch) {
    stride = mat;
    return x;
  }
  Shape full = batch;
  full.push_back(x.shape()[x.rank() - 2]);
  full.push_back(x.shape()[x.rank() - 1]);
  stride = mat;
  return broadcast_to(x, full);
}

template <class T>
void int_product(const T* A,
                 const T* B,
                 T* C,
                 int64_t batch,
                 int64_t sa,
                 int64_t sb,
                 int64_t n,
                 int64_t k,
                 int64_t m,
                 bool ta,
                 bool tb) {
  for_each(batch * n * m, "matmul", [=] __device__(int64_t i) {
    int64_t z = i / (n * m), r = (i / m) % n, c = i % m;
    const T* a = A + z * sa;
    const T* b = B + z * sb;
    uint64_t acc = 0;  // wraps as the CPU's i64 accumulation does
    for (int64_t p = 0; p < k; ++p) {
      int64_t x = ta ? a[p * n + r] : a[r * k + p];
      int64_t y = tb ? b[c * k + p] : b[p * m + c];
      acc += static_cast<uint64_t>(x * y);
    }
    C[i] = static_cast<T>(static_cast<int64_t>(acc));
  });
}

}  // namespace

template <class T>
void gemm(bool trans_a,
          bool trans_b,
          int64_t M,
          int64_t N,
          int64_t K,
          T alpha,
          const T* A,
          int64_t lda,
          int64_t stride_a,
          const T* B,
          int64_t ldb,
          int64_t stride_b,
          T beta,
          T* C,
          int64_t ldc,
          int64_t stride_c,
          int64_t batch) {
  if (M == 0 || N == 0 || batch == 0) return;
  if (K == 0) {
    // An empty sum: C = beta * C (cuBLAS refuses the leading dimension
    // of 0 that K = 0 gives an operand), as the CPU's blas_gemm takes
    // its own edges.
    for_each(batch * M * N, "matmul", [=] __device__(int64_t i) {
      int64_t b = i / (M * N), r = i / N % M, c = i % N;
      T* x = C + b * stride_c + r * ldc + c;
      *x = beta == T(0) ? T(0) : beta * *x;
    });
    return;
  }
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the
  // operands swap and each keeps its own transpose flag.
  const cublasOperation_t opa = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t la = std::max<int64_t>(lda, 1), lb = std::max<int64_t>(ldb, 1),
                lc = std::max<int64_t>(ldc, 1);
  if constexpr (std::is_same_v<T, float>) {
    check_blas(cublasGemmStridedBatchedEx(handle(),
                                          opb,
                                          opa,
                                          N,
                                          M,
                                          K,
                                          &alpha,
                                          B,
                                          CUDA_R_32F,
                                          lb,
                                          stride_b,
                                          A,
                                          CUDA_R_32F,
                                          la,
                                          stride_a,
                                          &beta,
                                          C,
                                          CUDA_R_32F,
                                          lc,
                                          stride_c,
                                          batch,
                                          CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx (f32)");
  } else {
    check_blas(cublasDgemmStridedBatched(handle(),
                                         opb,
                                         opa,
                                         N,
                                         M,
                                         K,
                                         &alpha,
                                         B,
                                         lb,
                                         stride_b,
                                         A,
                                         la,
                                         stride_a,
                                         &beta,
                                         C,
                                         lc,
                                         stride_c,
                                         batch),
               "cublasDgemmStridedBatched");
  }
}

template void gemm<float>(bool,
                          bool,
                          int64_t,
                          int64_t,
                          int64_t,
                          float,
                          const float*,
                          int64_t,
                          int64_t,
                          const float*,
                          int64_t,
                          int64_t,
                          float,
                          float*,
                          int64_t,
                          int64_t,
                          int64_t);
template void gemm<double>(bool,
                           bool,
                           int64_t,
                           int64_t,
                           int64_t,
                           double,
                           const double*,
                           int64_t,
                           int64_t,
                           const double*,
                           int64_t,
                           int64_t,
                           double,
                           double*,
                           int64_t,
                           int64_t,
                           int64_t);

Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  // The CPU backend's checks and sizes (primitive_checks.h), made before
  // halves are widened: the f32 call gives the same errors.
  const backend::MatmulGeometry g =
      backend::matmul_geometry(a, b, ta, tb, kBackend);
  if (is_half(a.dtype()))
    return from_f32(matmul(to_f32(a), to_f32(b), ta, tb), a.dtype());
  const int64_t n = g.n, k = g.k, m = g.m;
  const Shape &batch = g.batch, &os = g.out;
  int64_t count = numel_of(batch);
  if (numel_of(os) == 0) return empty(os, a.dtype());
  if (k == 0) return zeros(os, a.dtype());
  int64_t sa = 0, sb = 0;
  Tensor A = batched_operand(a, batch, sa);
  Tensor B = batched_operand(b, batch, sb);
  Tensor out = empty(os, a.dtype());
  visit(a.dtype(), "matmul", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      gemm<T>(ta,
              tb,
              n,
              m,
              k,
              T(1),
              ptr<T>(A),
              ta ? n : k,
              sa,
              ptr<T>(B),
              tb ? k : m,
              sb,
              T(0),
              ptr<T>(out),
              m,
              n * m,
              count);
    } else if constexpr (!std::is_same_v<T, bool>) {
      int_product<T>(
          ptr<T>(A), ptr<T>(B), ptr<T>(out), count, sa, sb, n, k, m, ta, tb);
    }
  });
  return out;
}

}  // namespace ss::ops::cuda
