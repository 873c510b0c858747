#pragma once
// One tolerance check for tests that compare a tensor with a reference
// (ref/'s loops): every element of [got] within [tol] * (1 + max |want|)
// of [want], so a tolerance is relative to the result's scale and still
// meaningful for results near zero.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::ops::test {

inline void require_close(const Tensor& got, const Tensor& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = got.to_doubles(), w = want.to_doubles();
  double scale = 0;
  for (double x : w) scale = std::max(scale, std::fabs(x));
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": " << g[i] << " vs " << w[i]);
    REQUIRE(std::fabs(g[i] - w[i]) <= tol * (1 + scale));
  }
}

}  // namespace ss::ops::test
