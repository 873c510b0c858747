#pragma once
// How an spmd fn called from ordinary code cuts its whole arguments into
// each instance's blocks and joins the instances' results (spmd.md, Specs
// in types): `A/x` cuts A into |x| blocks along mesh axis x, `A/(x y)`
// into |x|·|y| (x major); an axis without `/`, and a mesh axis a type does
// not mention, is whole (replicated). Models take one spec for every field
// (`Net/x`: each field's first axis) or one per named field or sub-model
// (`Net{w/stages}`). A result axis `R/x` concatenates the blocks in index
// order; a mesh axis the result does not mention takes instance 0's block
// along it (E2001 proved the blocks equal). Cutting and joining are API
// slices and concats, so gradients flow through both.

#include <cstdint>
#include <vector>

#include "interp/eval/spmd/mesh_shape.h"
#include "interp/eval/value.h"
#include "interp/parse/ast.h"

namespace ss::eval::spmd {

/// Instance [n]'s block of argument [v] for a parameter of type [t],
/// declared as [te] (its written type: models' specs).
Value block_of(const MeshShape& mesh,
               int64_t n,
               const Value& v,
               const types::Type& t,
               const ast::TypeExpr* te);

/// Instance [n]'s block of argument [v] for the spmd fn's parameter [p]
/// (an absent argument stays absent).
Value param_block(const MeshShape& mesh,
                  int64_t n,
                  const Value& v,
                  const check::ParamInfo& p);

/// The whole result from every instance's [results] for a return type [t].
Value join(const MeshShape& mesh,
           const std::vector<Value>& results,
           const types::Type& t);

}  // namespace ss::eval::spmd
