#pragma once
// Helpers for the reference's own tests on cases computed by hand
// (ref_self_test.cpp, ref_patterns_test.cpp): tensors from written values,
// and a comparison with written values.

#include <catch2/catch.hpp>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::ref::hand {

using ops::Shape;
using ops::Tensor;
using types::DType;

inline Tensor F(const Shape& s, std::vector<double> v) {
  return Tensor::from_doubles(s, v, DType::F64);
}
inline Tensor I(const Shape& s, std::vector<double> v) {
  return Tensor::from_doubles(s, v, DType::I64);
}
inline Tensor B(const Shape& s, std::vector<double> v) {
  return Tensor::from_doubles(s, v, DType::Bool);
}

/// [got] has [shape] and the values [want], each within [tol] (absolute
/// and relative).
inline void is(const Tensor& got,
               const Shape& shape,
               const std::vector<double>& want,
               double tol = 1e-12) {
  REQUIRE(got.shape() == shape);
  std::vector<double> g = got.to_doubles();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(want[i]).margin(tol).epsilon(tol));
  }
}

}  // namespace ss::ref::hand
