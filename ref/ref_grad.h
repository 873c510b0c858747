#pragma once
// A finite-difference gradient checker: every VJP of the differentiable API
// (ops/api.h) is checked against central differences, in f64.

#include <functional>
#include <string>
#include <vector>

#include "ops/api.h"

namespace ss::ref {

struct GradCheckReport {
  bool ok = true;
  /// Empty when ok; else the mismatching elements (input, index, analytic,
  /// numeric), at most a few, and the count.
  std::string detail;
};

/// Checks backward() of L = sum(f(inputs) * w), for fixed pseudo-random
/// weights w in [0.5, 1.5] with random signs, against central differences
/// (L(x + eps) - L(x - eps)) / (2 eps) for every element of every float
/// input of [inputs] (the others, such as indices, are passed unchanged).
/// An element passes when |analytic - numeric| <= atol + rtol * |numeric|.
/// Inputs should be f64 so the differences are accurate; f's result may be
/// any float dtype (it is cast to f64).
GradCheckReport check_gradients(
    std::function<ops::Tensor(const std::vector<ops::Tensor>&)> f,
    std::vector<ops::Tensor> inputs,
    double eps = 1e-6,
    double rtol = 1e-5,
    double atol = 1e-7);

}  // namespace ss::ref
