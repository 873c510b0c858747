#pragma once
// The runtime fuzzer's oracle, its comparison: a builtin's values against
// what ref/ computes from the same arguments, under the tolerances of Note
// [A runtime fuzzer's oracle] (run_ref.cpp).

#include <string>
#include <utility>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::fuzz {

/// How far a float result may be from ref's, by the kind of computation
/// (Note [A runtime fuzzer's oracle]).
enum class Tol {
  Elem,  // one rounding of each value: elementwise ops, moves, selections
  Long,  // reductions over many values and transcendental composites
};

/// What ref/ says an op's call gives.
struct Want {
  Want() = default;
  Want(std::vector<ops::Tensor> v, std::vector<ops::Tensor> s = {})
      : values(std::move(v)), scales(std::move(s)) {}

  /// ref's results, one per output of the op, in ref's dtypes.
  std::vector<ops::Tensor> values;
  /// For an output that accumulates (a sum, a product of matrices), the
  /// magnitude its rounding error is relative to, per element, in f64:
  /// the same reduction of the terms' absolute values (Σ|x| for a sum).
  /// Undefined (or absent): the value's own magnitude.
  std::vector<ops::Tensor> scales;
  /// Where an intermediate of the op is larger than its result (a mean's
  /// sum), the magnitude it reaches, per element, in f64: only past the
  /// dtype's range may the op overflow where ref did not. Undefined (or
  /// absent): the scale.
  std::vector<ops::Tensor> partials;
  Tol tol = Tol::Elem;
  /// ref leaves the result's dtype to the op (the losses compute in f64):
  /// ref's values are rounded to the op's dtype and the dtypes are not
  /// compared.
  bool dtype_of_op = false;
  /// The arguments held integers beyond 2^53, which ref's doubles cannot
  /// hold: integer results are not compared.
  bool inexact_ints = false;
};

/// "" when [got] agrees with [want]; else which output and element differ,
/// with both values and the bound.
std::string compare_with_ref(const std::vector<ops::Tensor>& got,
                             const Want& want);

/// The relative bound of Note [A runtime fuzzer's oracle] for a result of
/// dtype [d] (0 for integers and bools: exact).
double ref_tolerance(types::DType d, Tol tol);

}  // namespace ss::fuzz
