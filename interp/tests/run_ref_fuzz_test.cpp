// The runtime fuzzer's oracle (tests/fuzz/run_ref.h, ref_compare.h,
// ref_adapters.h; Note [A runtime fuzzer's oracle] in run_ref.cpp): every
// builtin with a forward has an adapter to ref/ or a reason, the
// comparison's rules hold on values worked out by hand, and the fuzzed run
// compares its builtins' values. Tagged [fuzz]: the sanitizer job runs
// them too.

#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>

#include "ops/core/tensor.h"
#include "ops/registry/registry.h"
#include "tests/fuzz/ref_adapters.h"
#include "tests/fuzz/ref_compare.h"
#include "tests/fuzz/run_outcome.h"
#include "tests/fuzz/run_ref.h"

using namespace ss;
using fuzz::RunOutcome;
using fuzz::Tol;
using fuzz::Want;
using ops::Tensor;
using types::DType;

namespace {

Tensor T(std::vector<double> v, DType d = DType::F32) {
  ops::Shape s{static_cast<int64_t>(v.size())};
  return Tensor::from_doubles(s, v, d);
}

// compare_with_ref of one output.
std::string cmp(Tensor got, Tensor want, Tensor scale = Tensor()) {
  Want w{{want}, {scale}};
  return fuzz::compare_with_ref({got}, w);
}

}  // namespace

TEST_CASE("run fuzzer oracle: every builtin with a forward has an adapter",
          "[fuzz]") {
  std::set<std::string> reasons;
  for (const auto& [op, why] : fuzz::ref_not_adapted()) {
    CHECK(!why.empty());
    reasons.insert(op);
  }
  const auto& table = fuzz::ref_adapters();
  for (const ops::OpDef* d : ops::all_ops()) {
    if (!d->forward) continue;
    INFO(d->name << " has a forward but no adapter in tests/fuzz/ref_adapters"
                 << "*.cpp and no reason in ref_not_adapted()");
    CHECK(table.count(d->name) + reasons.count(d->name) == 1);
  }
  for (const auto& [name, adapter] : table) {
    INFO("the adapter " << name << " names no builtin with a forward");
    const ops::OpDef* d = ops::find_op(name);
    CHECK((d && d->forward));
  }
  CHECK(table.size() > 100);
}

TEST_CASE("run fuzzer oracle: values within the bound agree", "[fuzz]") {
  CHECK(cmp(T({1, 2.5, -0.0}), T({1, 2.5, 0.0})).empty());
  // f32: 1e-5 relative above 1, absolute below.
  CHECK(cmp(T({1000.005}), T({1000})).empty());
  CHECK(!cmp(T({1000.02}), T({1000})).empty());
  CHECK(cmp(T({0.5 + 8e-6}), T({0.5})).empty());
  CHECK(!cmp(T({0.5 + 2e-5}), T({0.5})).empty());
  // f64: 1e-12.
  CHECK(cmp(T({1 + 1e-13}, DType::F64), T({1}, DType::F64)).empty());
  CHECK(!cmp(T({1 + 1e-11}, DType::F64), T({1}, DType::F64)).empty());
  // bf16: two units of 2^-7 at 1 pass, three do not.
  CHECK(cmp(T({1.015625}, DType::BF16), T({1}, DType::BF16)).empty());
  CHECK(!cmp(T({1.0234375}, DType::BF16), T({1}, DType::BF16)).empty());
  std::string d = cmp(T({1, 2, 3.5}), T({1, 2, 3}));
  CHECK(d.find("element 2") != std::string::npos);
  CHECK(d.find("got 3.5") != std::string::npos);
}

TEST_CASE("run fuzzer oracle: NaN and infinities must be ref's", "[fuzz]") {
  CHECK(cmp(T({NAN, INFINITY, -INFINITY}), T({NAN, INFINITY, -INFINITY}))
            .empty());
  CHECK(!cmp(T({1}), T({NAN})).empty());
  CHECK(!cmp(T({NAN}), T({1})).empty());
  CHECK(!cmp(T({INFINITY}), T({-INFINITY})).empty());
  CHECK(!cmp(T({3e38}), T({INFINITY})).empty());
  // ref's double rounded past f32's largest value; the op's stayed at it.
  CHECK(cmp(T({3.4028234663852886e38}), T({INFINITY})).empty());
  CHECK(!cmp(T({INFINITY}), T({1})).empty());
}

TEST_CASE("run fuzzer oracle: a sum is held to its terms' magnitude",
          "[fuzz]") {
  // 1e30 + 1 - 1e30 in f32: 0 where ref's double gives 1; Σ|x| is 2e30.
  CHECK(cmp(T({0}), T({1}), T({2e30}, DType::F64)).empty());
  CHECK(!cmp(T({0}), T({1})).empty());
  // [3e38, 3e38, -3e38]: the op's f32 partial sum overflowed, ref's did
  // not; only past the dtype's range is that not a difference.
  CHECK(cmp(T({INFINITY}), T({3e38}), T({9e38}, DType::F64)).empty());
  CHECK(!cmp(T({INFINITY}), T({3e30}), T({9e30}, DType::F64)).empty());
  // A mean of five 8.5e37s: its f32 sum passes f32's range, as torch's
  // does; the partial sum's magnitude, not the mean's, allows it.
  Want mean{{T({8.5e37})}};
  CHECK(!fuzz::compare_with_ref({T({INFINITY})}, mean).empty());
  mean.partials = {T({4.25e38}, DType::F64)};
  CHECK(fuzz::compare_with_ref({T({INFINITY})}, mean).empty());
  CHECK(!fuzz::compare_with_ref({T({8e37})}, mean).empty());
  // Σ|x| past a double's range: ref's own sum says nothing.
  CHECK(cmp(T({5}, DType::F64),
            T({INFINITY}, DType::F64),
            T({INFINITY}, DType::F64))
            .empty());
}

TEST_CASE("run fuzzer oracle: integers are exact within a double's", "[fuzz]") {
  CHECK(cmp(T({5, -7}, DType::I64), T({5, -7}, DType::I64)).empty());
  CHECK(!cmp(T({5}, DType::I64), T({6}, DType::I64)).empty());
  CHECK(!cmp(T({1}, DType::Bool), T({0}, DType::Bool)).empty());
  Want w{{T({6}, DType::I64)}};
  w.inexact_ints = true;
  CHECK(fuzz::compare_with_ref({T({5}, DType::I64)}, w).empty());
  CHECK(cmp(T({-9.2e18}, DType::I64), T({9.2e18}, DType::I64))
            .empty());                                          // past 2^53
  CHECK(!cmp(T({1}, DType::I64), T({1}, DType::I32)).empty());  // dtype
  CHECK(!cmp(T({1, 2}), T({1})).empty());                       // shape
}

TEST_CASE("run fuzzer oracle: the fuzzed run compares builtins with ref",
          "[fuzz]") {
  RunOutcome v =
      fuzz::run_program("fn main():\n    print(sum(tensor([1.0, 2.0])))\n");
  CHECK(v.kind == RunOutcome::Kind::Value);
  CHECK(v.ref_compared >= 2);  // tensor and sum
  CHECK(v.ref_unadapted.empty());
  // A value before a runtime error was compared too.
  RunOutcome r = fuzz::run_program(
      "fn main():\n    let x = exp(tensor([1.0]))\n"
      "    print(take(x, 5, over=0))\n");
  CHECK(r.kind == RunOutcome::Kind::Runtime);
  CHECK(r.ref_compared >= 2);
}
