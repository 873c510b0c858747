#pragma once
// einsum at run time (Note [einsum as batched matmuls] in
// einsum_lowering.cpp): operands whose axes are named by atoms, contracted
// pairwise, each contraction one batched matmul with at most one permute
// per operand. eval_pattern.cpp binds the labels and flattens the groups.

#include <string>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::eval {

/// The einsum of [xs] (operand i's axes named by [atoms][i], one atom per
/// axis, no atom twice in one operand) with the atoms of [out] in [out]'s
/// order; [out]'s atoms that no operand has (inserted literal 1s) are left
/// out, for the caller's reshape to insert.
ops::Tensor einsum_atoms(std::vector<ops::Tensor> xs,
                         std::vector<std::vector<std::string>> atoms,
                         const std::vector<std::string>& out);

}  // namespace ss::eval
