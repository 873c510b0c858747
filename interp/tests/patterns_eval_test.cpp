// Patterns in programs, beside the property test
// (ref/tests/pattern_property_test.cpp): einsum as attention uses it (issue
// 10, item 1: the issue's numbers, computed by hand; attention written with
// einsum and with `@`, both against the reference loops of ref/: matmul,
// softmax, masked_fill, causal and the pattern moves, never einsum; the
// examples' attention fns against the same loops), and how a pattern's
// labels meet the fn's size variables at run time.

#include <catch2/catch.hpp>
#include <cmath>

#include "interp/builtins/models.h"
#include "interp/eval/objects.h"
#include "interp/tests/check_test_util.h"
#include "interp/tests/eval_helpers.h"
#include "ops/api.h"
#include "ops/tests/tensor_close.h"
#include "ref/ref_ops.h"
#include "ref/ref_patterns.h"

namespace {

using ss::eval::Value;
using ss::ops::Shape;
using ss::ops::Tensor;
using ss::types::DType;
namespace ref = ss::ref;

Tensor F64(const Shape& s, std::vector<double> v) {
  return Tensor::from_doubles(s, v, DType::F64);
}

using ss::ops::test::require_close;

// Causal softmax attention by the reference's loops, written with matmuls:
// q, k, v [b H n Dh] -> [b H n Dh], the scores times [scale].
Tensor ref_attention(const Tensor& q,
                     const Tensor& k,
                     const Tensor& v,
                     double scale) {
  int64_t n = q.shape()[2];
  Tensor kt = ref::rearrange(k, "b H t Dh -> b H Dh t");
  Tensor s = ref::mul(ref::matmul(q, kt), Tensor::scalar(scale, DType::F64));
  Tensor masked =
      ref::masked_fill(s, ref::logical_not(ref::causal(n, n)), -INFINITY);
  return ref::matmul(ref::softmax(masked, -1), v);
}

// The examples' attention: split(x @ w_qkv), causal attention, joined
// heads @ w_o, by the reference's loops.
Tensor ref_block_attention(const Tensor& x,
                           const Tensor& w_qkv,
                           const Tensor& w_o,
                           int64_t heads) {
  int64_t dh = w_o.shape()[0] / heads;
  auto qkv = ref::split(ref::matmul(x, w_qkv),
                        "b n (3 H Dh) -> b H n Dh",
                        {{"H", heads}, {"Dh", dh}});
  Tensor o = ref_attention(qkv[0], qkv[1], qkv[2], 1 / std::sqrt(double(dh)));
  return ref::matmul(ref::rearrange(o, "b H n Dh -> b n (H Dh)"), w_o);
}

Tensor random(const Shape& s, DType d, uint64_t seed) {
  return ss::ops::random_normal(s, d, seed, 0);
}

}  // namespace

TEST_CASE("einsum contracts a shared label: issue 10's numbers",
          "[eval][patterns]") {
  auto r = ss::testing::run_program(
      ss::testing::read_source_file("conformance/spec/einsum_contract.ss"));
  INFO(r->error);
  REQUIRE(r->error.empty());
  // By hand: a[n] . a[t] / 2 for the rows a0 = 0 1 2 3, a1 = 4 5 6 7:
  // (0 + 1 + 4 + 9) / 2 = 7, (0 + 5 + 12 + 21) / 2 = 19, (16 + 25 + 36 +
  // 49) / 2 = 63. Halves of small integers: exact in f64.
  CHECK_THAT(r->out.str(), Catch::Contains("[[7 19]\n [19 63]]"));
  Tensor a = F64({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor c = F64({2, 4}, {0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5});
  Value y = r->in->call(
      *r->prog->fn("scores"), {Value::tensor(a), Value::tensor(c)}, {});
  CHECK(y.t.to_doubles() == std::vector<double>{7, 19, 19, 63});
}

TEST_CASE("attention with einsum equals attention with @ and the ref loops",
          "[eval][patterns]") {
  auto r = ss::testing::run_program(R"(dim H = 2
dim Dh = 3

fn with_einsum(q: [b H n Dh] f64, k: [b H t Dh] f64, v: [b H t Dh] f64, scale: f64) -> [b H n Dh] f64:
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) * scale
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    return einsum(p, v, b H n t, b H t Dh -> b H n Dh)

fn with_matmul(q: [b H n Dh] f64, k: [b H t Dh] f64, v: [b H t Dh] f64, scale: f64) -> [b H n Dh] f64:
    let s = q @ rearrange(k, b H t Dh -> b H Dh t) * scale
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    return p @ v

fn main():
    print(0)
)",
                                    false);
  INFO(r->error);
  REQUIRE(r->prog);
  Tensor q = random({2, 2, 4, 3}, DType::F64, 1);
  Tensor k = random({2, 2, 4, 3}, DType::F64, 2);
  Tensor v = random({2, 2, 4, 3}, DType::F64, 3);
  // The scale 1/sqrt(Dh) comes in as an f64 tensor: host math such as
  // `/ sqrt(Dh)` is computed in f32 (1/sqrt(3) off by 2e-8), which an f64
  // comparison at 1e-12 would see.
  double scale = 1 / std::sqrt(3.0);
  std::vector<Value> args{Value::tensor(q),
                          Value::tensor(k),
                          Value::tensor(v),
                          Value::tensor(Tensor::scalar(scale, DType::F64))};
  Tensor e = r->in->call(*r->prog->fn("with_einsum"), args, {}).t;
  Tensor m = r->in->call(*r->prog->fn("with_matmul"), args, {}).t;
  // f64, sums of 3 or 4 terms of size ~1 in another order than the
  // reference's: differences ~1e-16, far inside 1e-12.
  Tensor want = ref_attention(q, k, v, scale);
  require_close(e, want, 1e-12);
  require_close(m, want, 1e-12);
}

TEST_CASE("the examples' einsum attention equals the ref loops",
          "[eval][patterns]") {
  struct Example {
    const char* file;
    const char* model;
    const char* wrapper;  // appended: calls the example's attention
    int64_t heads, width;
  };
  for (const Example& ex :
       {Example{"examples/attention.ss",
                "Attention",
                "fn attend(m: Attention, x: [b n D]) -> [b n D] = "
                "attention(m, x)\n",
                12,
                768},
        Example{"examples/transformer_block.ss",
                "Block",
                "fn attend(m: Block, x: [b n D]) -> [b n D] = "
                "attention(m, x, Eval)\n",
                4,
                128}}) {
    INFO(ex.file);
    auto r = ss::testing::run_program(
        ss::testing::read_source_file(ex.file) + "\n" + ex.wrapper, false);
    INFO(r->error);
    REQUIRE(r->prog);
    ss::types::Type mt = ss::types::Type::of(ss::types::Type::Kind::Model);
    mt.model = r->prog->model(ex.model);
    Value m = ss::builtins::init_model(*r->in, mt, 7, {});
    auto* mr = m.as<ss::eval::ModelRef>();
    Tensor x = random({2, 5, ex.width}, DType::F32, 11);
    Tensor got =
        r->in->call(*r->prog->fn("attend"), {m, Value::tensor(x)}, {}).t;
    Tensor want =
        ref_block_attention(x, mr->get("w_qkv"), mr->get("w_o"), ex.heads);
    // f32 against loops in double: each output sums D = 768 (or 128)
    // products twice over, ~1e-6 relative; 1e-4 of the largest value keeps
    // room and still sees any wrong contraction (issue 10's was O(1)).
    require_close(got, want, 1e-4);
  }
}

TEST_CASE("a param's size variable inside a cut group is checked at run time",
          "[eval][patterns]") {
  // m is the size of y; (K m) must be x's whole axis. It was a new alias of
  // the quotient instead, so [K m] passed with m = 3 where y says 2.
  auto r = ss::testing::run_program(R"(dim K = 2
fn chunks(x: [s] f64, y: [m] f64) -> [K m] f64:
    return rearrange(x, (K m) -> K m)
fn main():
    print(chunks(tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], f64), tensor([0.0, 1.0, 2.0], f64)))
    print(chunks(tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], f64), tensor([0.0, 1.0], f64)))
)");
  CHECK_THAT(r->out.str(), Catch::Contains("[[0 1 2]\n [3 4 5]]"));
  CHECK(r->error_kind == "ShapeError");
  CHECK_THAT(r->error, Catch::Contains("test.ss:3:12:"));
  CHECK_THAT(r->error, Catch::Contains("is 4 but the axis is 6"));
}

TEST_CASE("a label divided at run time keeps its size in later patterns",
          "[eval][patterns]") {
  // m is divided out of x (6 / K = 3); the second pattern's (m J) must be
  // y's whole axis: 3 * 2 = 6 fits, 4 does not (m was divided again, 2).
  auto r = ss::testing::run_program(R"(dim K = 2
dim J = 2
fn both(x: [s] f64, y: [t] f64) -> [K J] f64:
    let a = rearrange(x, (K m) -> K m)
    let c = rearrange(y, (m J) -> m J)
    return einsum(a, c, K m, m J -> K J)
fn main():
    print(both(tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], f64), tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0], f64)))
    print(both(tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], f64), tensor([1.0, 0.0, 0.0, 1.0], f64)))
)");
  // By hand: a = [[0 1 2] [3 4 5]], c = [[1 0] [0 1] [1 1]]: a c =
  // [[0+0+2, 0+1+2] [3+0+5, 0+4+5]].
  CHECK_THAT(r->out.str(), Catch::Contains("[[2 3]\n [8 9]]"));
  CHECK(r->error_kind == "ShapeError");
  CHECK_THAT(r->error, Catch::Contains("test.ss:5:13:"));
  CHECK_THAT(r->error, Catch::Contains("is 6 but the axis is 4"));
}

TEST_CASE("a label named like a size variable only the result has binds it",
          "[eval][patterns]") {
  // language.md: a variable only in the result type is bound by the
  // result. A label `n` alone on an axis was E0306 ("n is n, but this axis
  // is T") while `(K n)` bound it; now both do, and the return checks it.
  auto r = ss::testing::run_program(R"(dim T = 4
fn f(x: [b T] f64) -> [b n] f64:
    return rearrange(x, b n -> b n)
fn g(x: [b T] f64) -> [n b] f64:
    return rearrange(x, b n -> b n)
fn main():
    print(0)
)",
                                    false);
  CHECK(r->prog == nullptr);
  // g's own `b` is itself at its return: [b n] where [n b] is declared is
  // a result that does not fit (E0303), not a call binding b twice.
  CHECK_THAT(r->error, Catch::Contains("test.ss:5:12: error[E0303]"));
  CHECK_THAT(r->error, Catch::Contains("must be [n b] f64, found [b n] f64"));
  CHECK_THAT(r->error, Catch::Contains("n (4) where b is expected"));
  CHECK_THAT(r->error, !Catch::Contains("E0306"));
}
