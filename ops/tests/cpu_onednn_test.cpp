// f32 products on oneDNN (Note [f32 products on oneDNN] in
// ops/cpu/cpu_onednn.cpp): cpu::gemm<float> against plain double loops
// for every transpose, alpha and beta, strided operands (a block of a
// larger matrix) and the shapes a step has, on one thread and split over
// two; batched products split over matrices against the same loops; and
// deterministic mode's switch back to OpenBLAS, whose rows do not depend
// on the rows beside them (Note [One BLAS thread]).

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ops/api.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/cpu_common.h"
#include "ops/tests/cpu_test_util.h"
#include "ops/tests/tensor_close.h"
#include "ref/ref_patterns.h"

using namespace cpu_test;
using ss::ops::test::require_close;

namespace {

struct Threads {
  explicit Threads(int n) : before(cpu_threads()) { set_cpu_threads(n); }
  ~Threads() { set_cpu_threads(before); }
  int before;
};

struct Gemm {
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;
  int64_t pad;  // extra columns of each stored matrix: lda = cols + pad
};

std::vector<float> normals(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

/// C = alpha op(A) op(B) + beta C by gemm<float>, checked element by
/// element against the loops in double: an f32 sum of K products is
/// within K * 2^-24 * sum |a b| of the exact one (the standard bound,
/// gamma_K), and the inputs are exact in double.
void check(const Gemm& g, unsigned seed) {
  INFO("M " << g.M << " N " << g.N << " K " << g.K << " ta " << g.ta << " tb "
            << g.tb << " alpha " << g.alpha << " beta " << g.beta << " pad "
            << g.pad);
  int64_t arows = g.ta ? g.K : g.M, acols = g.ta ? g.M : g.K;
  int64_t brows = g.tb ? g.N : g.K, bcols = g.tb ? g.K : g.N;
  int64_t lda = acols + g.pad, ldb = bcols + g.pad, ldc = g.N + g.pad;
  std::vector<float> A = normals(arows * lda, seed);
  std::vector<float> B = normals(brows * ldb, seed + 1);
  std::vector<float> C = normals(g.M * ldc, seed + 2);
  std::vector<float> C0 = C;
  ss::ops::cpu::gemm<float>(g.ta,
                            g.tb,
                            g.M,
                            g.N,
                            g.K,
                            g.alpha,
                            A.data(),
                            lda,
                            B.data(),
                            ldb,
                            g.beta,
                            C.data(),
                            ldc);
  int bad = 0;
  for (int64_t i = 0; i < g.M; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= g.N) {  // the padding is never written
        if (std::memcmp(&C[i * ldc + j], &C0[i * ldc + j], 4) != 0) ++bad;
        continue;
      }
      double s = 0, mag = 0;
      for (int64_t p = 0; p < g.K; ++p) {
        double a = g.ta ? A[p * lda + i] : A[i * lda + p];
        double b = g.tb ? B[j * ldb + p] : B[p * ldb + j];
        s += a * b, mag += std::fabs(a * b);
      }
      double want = g.alpha * s + g.beta * C0[i * ldc + j];
      double tol =
          (g.K + 2) * std::ldexp(1.0, -24) *
          (std::fabs(g.alpha) * mag + std::fabs(g.beta * C0[i * ldc + j]));
      if (!(std::fabs(C[i * ldc + j] - want) <= tol)) ++bad;
    }
  CHECK(bad == 0);
}

// Rows 7 to 9 of A (64 x 10) times B^T (10 x 10), computed alone, are the
// same bytes as those rows of the whole product.
template <class T>
bool rows_7_to_9_match_whole(const std::vector<T>& A, const std::vector<T>& B) {
  const int64_t M = 64, N = 10, K = 10;
  std::vector<T> whole(M * N), part(3 * N);
  ss::ops::cpu::gemm<T>(
      false, true, M, N, K, 1, A.data(), K, B.data(), K, 0, whole.data(), N);
  ss::ops::cpu::gemm<T>(false,
                        true,
                        3,
                        N,
                        K,
                        1,
                        A.data() + 7 * K,
                        K,
                        B.data(),
                        K,
                        0,
                        part.data(),
                        N);
  return std::memcmp(part.data(), whole.data() + 7 * N, sizeof(T) * 3 * N) == 0;
}

}  // namespace

TEST_CASE("f32 products on oneDNN: every transpose, alpha, beta and stride",
          "[cpu][matmul]") {
  REQUIRE_FALSE(ss::ops::cpu::products_on_openblas());
  const Gemm shapes[] = {
      // The README MLP's step at batch 64 and the transformer's.
      {64, 256, 784, false, false, 1, 0, 0},
      {64, 10, 256, false, false, 1, 0, 0},
      {256, 10, 64, true, false, 1, 0, 0},
      {64, 256, 10, false, true, 1, 0, 0},
      {784, 256, 64, true, false, 1, 0, 0},
      {130, 96, 72, true, true, 1, 0, 0},
      // One row, one column, K of 1; odd sizes; alpha, beta, strides.
      {1, 33, 17, false, false, 1, 0, 0},
      {37, 1, 29, false, true, 1, 0, 0},
      {19, 23, 1, true, false, 1, 0, 0},
      {41, 27, 53, false, false, -0.5f, 2.0f, 3},
      {41, 27, 53, true, true, 2.0f, -1.0f, 5},
      {200, 70, 300, false, true, 1, 1, 1},
      {200, 70, 300, true, false, 0.25f, 0, 7},
  };
  unsigned seed = 10;
  for (int threads : {1, 2}) {
    Threads scope(threads);
    INFO("threads " << threads);
    for (const Gemm& g : shapes) check(g, seed += 3);
  }
}

TEST_CASE("f32 batched products split over matrices give the loops' values",
          "[cpu][matmul]") {
  // 12 heads of [40 24] @ [24 40]ᵀ (an attention's scores) and a
  // broadcast weight: each matrix is one thread's on two threads.
  Threads scope(2);
  Tensor q = random_normal({3, 4, 40, 24}, DType::F32, 7, 0);
  Tensor k = random_normal({3, 4, 40, 24}, DType::F32, 7, 1);
  Tensor w = random_normal({24, 9}, DType::F32, 7, 2);
  // f32 sums of 24 products of N(0,1) values (|sum| up to ~20): within
  // 24 * 2^-24 * ~24 = 3.4e-5 of the f64 loops; 1e-5 * (1 + max) is about
  // 2e-4, and a wrong or misplaced matrix is off by O(1).
  auto f64 = [](const Tensor& t) { return cast(t, DType::F64); };
  require_close(
      matmul_transposed(q, k, false, true),
      ss::ref::einsum({f64(q), f64(k)}, "b h n d, b h t d -> b h n t"),
      1e-5);
  require_close(matmul_transposed(q, w, false, false),
                ss::ref::einsum({f64(q), f64(w)}, "b h n d, d m -> b h n m"),
                1e-5);
}

TEST_CASE("deterministic mode's f32 products are OpenBLAS's, row by row",
          "[cpu][matmul]") {
  // A block of rows computed alone equals the same rows of the whole
  // product, bit for bit, which is what a batch shard on a worker needs
  // (Note [One BLAS thread]); oneDNN does not promise it (a block of one
  // or three rows takes another kernel), so deterministic mode switches.
  ss::ops::cpu::set_products_on_openblas(true);
  std::vector<float> A = normals(64 * 10, 1), B = normals(10 * 10, 2);
  CHECK(rows_7_to_9_match_whole<float>(A, B));
  // And f64's, always OpenBLAS's (Note [Rows that do not depend on their
  // block] in ops/cpu/cpu_matmul.cpp: on a CPU OpenBLAS does not know,
  // deterministic mode takes the rows one at a time).
  CHECK(rows_7_to_9_match_whole<double>({A.begin(), A.end()},
                                        {B.begin(), B.end()}));
  ss::ops::cpu::set_products_on_openblas(false);
}
