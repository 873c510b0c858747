#pragma once
// Conversions between values and tensors, and gradient arithmetic.

#include <functional>

#include "interp/eval/objects.h"
#include "interp/eval/value.h"
#include "interp/parse/ast.h"
#include "ops/registry/op_def.h"

namespace ss::eval {

/// [v] as a tensor. A host number becomes a 0-d tensor by torch's
/// weak-scalar rule against [partner] (0.5 with a bf16 tensor is bf16, with
/// an int tensor f32; 2 with a bool tensor is i64).
ops::Tensor as_tensor(const Value& v, const Value& partner);
/// A host number as a 0-d tensor of its own kind (int i64, float f32).
ops::Tensor number_tensor(const Value& v);

/// A Grads value with [fn] applied to every gradient.
Value grads_map(const Value& g,
                const std::function<ops::Tensor(const ops::Tensor&)>& fn);
/// A model's params as a Grads value (Note [Arithmetic over params] in
/// interp/check/exprs.cpp); any other value as it is.
Value params_as_grads(const Value& m);
/// g1 + g2, g * s, s ** g, m * 0.9 + n * 0.1, ...: [op] (the operator's
/// entry: add, sub, mul, div, pow) on each param's leaves, a model
/// standing for its params.
Value grads_binary(const ops::OpDef& op,
                   const Value& a,
                   const Value& b,
                   diag::Span at);

/// A fresh model store holding [tensors] under [like]'s layout; [whole]:
/// the whole shapes of those that are a rank's pieces (ModelStore::whole);
/// [heads]: the head axes of those that are a rank's heads (`split H`).
Value make_grads(const ModelRef& like,
                 const std::map<std::string, ops::Tensor>& grads,
                 const std::map<std::string, ops::Shape>& whole = {},
                 const std::map<std::string, int>& heads = {});

}  // namespace ss::eval
