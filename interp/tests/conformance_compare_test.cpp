// ss conformance's comparison of final params (interp/cli/
// conformance_compare.h): within tol x steps of one device's, relative to
// the largest param; bit-identical across ranks.
#include "interp/cli/conformance_compare.h"

#include <catch2/catch.hpp>

using ss::cli::compare_params;
using ss::cli::compare_ranks;
using ss::eval::Interpreter;
using ss::ops::Tensor;
using ss::types::DType;

namespace {

Interpreter::FinalParams params(std::vector<double> w,
                                std::vector<double> b,
                                int64_t steps) {
  Interpreter::FinalParams p;
  int64_t nw = static_cast<int64_t>(w.size());
  int64_t nb = static_cast<int64_t>(b.size());
  p.params["m.w"] = Tensor::from_doubles({nw}, w, DType::F32);
  p.params["m.b"] = Tensor::from_doubles({nb}, b, DType::F32);
  p.steps = steps;
  return p;
}

}  // namespace

TEST_CASE("final params: within tol x steps of the largest param",
          "[conformance]") {
  auto one = params({1.0, -2.0}, {1e-9, 0}, 10);
  CHECK(compare_params(one, one, 1e-5).empty());
  // 10 steps at 1e-5: 1e-4 x the largest |2.0| = 2e-4 is allowed.
  CHECK(compare_params(one, params({1.00015, -2.0}, {1e-9, 0}, 10), 1e-5)
            .empty());
  CHECK_FALSE(
      compare_params(one, params({1.0005, -2.0}, {1e-9, 0}, 10), 1e-5).empty());
  // Noise around 0 in a bias is measured against the largest param.
  CHECK(compare_params(one, params({1.0, -2.0}, {-3e-9, 1e-8}, 10), 1e-5)
            .empty());
  // Missing or reshaped params fail.
  auto fewer = one;
  fewer.params.erase("m.b");
  CHECK_FALSE(compare_params(one, fewer, 1e-5).empty());
  CHECK_FALSE(compare_params(fewer, one, 1e-5).empty());
  CHECK_FALSE(
      compare_params(one, params({1.0, -2.0, 0}, {1e-9, 0}, 10), 1e-5).empty());
}

TEST_CASE("final params: every rank's copy is rank 0's, bit for bit",
          "[conformance]") {
  auto a = params({1.0, -2.0}, {0.5}, 3);
  CHECK(compare_ranks({a, a, a}).empty());
  auto b = params({1.0, std::nextafter(-2.0f, 0.0f)}, {0.5}, 3);
  std::string why = compare_ranks({a, a, b});
  CHECK(why.find("rank 2") != std::string::npos);
  CHECK(why.find("m.w") != std::string::npos);
}
