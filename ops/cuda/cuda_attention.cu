// Note [Attention on the GPU by products]
// The CUDA twin of cpu_attention.cpp (Note [Fused attention] there), in
// its first form: not yet FlashAttention's one kernel per block of rows,
// but cuBLAS's strided-batched products (gemm<T>(), cuda_matmul.cu) around
// one row kernel, so the n x t scores ARE written to memory:
//   forward   S = scale q k^T              (one product for all matrices)
//             P = softmax(S) row by row, masked; lse kept
//             o = P v
//   backward  S = scale q k^T, dP = go v^T
//             P = exp(S - lse); dS = P * (dP - rowsum(go * o))
//             dv = P^T go, dq = scale dS k, dk = scale dS^T q
// as the CPU's formulas, term for term. The scratch (one n x t tensor per
// matrix forward, two backward) is bounded by running the (batch, head)
// matrices in chunks of kScratchBytes; each chunk is a handful of launches
// whatever the number of matrices, which is what makes this version fast
// enough: cuBLAS runs the products near peak, and the row kernels are one
// pass over n x t values each. What it costs against a fused kernel is
// memory traffic (forward: S written, read and P written, read again;
// backward: about six passes) and, under the causal mask, the products
// above the diagonal, which are computed and then masked to zero. The
// flash kernel (tiles of rows in shared memory, keys streamed, online
// softmax) replaces both passes later; its results must stay within the
// tolerances tests/cuda/attention_conv_test.cpp holds this one to.
//
// Causal mask: key j is visible to row i iff j <= i (torch.tril, and
// Dims::visible in cpu_attention.cpp), whatever n and t: with n > t the
// rows past t see every key, with n < t the last keys are never seen.
//
// Deterministic: every sum is a fixed tree (a block's fixed reduction, or
// cuBLAS's, which is deterministic for one device and stream); no atomics.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "ops/backend/primitive_checks.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

constexpr int kRowThreads = 128;         // threads per row kernel block (32 k)
constexpr int64_t kMaxBlocks = 1 << 20;  // row kernels' grid cap
constexpr int64_t kScratchBytes = 256LL << 20;  // per scratch buffer

/// The shapes of one call (checked as the CPU backend checks them).
using Dims = backend::AttentionDims;

/// Matrices per chunk: as many as keep one n x t scratch buffer within
/// kScratchBytes (at least one).
int64_t chunk_of(const Dims& m, size_t item) {
  int64_t per = std::max<int64_t>(m.n * m.t * int64_t(item), 1);
  return std::clamp<int64_t>(kScratchBytes / per, 1, m.B);
}

template <class T>
DType float_dtype() {
  return sizeof(T) == 8 ? DType::F64 : DType::F32;
}

/// Keys row i sees (Dims::visible in cpu_attention.cpp).
__device__ __forceinline__ int64_t visible(int64_t i, int64_t t, bool causal) {
  return causal ? (i + 1 < t ? i + 1 : t) : t;
}

/// The max of a and b, NaN if either is one (reduce's Max, row_shift).
template <class T>
__device__ __forceinline__ T nan_max(T a, T b) {
  return (b > a || b != b) ? b : a;
}

/// A block's reduction of one value per thread by [op], in a fixed tree
/// (warp shuffles, then warp 0 over the warps' results, [id] standing for
/// the missing warps), so the same bits on every run. Every thread gets
/// the result. [shared]: 32 Ts; the call ends with a barrier, so
/// consecutive calls may share it. blockDim.x: a multiple of 32.
template <class T, class Op>
__device__ T block_reduce(T v, Op op, T id, T* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  for (int o = 16; o > 0; o /= 2)
    v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? shared[lane] : id;
    for (int o = 16; o > 0; o /= 2)
      v = op(v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) shared[31] = v;
  }
  __syncthreads();
  T r = shared[31];
  __syncthreads();
  return r;
}

/// Forward rows: S [rows t] (scores) becomes the masked softmax P in
/// place; lse[row] its log-sum-exp (softmax_row in cpu_rows.h: shift by
/// the row's max, or 0 where that is not finite; lse = m + log(sum)).
/// One block per row; row r is query row r % n of its matrix.
template <class T>
__global__ void softmax_rows(
    T* S, T* lse, int64_t rows, int64_t n, int64_t t, bool causal) {
  __shared__ T shared[32];
  // Blocks stride over the rows (the grid is capped at kMaxBlocks); the
  // bound is the block's own, so every thread reaches each barrier.
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* s = S + r * t;
    const int64_t see = visible(r % n, t, causal);
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = threadIdx.x; j < see; j += blockDim.x)
      m = nan_max(m, s[j]);
    m = block_reduce(
        m,
        [](T a, T b) { return nan_max(a, b); },
        -std::numeric_limits<T>::infinity(),
        shared);
    if (!isfinite(m)) m = T(0);
    T sum = 0;
    for (int64_t j = threadIdx.x; j < see; j += blockDim.x) {
      T p = exp(s[j] - m);
      s[j] = p;
      sum += p;
    }
    sum = block_reduce(
        sum, [](T a, T b) { return a + b; }, T(0), shared);
    if (threadIdx.x == 0) lse[r] = m + log(sum);
    const T inv = T(1) / sum;
    // Each thread rescales the very elements it wrote above: no barrier.
    for (int64_t j = threadIdx.x; j < see; j += blockDim.x) s[j] *= inv;
    for (int64_t j = see + threadIdx.x; j < t; j += blockDim.x) s[j] = T(0);
  }
}

/// Backward rows: S [rows t] (scores) becomes P = exp(S - lse), masked,
/// and dP [rows t] becomes dS = P * (dP - D), D = rowsum(go * o) over the
/// row's e values (softmax's VJP through v, as cpu_attention.cpp).
template <class T>
__global__ void softmax_grad_rows(T* S,
                                  T* dP,
                                  const T* lse,
                                  const T* go,
                                  const T* o,
                                  int64_t rows,
                                  int64_t n,
                                  int64_t t,
                                  int64_t e,
                                  bool causal) {
  __shared__ T shared[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* p = S + r * t;
    T* ds = dP + r * t;
    const int64_t see = visible(r % n, t, causal);
    T D = 0;
    for (int64_t c = threadIdx.x; c < e; c += blockDim.x)
      D += go[r * e + c] * o[r * e + c];
    D = block_reduce(
        D, [](T a, T b) { return a + b; }, T(0), shared);
    const T l = lse[r];
    for (int64_t j = threadIdx.x; j < see; j += blockDim.x) {
      T pj = exp(p[j] - l);
      p[j] = pj;
      ds[j] = pj * (ds[j] - D);
    }
    for (int64_t j = see + threadIdx.x; j < t; j += blockDim.x)
      p[j] = ds[j] = T(0);
  }
}

/// Blocks of a row kernel: one per row, at most kMaxBlocks.
unsigned row_blocks(int64_t rows) {
  return static_cast<unsigned>(std::min<int64_t>(rows, kMaxBlocks));
}

template <class T>
void fill(T* x, int64_t count, T value) {
  for_each(count, "attention", [=] __device__(int64_t i) { x[i] = value; });
}

// S = scale q k^T for the [bc] matrices from [b0]: the forward's scores,
// and the backward's, recomputed from q and k (FlashAttention's trade).
template <class T>
void scores(const Dims& m,
            const T* q,
            const T* k,
            T scale,
            int64_t b0,
            int64_t bc,
            T* S) {
  const int64_t nd = m.n * m.d, td = m.t * m.d;
  gemm<T>(false,
          true,
          m.n,
          m.t,
          m.d,
          scale,
          q + b0 * nd,
          m.d,
          nd,
          k + b0 * td,
          m.d,
          td,
          T(0),
          S,
          m.t,
          m.n * m.t,
          bc);
}

template <class T>
void forward(const Dims& m,
             const T* q,
             const T* k,
             const T* v,
             T* o,
             T* lse,
             T scale,
             bool causal) {
  if (m.t == 0) {  // no keys: softmax of nothing, NaN as the CPU's
    fill(o, m.B * m.n * m.e, std::numeric_limits<T>::quiet_NaN());
    fill(lse, m.B * m.n, std::numeric_limits<T>::quiet_NaN());
    return;
  }
  const int64_t chunk = chunk_of(m, sizeof(T));
  Tensor scratch = empty({chunk, m.n, m.t}, float_dtype<T>());
  T* S = ptr<T>(scratch);
  const int64_t nt = m.n * m.t;
  const int64_t te = m.t * m.e, ne = m.n * m.e;
  for (int64_t b0 = 0; b0 < m.B; b0 += chunk) {
    const int64_t bc = std::min(chunk, m.B - b0);
    scores(m, q, k, scale, b0, bc, S);
    softmax_rows<T><<<row_blocks(bc * m.n), kRowThreads, 0, stream()>>>(
        S, lse + b0 * m.n, bc * m.n, m.n, m.t, causal);
    after_launch("attention");
    gemm<T>(false,
            false,
            m.n,
            m.e,
            m.t,
            T(1),
            S,
            m.t,
            nt,
            v + b0 * te,
            m.e,
            te,
            T(0),
            o + b0 * ne,
            m.e,
            ne,
            bc);
  }
}

template <class T>
void backward(const Dims& m,
              const T* go,
              const T* q,
              const T* k,
              const T* v,
              const T* o,
              const T* lse,
              T* dq,
              T* dk,
              T* dv,
              T scale,
              bool causal) {
  const int64_t chunk = chunk_of(m, sizeof(T));
  Tensor s_buf = empty({chunk, m.n, m.t}, float_dtype<T>());
  Tensor dp_buf = empty({chunk, m.n, m.t}, float_dtype<T>());
  T* P = ptr<T>(s_buf);
  T* dP = ptr<T>(dp_buf);
  const int64_t nt = m.n * m.t, nd = m.n * m.d, td = m.t * m.d;
  const int64_t te = m.t * m.e, ne = m.n * m.e;
  for (int64_t b0 = 0; b0 < m.B; b0 += chunk) {
    const int64_t bc = std::min(chunk, m.B - b0);
    const T* qb = q + b0 * nd;
    const T* kb = k + b0 * td;
    const T* gb = go + b0 * ne;
    // S = scale q k^T and dP = go v^T, then P and dS in place.
    scores(m, q, k, scale, b0, bc, P);
    gemm<T>(false,
            true,
            m.n,
            m.t,
            m.e,
            T(1),
            gb,
            m.e,
            ne,
            v + b0 * te,
            m.e,
            te,
            T(0),
            dP,
            m.t,
            nt,
            bc);
    softmax_grad_rows<T>
        <<<row_blocks(bc * m.n), kRowThreads, 0, stream()>>>(P,
                                                             dP,
                                                             lse + b0 * m.n,
                                                             gb,
                                                             o + b0 * ne,
                                                             bc * m.n,
                                                             m.n,
                                                             m.t,
                                                             m.e,
                                                             causal);
    after_launch("attention_backward");
    // dv = P^T go; dq = scale dS k; dk = scale dS^T q.
    gemm<T>(true,
            false,
            m.t,
            m.e,
            m.n,
            T(1),
            P,
            m.t,
            nt,
            gb,
            m.e,
            ne,
            T(0),
            dv + b0 * te,
            m.e,
            te,
            bc);
    gemm<T>(false,
            false,
            m.n,
            m.d,
            m.t,
            scale,
            dP,
            m.t,
            nt,
            kb,
            m.d,
            td,
            T(0),
            dq + b0 * nd,
            m.d,
            nd,
            bc);
    gemm<T>(true,
            false,
            m.t,
            m.d,
            m.n,
            scale,
            dP,
            m.t,
            nt,
            qb,
            m.d,
            nd,
            T(0),
            dk + b0 * td,
            m.d,
            td,
            bc);
  }
}

/// Calls f(T{}) for f32 / f64 (attention_dims has refused the rest).
template <class F>
void visit_float(DType d, F&& f) {
  if (d == DType::F64)
    f(double{});
  else
    f(float{});
}

}  // namespace

std::array<Tensor, 2> attention(const Tensor& q,
                                const Tensor& k,
                                const Tensor& v,
                                double scale,
                                bool causal) {
  Dims m = backend::attention_dims(q, k, v, kBackend);
  const backend::AttentionShapes shapes = backend::attention_shapes(q, m);
  Tensor o = empty(shapes.out, q.dtype());
  Tensor lse = empty(shapes.lse, q.dtype());
  // lse is computed even when o is empty (e = 0): the VJP reads it.
  if (m.B == 0 || m.n == 0) return {o, lse};
  visit_float(q.dtype(), [&](auto tag) {
    using T = decltype(tag);
    forward<T>(m,
               ptr<T>(q),
               ptr<T>(k),
               ptr<T>(v),
               ptr<T>(o),
               ptr<T>(lse),
               T(scale),
               causal);
  });
  return {o, lse};
}

std::array<Tensor, 3> attention_backward(const Tensor& go,
                                         const Tensor& q,
                                         const Tensor& k,
                                         const Tensor& v,
                                         const Tensor& o,
                                         const Tensor& lse,
                                         double scale,
                                         bool causal) {
  Dims m = backend::attention_dims(q, k, v, kBackend);
  backend::check_attention_cotangent(go, o, q, kBackend);
  if (m.B == 0 || m.n == 0 || m.t == 0)
    return {zeros(q.shape(), q.dtype()),
            zeros(k.shape(), k.dtype()),
            zeros(v.shape(), v.dtype())};
  Tensor dq = empty(q.shape(), q.dtype());
  Tensor dk = empty(k.shape(), k.dtype());
  Tensor dv = empty(v.shape(), v.dtype());
  visit_float(q.dtype(), [&](auto tag) {
    using T = decltype(tag);
    backward<T>(m,
                ptr<T>(go),
                ptr<T>(q),
                ptr<T>(k),
                ptr<T>(v),
                ptr<T>(o),
                ptr<T>(lse),
                ptr<T>(dq),
                ptr<T>(dk),
                ptr<T>(dv),
                T(scale),
                causal);
  });
  return {dq, dk, dv};
}

}  // namespace ss::ops::cuda
