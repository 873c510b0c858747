// matmul: f32 on oneDNN (Note [f32 products on oneDNN] in cpu_onednn.cpp),
// f64 and deterministic mode's f32 on OpenBLAS, halves in f32, plain
// loops for ints.
//
// [.., n, k] @ [k, m] folds the batch into n: one gemm of (B*n, k) @ (k, m),
// which is what a linear layer on a batch is. Other batched products loop
// over the broadcast batch, one gemm per matrix pair.

#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

namespace {
bool rows_one_at_a_time();  // Note [Rows that do not depend on their block]
}

// One body for both float types: only the BLAS entry point differs.
// [as_given]: one call, whatever the rows (rows_one_at_a_time's check).
template <class T>
static void blas_gemm(bool ta,
                      bool tb,
                      int64_t M,
                      int64_t N,
                      int64_t K,
                      T alpha,
                      const T* A,
                      int64_t lda,
                      const T* B,
                      int64_t ldb,
                      T beta,
                      T* C,
                      int64_t ldc,
                      bool as_given = false) {
  if (M == 0 || N == 0) return;
  if (!as_given && M > 1 && products_on_openblas() && rows_one_at_a_time()) {
    // Note [Rows that do not depend on their block]
    if constexpr (std::is_same_v<T, float>) {
      // In f64, rounded once: a row's sum in one pass of K is less
      // accurate than the blocked kernels' sums in f32.
      std::vector<double> b(static_cast<size_t>(K * N)),
          a(static_cast<size_t>(K)), c(static_cast<size_t>(N));
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n)
          b[size_t(k * N + n)] = tb ? B[n * ldb + k] : B[k * ldb + n];
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t k = 0; k < K; ++k)
          a[size_t(k)] = ta ? A[k * lda + i] : A[i * lda + k];
        blas_gemm<double>(false,
                          false,
                          1,
                          N,
                          K,
                          alpha,
                          a.data(),
                          K,
                          b.data(),
                          N,
                          0,
                          c.data(),
                          N);
        float* row = C + i * ldc;
        for (int64_t n = 0; n < N; ++n)
          row[n] = float(beta == 0 ? c[size_t(n)]
                                   : c[size_t(n)] + double(beta) * row[n]);
      }
      return;
    }
    for (int64_t i = 0; i < M; ++i)
      blas_gemm<T>(ta,
                   tb,
                   1,
                   N,
                   K,
                   alpha,
                   ta ? A + i : A + i * lda,
                   lda,
                   B,
                   ldb,
                   beta,
                   C + i * ldc,
                   ldc);
    return;
  }
  auto f = [] {
    if constexpr (std::is_same_v<T, float>)
      return cblas_sgemm;
    else
      return cblas_dgemm;
  }();
  f(CblasRowMajor,
    ta ? CblasTrans : CblasNoTrans,
    tb ? CblasTrans : CblasNoTrans,
    M,
    N,
    K,
    alpha,
    A,
    std::max<int64_t>(lda, 1),
    B,
    std::max<int64_t>(ldb, 1),
    beta,
    C,
    std::max<int64_t>(ldc, 1));
}

namespace {

// Note [Rows that do not depend on their block]
// Deterministic mode needs a block of rows of a product to be the same
// bits as those rows of the whole product (a rank's share of a batch
// against one device's batch: Note [One BLAS thread]). OpenBLAS's kernels
// for the cores it knows keep that; on a CPU it does not know, 0.3.21
// falls back to its Prescott kernels (a Sapphire Rapids here), where a
// block of three rows takes another path than the whole and differs in
// the last bits. So the first deterministic product checks the kernel
// OpenBLAS picked, on blocks of 1, 3 and 5 rows at odd offsets of a
// whole, in both float types; where any differs, deterministic mode's
// products go a row at a time (one kernel for every row, whatever the
// block), f32's summed in f64 and rounded once (a row's sum in one pass
// is less accurate than a blocked kernel's: the conformance suite's
// split H training, whose one device runs a row at a time, drifted 1.3e-5
// from two devices' oneDNN in f32, and agrees in f64), at a cost in speed
// on such machines only.
template <class T>
bool blocks_match_whole() {
  const int64_t M = 64, N = 10, K = 37;
  std::vector<T> A(size_t(M * K)), B(size_t(K * N)), whole(size_t(M * N));
  uint32_t x = 12345;
  auto next = [&x] {
    x = x * 1664525u + 1013904223u;
    return T(int32_t(x >> 8) - (1 << 23)) / T(1 << 23);
  };
  for (T& v : A) v = next();
  for (T& v : B) v = next();
  blas_gemm<T>(false,
               false,
               M,
               N,
               K,
               1,
               A.data(),
               K,
               B.data(),
               N,
               0,
               whole.data(),
               N,
               /*as_given=*/true);
  for (auto [at, rows] : {std::pair<int64_t, int64_t>{7, 3}, {13, 1}, {2, 5}}) {
    std::vector<T> part(size_t(rows * N));
    blas_gemm<T>(false,
                 false,
                 rows,
                 N,
                 K,
                 1,
                 A.data() + at * K,
                 K,
                 B.data(),
                 N,
                 0,
                 part.data(),
                 N,
                 /*as_given=*/true);
    if (!std::equal(part.begin(), part.end(), whole.begin() + at * N))
      return false;
  }
  return true;
}

bool rows_one_at_a_time() {
  static const bool alone =
      !blocks_match_whole<float>() || !blocks_match_whole<double>();
  return alone;
}

}  // namespace

template <>
void gemm<float>(bool ta,
                 bool tb,
                 int64_t M,
                 int64_t N,
                 int64_t K,
                 float alpha,
                 const float* A,
                 int64_t lda,
                 const float* B,
                 int64_t ldb,
                 float beta,
                 float* C,
                 int64_t ldc) {
  if (products_on_openblas())
    blas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    onednn_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <>
void gemm<double>(bool ta,
                  bool tb,
                  int64_t M,
                  int64_t N,
                  int64_t K,
                  double alpha,
                  const double* A,
                  int64_t lda,
                  const double* B,
                  int64_t ldb,
                  double beta,
                  double* C,
                  int64_t ldc) {
  blas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

namespace {

/// C [n m] = op(A) [n k] @ op(B) [k m] for ints, accumulating in i64.
template <class T>
void int_matmul(const T* A,
                const T* B,
                T* C,
                int64_t n,
                int64_t k,
                int64_t m,
                bool ta,
                bool tb,
                std::vector<int64_t>& acc) {
  acc.assign(m, 0);
  for (int64_t i = 0; i < n; ++i) {
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t p = 0; p < k; ++p) {
      int64_t a = ta ? A[p * n + i] : A[i * k + p];
      for (int64_t j = 0; j < m; ++j) {
        int64_t b = tb ? B[j * k + p] : B[p * m + j];
        acc[j] = static_cast<int64_t>(static_cast<uint64_t>(acc[j]) +
                                      static_cast<uint64_t>(a * b));
      }
    }
    for (int64_t j = 0; j < m; ++j) C[i * m + j] = static_cast<T>(acc[j]);
  }
}

template <class T>
void mat(const T* A,
         const T* B,
         T* C,
         int64_t n,
         int64_t k,
         int64_t m,
         bool ta,
         bool tb,
         std::vector<int64_t>& acc) {
  if constexpr (std::is_floating_point_v<T>)
    gemm<T>(ta, tb, n, m, k, T(1), A, ta ? n : k, B, tb ? k : m, T(0), C, m);
  else
    int_matmul(A, B, C, n, k, m, ta, tb, acc);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  // Checked before halves are widened: the f32 call gives the same errors.
  const backend::MatmulGeometry g =
      backend::matmul_geometry(a, b, ta, tb, kBackend);
  if (is_half(a.dtype()))
    return from_f32(matmul(to_f32(a), to_f32(b), ta, tb), a.dtype());
  const int64_t n = g.n, k = g.k, m = g.m;
  const Shape &ba = g.batch_a, &bb = g.batch_b, &batch = g.batch, &os = g.out;
  Tensor out = Tensor::empty(os, a.dtype());
  if (out.numel() == 0) return out;
  if (k == 0) return Tensor::zeros(os, a.dtype());
  visit(a.dtype(), "matmul", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* po = out.data<T>();
      std::vector<int64_t> acc;
      int64_t nb = numel_of(batch);
      if (!ta && (bb.empty() || numel_of(bb) == 1)) {
        if (numel_of(ba) == nb) {  // fold the batch into the rows
          mat(pa, pb, po, nb * n, k, m, false, tb, acc);
          return;
        }
      }
      // One product per batch element; matrix offsets by broadcast strides.
      std::array<std::vector<int64_t>, 2> st = {broadcast_strides(ba, batch),
                                                broadcast_strides(bb, batch)};
      std::vector<std::array<int64_t, 2>> offsets;
      offsets.reserve(nb);
      for_rows<2>(batch, st, [&](auto off, int64_t len, auto in) {
        for (int64_t t = 0; t < len; ++t)
          offsets.push_back({off[0] + t * in[0], off[1] + t * in[1]});
      });
      auto product = [&](int64_t i, std::vector<int64_t>& scratch) {
        mat(pa + offsets[i][0] * n * k,
            pb + offsets[i][1] * k * m,
            po + i * n * m,
            n,
            k,
            m,
            ta,
            tb,
            scratch);
      };
      // On oneDNN each product is one thread's (its own rows split inline
      // when the threads are taken), so many small matrices, an einsum's
      // heads, fill the threads; OpenBLAS threads each product itself.
      if constexpr (std::is_same_v<T, float>) {
        if (!products_on_openblas()) {
          int64_t grain = std::max<int64_t>(
              1, (int64_t{1} << 18) / std::max<int64_t>(1, n * m * k));
          parallel_for(nb, grain, [&](int64_t b, int64_t e) {
            std::vector<int64_t> scratch;
            for (int64_t i = b; i < e; ++i) product(i, scratch);
          });
          return;
        }
      }
      for (int64_t i = 0; i < nb; ++i) product(i, acc);
    }
  });
  return out;
}

}  // namespace ss::ops::cpu
