#pragma once
// The reference for the pattern ops (language.md, Patterns): rearrange,
// split and einsum as naive loops over every assignment of the labels,
// written from the definitions, never from the evaluator
// (interp/eval/eval_pattern.cpp), which it is the oracle for. As in
// ref_ops.h: inputs read with Tensor::to_doubles(), loops in double,
// results written with Tensor::from_doubles.
//
// Note [Patterns by their definition]
// A side's items bind the operand's axes by position. An item's index is
// the label's index for a label, 0 for the literal 1, and for a group the
// row-major combination of its items' indices (the first item outer). Then
// - rearrange: for every assignment of the labels, y[out] = x[in];
// - split: for every part p of the one literal k absent from the output and
//   every assignment, part_p[out] = x[in with that literal's index p];
// - einsum: for every assignment of every label, out[out] += the product of
//   the operands at their indices (a label in no output is summed, alone or
//   between operands; an empty output is 0-d).
// The VJPs are the transposes of those loops: rearrange's and split's move
// the cotangent back (the inverse rearrangement), einsum's is the einsum of
// the cotangent and the other operands with operand i's side as output,
// where labels only operand i has are broadcast (the loop runs over them
// with nothing to read).
//
// Sizes: a label's size comes from an axis it binds alone, from [known]
// (the program's dims) or, in a group with one label of unknown size, as
// the axis's size over the product of the others. A pattern that does not
// fit its operands throws std::invalid_argument.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::ref {

using ops::Shape;
using ops::Tensor;

/// One item of a pattern side.
struct PatternItem {
  enum class Kind { Label, Literal, Group };
  Kind kind = Kind::Label;
  std::string label;               ///< Label
  int64_t value = 0;               ///< Literal
  std::vector<PatternItem> items;  ///< Group, outer first
};
using PatternSide = std::vector<PatternItem>;

/// A pattern: one input side per operand, and the output side.
struct Pattern {
  std::vector<PatternSide> inputs;
  PatternSide output;
};

/// Parses the pattern's text as a program writes it after the operands:
/// "b n (3 H Dh) -> b H n Dh", "n d, t d -> n t", "n d -> " (0-d output).
/// std::invalid_argument on a malformed text.
Pattern parse_pattern(const std::string& text);
/// The text of [p] in the same form (parse_pattern's inverse).
std::string pattern_str(const Pattern& p);

/// Sizes of labels that no axis binds alone (the dims a group names).
using LabelSizes = std::map<std::string, int64_t>;

/// rearrange(x, [pattern]): the labels moved, grouped and ungrouped,
/// literal 1s squeezed from the input and inserted in the output.
Tensor rearrange(const Tensor& x,
                 const std::string& pattern,
                 const LabelSizes& known = {});
/// split(x, [pattern]): k parts, one per index of the literal k.
std::vector<Tensor> split(const Tensor& x,
                          const std::string& pattern,
                          const LabelSizes& known = {});
/// einsum(xs..., [pattern]); the operands' dtypes promoted.
Tensor einsum(const std::vector<Tensor>& xs,
              const std::string& pattern,
              const LabelSizes& known = {});

/// The cotangent of rearrange's operand (of shape [x]) for the result's
/// cotangent [ct].
Tensor rearrange_vjp(const Tensor& x,
                     const std::string& pattern,
                     const Tensor& ct,
                     const LabelSizes& known = {});
/// The cotangent of split's operand for the parts' cotangents [cts].
Tensor split_vjp(const Tensor& x,
                 const std::string& pattern,
                 const std::vector<Tensor>& cts,
                 const LabelSizes& known = {});
/// The cotangent of every operand of einsum for the result's cotangent.
std::vector<Tensor> einsum_vjp(const std::vector<Tensor>& xs,
                               const std::string& pattern,
                               const Tensor& ct,
                               const LabelSizes& known = {});

}  // namespace ss::ref
