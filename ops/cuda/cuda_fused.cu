// Fused kernels on the GPU (Note [Fused kernels] in ops/api_fused.cpp), the
// twins of ops/cpu/cpu_fused.cpp: softmax and log_softmax, layer_norm and
// rms_norm along the last axis and their VJPs, one block per row; gelu and
// its VJP, one thread per element. f32 and f64 (the contract's dtypes).
//
// Note [Rows on the GPU]
// A row's block strides over its elements, each thread summing its own in
// order, and the threads' sums are folded in a fixed tree (warp shuffles,
// then the warps' sums in order by one thread): the block size is a
// function of the row's length only, so a row's result is the same on any
// grid, and no float atomics are used anywhere. The sums fold in another
// order than the CPU's four partial sums (cpu_rows.h), so results agree
// within the tests' tolerance, not bit for bit. The block loops over rows
// (grid-stride), so a grid capped at 65536 blocks serves any row count.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "ops/backend/primitive_checks.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

constexpr double kSqrtHalf = 0.7071067811865476;    // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / sqrt(2 pi)
constexpr double kTanhK0 = 0.7978845608028654;      // sqrt(2 / pi)
constexpr double kTanhK1 = 0.044715;

/// backend::visit_float with this backend's errors: f(T{}) for f32, f64.
template <class F>
decltype(auto) visit_float(DType d, const char* op, F&& f) {
  return backend::visit_float(d, kBackend, op, std::forward<F>(f));
}

// The device's libm by element type (CUDA's float functions for f32, as
// the CPU's f32 path uses f32 functions).
__device__ __forceinline__ float exp_(float x) {
  return expf(x);
}
__device__ __forceinline__ double exp_(double x) {
  return ::exp(x);
}
__device__ __forceinline__ float log_(float x) {
  return logf(x);
}
__device__ __forceinline__ double log_(double x) {
  return ::log(x);
}
__device__ __forceinline__ float erf_(float x) {
  return erff(x);
}
__device__ __forceinline__ double erf_(double x) {
  return ::erf(x);
}
__device__ __forceinline__ float tanh_(float x) {
  return tanhf(x);
}
__device__ __forceinline__ double tanh_(double x) {
  return ::tanh(x);
}
__device__ __forceinline__ float sqrt_(float x) {
  return sqrtf(x);
}
__device__ __forceinline__ double sqrt_(double x) {
  return ::sqrt(x);
}
// Rounded as written (no FMA): the gamma/beta gradient sums are the CPU's
// operations in the CPU's order (Note [Norm gradients by fixed chunks]).
__device__ __forceinline__ float mul_rn(float a, float b) {
  return __fmul_rn(a, b);
}
__device__ __forceinline__ double mul_rn(double a, double b) {
  return __dmul_rn(a, b);
}
__device__ __forceinline__ float add_rn(float a, float b) {
  return __fadd_rn(a, b);
}
__device__ __forceinline__ double add_rn(double a, double b) {
  return __dadd_rn(a, b);
}

struct Plus {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

/// max that keeps a NaN once seen (reduce's Max; row_shift in cpu_rows.h).
struct MaxNan {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return (b > a || b != b) ? b : a;
  }
};

/// [v] folded over the block (every thread gets the result): a butterfly
/// within each warp, then the warps' values in order (Note [Rows on the
/// GPU]). blockDim.x is a multiple of 32, at most 1024; every thread of
/// the block calls it.
template <class T, class Op>
__device__ T block_reduce(T v, Op op) {
  __shared__ T partial[32];
  __shared__ T result;
  for (int o = 16; o > 0; o >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    T a = partial[0];
    for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
      a = op(a, partial[w]);
    result = a;
  }
  __syncthreads();
  // The next call writes [partial] only after thread 0 read it here, and
  // [result] only after its own first barrier, which every thread passes
  // after reading [result]: no third barrier.
  return result;
}

/// Threads per row block: enough to cover short rows with one warp, 256
/// for long ones (a function of [n] only: Note [Rows on the GPU]).
int row_threads(int64_t n) {
  return n <= 64 ? 32 : n <= 256 ? 64 : n <= 1024 ? 128 : 256;
}

unsigned row_blocks(int64_t rows) {
  return static_cast<unsigned>(rows < 65536 ? rows : 65536);
}

// softmax_row of cpu_rows.h: shift by the row's max (0 where not finite),
// exp, sum, then scale by 1 / sum or subtract log(sum).
template <class T>
__global__ void softmax_kernel(
    const T* x, T* y, int64_t rows, int64_t n, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      m = MaxNan{}(m, xr[j]);
    m = block_reduce(m, MaxNan{});
    if (!isfinite(m)) m = T(0);
    T s = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      T e = exp_(xr[j] - m);
      if (!log) yr[j] = e;
      s += e;
    }
    s = block_reduce(s, Plus{});
    if (log) {  // (x - m) - log(s): m + log(s) first would round at 1000
      const T ls = log_(s);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        yr[j] = (xr[j] - m) - ls;
    } else {  // each thread scales the exps it wrote itself
      const T inv = T(1) / s;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) yr[j] *= inv;
    }
  }
}

// log: g - exp(y) * sum(g); otherwise y * (g - sum(g * y)).
template <class T>
__global__ void softmax_backward_kernel(
    const T* g, const T* y, T* o, int64_t rows, int64_t n, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* gr = g + r * n;
    const T* yr = y + r * n;
    T* orow = o + r * n;
    T s = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      s += log ? gr[j] : gr[j] * yr[j];
    s = block_reduce(s, Plus{});
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      orow[j] = log ? gr[j] - exp_(yr[j]) * s : yr[j] * (gr[j] - s);
  }
}

// norm_row of cpu_fused.cpp: the mean (or 0), then the mean of squared
// deviations (two walks, as the composite), xhat, then the affine part.
template <class T>
__global__ void norm_kernel(const T* x,
                            T* y,
                            int64_t rows,
                            int64_t n,
                            T eps,
                            bool centered,
                            const T* gamma,
                            const T* beta,
                            T* mean,
                            T* rstd) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    T mu = 0;
    if (centered) {
      T s = 0;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += xr[j];
      mu = block_reduce(s, Plus{}) / T(n);
    }
    T ss = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      T d = xr[j] - mu;
      ss += d * d;
    }
    const T rs = T(1) / sqrt_(block_reduce(ss, Plus{}) / T(n) + eps);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      T v = (xr[j] - mu) * rs;
      if (gamma) v = v * gamma[j] + (beta ? beta[j] : T(0));
      yr[j] = v;
    }
    if (threadIdx.x == 0) {
      mean[r] = mu;
      rstd[r] = rs;
    }
  }
}

// norm_backward_row of cpu_fused.cpp without the gamma/beta sums (those
// are norm_chunk_kernel's): d = g * gamma (or g), dx = r * (d - mean(d) -
// xhat * mean(d * xhat)).
template <class T>
__global__ void norm_backward_kernel(const T* g,
                                     const T* x,
                                     const T* mean,
                                     const T* rstd,
                                     const T* gamma,
                                     T* dx,
                                     int64_t rows,
                                     int64_t n,
                                     bool centered) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* gr = g + r * n;
    const T* xr = x + r * n;
    T* o = dx + r * n;
    const T mu = mean[r], rs = rstd[r];
    T sd = 0, sdx = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      T xh = (xr[j] - mu) * rs, d = gamma ? gr[j] * gamma[j] : gr[j];
      sd += d;
      sdx += d * xh;
    }
    sd = block_reduce(sd, Plus{});
    sdx = block_reduce(sdx, Plus{});
    const T md = centered ? sd / T(n) : T(0), mdx = sdx / T(n);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      T xh = (xr[j] - mu) * rs, d = gamma ? gr[j] * gamma[j] : gr[j];
      o[j] = rs * (d - md - xh * mdx);
    }
  }
}

// Note [Norm gradients by fixed chunks] (cpu_fused.cpp), as the CPU cuts
// them: rows in chunks of kNormChunk, each chunk's column summed from 0 in
// row order into its partial row (one thread per chunk and column), then
// the partials added from 0 in chunk order (norm_fold_kernel). The same
// operations in the same order as the CPU's portable loop, on any grid
// (backend::kNormChunk, the CPU's chunk).
using backend::kNormChunk;

template <class T>
__global__ void norm_chunk_kernel(const T* g,
                                  const T* x,
                                  const T* mean,
                                  const T* rstd,
                                  T* part_g,
                                  T* part_b,
                                  int64_t rows,
                                  int64_t n,
                                  int64_t chunks) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < chunks * n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = i / n, j = i % n;
    const int64_t end =
        (c + 1) * kNormChunk < rows ? (c + 1) * kNormChunk : rows;
    T sg = 0, sb = 0;
    for (int64_t r = c * kNormChunk; r < end; ++r) {
      const T gv = g[r * n + j];
      const T xh = mul_rn(x[r * n + j] - mean[r], rstd[r]);
      sg = add_rn(sg, mul_rn(gv, xh));
      sb = add_rn(sb, gv);
    }
    part_g[i] = sg;
    part_b[i] = sb;
  }
}

template <class T>
__global__ void norm_fold_kernel(const T* part_g,
                                 const T* part_b,
                                 T* dgamma,
                                 T* dbeta,
                                 int64_t n,
                                 int64_t chunks) {
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       j < n;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    T sg = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      sg = add_rn(sg, part_g[c * n + j]);
      sb = add_rn(sb, part_b[c * n + j]);
    }
    dgamma[j] = sg;
    dbeta[j] = sb;
  }
}

unsigned flat_blocks(int64_t count) {
  int64_t b = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65536 ? b : 65536);
}

template <class T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? ptr<T>(t) : nullptr;
}

int64_t last_dim(const Tensor& x) {
  return x.rank() == 0 ? 1 : x.shape().back();
}

}  // namespace

Tensor softmax_last(const Tensor& x, bool log) {
  Tensor out = empty(x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  const int64_t n = last_dim(x), rows = x.numel() / n;
  visit_float(x.dtype(), "softmax", [&](auto t) {
    using T = decltype(t);
    softmax_kernel<T><<<row_blocks(rows), row_threads(n), 0, stream()>>>(
        ptr<T>(x), ptr<T>(out), rows, n, log);
    after_launch("softmax");
  });
  return out;
}

Tensor softmax_last_backward(const Tensor& g, const Tensor& y, bool log) {
  Tensor out = empty(y.shape(), y.dtype());
  if (y.numel() == 0) return out;
  const int64_t n = last_dim(y), rows = y.numel() / n;
  visit_float(y.dtype(), "softmax", [&](auto t) {
    using T = decltype(t);
    softmax_backward_kernel<T>
        <<<row_blocks(rows), row_threads(n), 0, stream()>>>(
            ptr<T>(g), ptr<T>(y), ptr<T>(out), rows, n, log);
    after_launch("softmax_backward");
  });
  return out;
}

std::array<Tensor, 3> norm_last(const Tensor& x,
                                double eps,
                                bool centered,
                                const Tensor& gamma,
                                const Tensor& beta) {
  Shape rs(x.shape().begin(), x.shape().end() - (x.rank() ? 1 : 0));
  Tensor y = empty(x.shape(), x.dtype());
  Tensor mean = empty(rs, x.dtype()), rstd = empty(rs, x.dtype());
  // Rows of length 0 still get their statistics (NaN where centered: 0/0).
  const int64_t n = last_dim(x), rows = numel_of(rs);
  if (rows == 0) return {y, mean, rstd};
  visit_float(x.dtype(), "layer_norm", [&](auto t) {
    using T = decltype(t);
    norm_kernel<T><<<row_blocks(rows), row_threads(n), 0, stream()>>>(
        ptr<T>(x),
        ptr<T>(y),
        rows,
        n,
        T(eps),
        centered,
        data_or_null<T>(gamma),
        data_or_null<T>(beta),
        ptr<T>(mean),
        ptr<T>(rstd));
    after_launch("layer_norm");
  });
  return {y, mean, rstd};
}

std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                         const Tensor& x,
                                         const Tensor& mean,
                                         const Tensor& rstd,
                                         bool centered,
                                         const Tensor& gamma) {
  Tensor dx = empty(x.shape(), x.dtype());
  const backend::NormChunks nc = backend::norm_chunks(x);
  const int64_t n = nc.n, rows = nc.rows, chunks = nc.chunks;
  const bool affine = gamma.defined();
  if (rows == 0) {
    Tensor dgamma = affine ? zeros({n}, x.dtype()) : Tensor();
    Tensor dbeta = affine ? zeros({n}, x.dtype()) : Tensor();
    return {dx, dgamma, dbeta};
  }
  Tensor dgamma = affine ? empty({n}, x.dtype()) : Tensor();
  Tensor dbeta = affine ? empty({n}, x.dtype()) : Tensor();
  visit_float(x.dtype(), "layer_norm", [&](auto t) {
    using T = decltype(t);
    norm_backward_kernel<T><<<row_blocks(rows), row_threads(n), 0, stream()>>>(
        ptr<T>(g),
        ptr<T>(x),
        ptr<T>(mean),
        ptr<T>(rstd),
        data_or_null<T>(gamma),
        ptr<T>(dx),
        rows,
        n,
        centered);
    after_launch("layer_norm_backward");
    if (!affine) return;
    // Note [Norm gradients by fixed chunks]
    Tensor part_g = empty({chunks, n}, x.dtype());
    Tensor part_b = empty({chunks, n}, x.dtype());
    norm_chunk_kernel<T>
        <<<flat_blocks(chunks * n), kThreads, 0, stream()>>>(ptr<T>(g),
                                                             ptr<T>(x),
                                                             ptr<T>(mean),
                                                             ptr<T>(rstd),
                                                             ptr<T>(part_g),
                                                             ptr<T>(part_b),
                                                             rows,
                                                             n,
                                                             chunks);
    after_launch("layer_norm_backward");
    norm_fold_kernel<T>
        <<<flat_blocks(n), kThreads, 0, stream()>>>(ptr<T>(part_g),
                                                    ptr<T>(part_b),
                                                    ptr<T>(dgamma),
                                                    ptr<T>(dbeta),
                                                    n,
                                                    chunks);
    after_launch("layer_norm_backward");
  });
  return {dx, dgamma, dbeta};
}

namespace {

// Exact: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x
// + 0.044715 x^3))), as cpu_fused.cpp's gelu (and torch's). A named
// template, not the visit's generic lambda: nvcc defines no extended
// __device__ lambda inside one.
template <class T>
void gelu_typed(const Tensor& x, Tensor& out, bool tanh) {
  const T* px = ptr<T>(x);
  T* po = ptr<T>(out);
  for_each(x.numel(), "gelu", [=] __device__(int64_t i) {
    const T xi = px[i];
    const T a = tanh ? tanh_(T(kTanhK0) * (xi + T(kTanhK1) * xi * xi * xi))
                     : erf_(xi * T(kSqrtHalf));
    po[i] = T(0.5) * xi * (T(1) + a);
  });
}

// Exact: Phi(x) + x phi(x) = 0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2 / 2) /
// sqrt(2 pi); tanh: 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 *
// 0.044715 x^2), t the forward's tanh.
template <class T>
void gelu_backward_typed(const Tensor& g,
                         const Tensor& x,
                         Tensor& out,
                         bool tanh) {
  const T* px = ptr<T>(x);
  const T* pg = ptr<T>(g);
  T* po = ptr<T>(out);
  for_each(x.numel(), "gelu_backward", [=] __device__(int64_t i) {
    const T xi = px[i];
    T d;
    if (tanh) {
      const T th = tanh_(T(kTanhK0) * (xi + T(kTanhK1) * xi * xi * xi));
      const T x2 = xi * xi;
      d = T(0.5) * (T(1) + th) + T(0.5) * xi * (T(1) - th * th) * T(kTanhK0) *
                                     (T(1) + T(3 * kTanhK1) * x2);
    } else {
      const T e = exp_(T(-0.5) * xi * xi);
      d = T(0.5) * (T(1) + erf_(xi * T(kSqrtHalf))) + xi * T(kInvSqrt2Pi) * e;
    }
    po[i] = pg[i] * d;
  });
}

}  // namespace

Tensor gelu(const Tensor& x, bool tanh) {
  Tensor out = empty(x.shape(), x.dtype());
  visit_float(x.dtype(), "gelu", [&](auto t) {
    gelu_typed<decltype(t)>(x, out, tanh);
  });
  return out;
}

Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh) {
  Tensor out = empty(x.shape(), x.dtype());
  visit_float(x.dtype(), "gelu", [&](auto t) {
    gelu_backward_typed<decltype(t)>(g, x, out, tanh);
  });
  return out;
}

}  // namespace ss::ops::cuda
