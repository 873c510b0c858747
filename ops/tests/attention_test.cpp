// The fused attention kernel (Note [Fused attention] in
// ops/cpu/cpu_attention.cpp): forward against ref/'s naive loops
// (ref::scaled_dot_product_attention, written from the definition), VJPs
// against central differences (ref/ref_grad.h), on causal and non-causal
// shapes whose n and t are not multiples of the kernel's 32-row blocks or
// its key tiles, with n < t, n = t and n > t; and its results the same,
// bit for bit, for one matrix alone or among others and at one or two
// threads (deterministic mode compares bits across layouts).
//
// Tolerances: f64 1e-12 relative plus 1e-13 absolute (a softmax over <= 150
// keys and a product over <= 150 rows, each a few roundings of 1e-16, in
// another order than ref's); f32 2e-5 relative plus 2e-6 absolute (the same
// sums at 6e-8 per rounding, the vector exp within 1.5 ulp, and scores up
// to |scale q.k| ~ 10 whose rounding moves exp by 1e-6 relative). Gradients:
// ref_grad's defaults (rtol 1e-5, atol 1e-7 at eps 1e-6, in f64).

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "ops/api.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/tests/cpu_test_util.h"
#include "ref/ref_grad.h"
#include "ref/ref_ops.h"

using namespace cpu_test;

namespace {

struct Case {
  Shape lead;
  int64_t n, t, d, e;
  bool causal;
};

// n and t around the 32-row block and the key tile (64 * 64 * 64 / (32 *
// max(d, e)) keys: 8192 / 37 = 221 for d = 37, 8192 / 6 = 1024 at most),
// never multiples of them.
const Case kCases[] = {
    {{2, 3}, 5, 7, 4, 3, false},
    {{2, 3}, 5, 7, 4, 3, true},
    {{3}, 70, 70, 5, 6, true},
    {{3}, 70, 45, 5, 6, true},
    {{2}, 45, 70, 6, 5, true},
    {{2}, 130, 150, 37, 9, true},
    {{2}, 130, 150, 37, 9, false},
    {{1, 2}, 1, 1, 2, 2, true},
};

Tensor scaled(
    const Shape& lead, int64_t rows, int64_t cols, DType d, unsigned seed) {
  Shape s = lead;
  s.push_back(rows);
  s.push_back(cols);
  // rnd's quarters in [-3, 3], halved: scores of a few units.
  return T(
      s,
      [&] {
        std::vector<double> v = rnd(s, DType::F64, seed).to_doubles();
        for (double& x : v) x *= 0.5;
        return v;
      }(),
      d);
}

void check_like(const Tensor& got,
                const Tensor& want,
                double rtol,
                double atol) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  std::vector<double> g = got.to_doubles(), w = want.to_doubles();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
    CHECK(std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]));
  }
}

struct Threads {
  explicit Threads(int n) : before(ss::ops::cpu_threads()) {
    ss::ops::set_cpu_threads(n);
  }
  ~Threads() { ss::ops::set_cpu_threads(before); }
  int before;
};

}  // namespace

TEST_CASE("fused attention gives ref's values", "[attention]") {
  for (DType dt : kFloats)
    for (const Case& c : kCases) {
      INFO("n " << c.n << " t " << c.t << " d " << c.d << " e " << c.e
                << (c.causal ? " causal " : " ") << ss::types::dtype_name(dt));
      Tensor q = scaled(c.lead, c.n, c.d, dt, 1);
      Tensor k = scaled(c.lead, c.t, c.d, dt, 2);
      Tensor v = scaled(c.lead, c.t, c.e, dt, 3);
      const double scale = 1.0 / std::sqrt(double(c.d));
      Tensor got = ss::ops::attention(q, k, v, scale, c.causal);
      Tensor want =
          ss::ref::scaled_dot_product_attention(q, k, v, c.causal, scale);
      if (dt == DType::F64)
        check_like(got, want, 1e-12, 1e-13);
      else
        check_like(got, want, 2e-5, 2e-6);
    }
}

TEST_CASE("fused attention's gradients match central differences",
          "[attention]") {
  const Case small[] = {{{2}, 5, 7, 4, 3, false},
                        {{2}, 7, 5, 3, 4, true},
                        {{1}, 67, 66, 3, 2, true}};
  for (const Case& c : small) {
    INFO("n " << c.n << " t " << c.t << (c.causal ? " causal" : ""));
    std::vector<Tensor> in = {scaled(c.lead, c.n, c.d, DType::F64, 4),
                              scaled(c.lead, c.t, c.d, DType::F64, 5),
                              scaled(c.lead, c.t, c.e, DType::F64, 6)};
    auto r = ss::ref::check_gradients(
        [&](const std::vector<Tensor>& x) {
          return ss::ops::attention(x[0], x[1], x[2], 0.7, c.causal);
        },
        in);
    INFO(r.detail);
    CHECK(r.ok);
  }
}

TEST_CASE("fused attention's bits do not depend on the batch or threads",
          "[attention]") {
  for (bool causal : {false, true}) {
    Tensor q = scaled({4}, 130, 16, DType::F32, 7);
    Tensor k = scaled({4}, 130, 16, DType::F32, 8);
    Tensor v = scaled({4}, 130, 8, DType::F32, 9);
    std::vector<Tensor> one, two;
    for (int threads : {1, 2}) {
      Threads scope(threads);
      Tensor o = ss::ops::attention(q, k, v, 0.25, causal);
      Tensor go = scaled({4}, 130, 8, DType::F32, 10);
      auto g = ss::ops::cpu_backend().attention_backward(
          go,
          q,
          k,
          v,
          o,
          ss::ops::cpu_backend().attention(q, k, v, 0.25, causal)[1],
          0.25,
          causal);
      (threads == 1 ? one : two) = {o, g[0], g[1], g[2]};
    }
    for (size_t i = 0; i < one.size(); ++i)
      CHECK(bitwise_equal(one[i], two[i]));
    // Matrix 2 alone: its slice of the batched result, bit for bit.
    auto row = [](const Tensor& t, int64_t b) {
      return ss::ops::slice(t, 0, b, b + 1);
    };
    Tensor alone =
        ss::ops::attention(row(q, 2), row(k, 2), row(v, 2), 0.25, causal);
    CHECK(bitwise_equal(alone, row(one[0], 2)));
  }
}
