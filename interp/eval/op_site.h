#pragma once
// Note [Op sites]
// Every op the walk runs reaches the devices layer through one call,
// DeviceHooks::run_op, as an OpSite: what the op is (its table entry, or
// the operator), where its operands are, and `run`, the plain way to run
// it, which is what one device does. A device mode is an implementation
// of run_op that decides what this rank runs instead: the batch-axis
// lowering of a reduction and the host effects that happen once
// (interp/devices/lower/rank_context.cpp), split H's plan (heads_sites.cpp)
// and shard params' gather of a param where it is read. The evaluator
// never asks which mode runs: it builds the site and calls
// Interpreter::run_op, which is `run` itself on one device.
//
// The kinds:
//   * Builtin: a builtin call, its arguments gathered by param (call);
//   * Operator: `a op b` with a tensor side (expr, its checked expression);
//   * Pattern: rearrange, split or einsum on operands (expr, the call);
//   * Part: part [part] of a builtin run in parts (ForwardCtx::part; Note
//     [An op in parts under split H] in ops/registry/device_rule.h);
//   * ParamRead: the program reads tensor [path] of [model] (`m.w1`, or a
//     builtin given the model: linear(m.l1, x));
//   * ParamWrite: the program assigns tensor [path] of [model] (`m.w =
//     v`, an EMA or a hand-written optimizer), operands[0] the new value,
//     whole and of the field's shape (shard params keeps its piece of it).

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "diag/source.h"
#include "interp/eval/value.h"
#include "ops/core/tensor.h"

namespace ss::ast {
struct Expr;
}
namespace ss::ops {
struct OpDef;
}

namespace ss::eval {

class Interpreter;
struct BuiltinCall;
struct ModelRef;

struct OpSite {
  enum class Kind { Builtin, Operator, Pattern, Part, ParamRead, ParamWrite };

  OpSite(Kind k, Interpreter& i, diag::Span a, std::function<Value()> r)
      : kind(k), in(i), at(a), run(std::move(r)) {}

  Kind kind;
  Interpreter& in;
  diag::Span at;
  /// The plain way to run the op, from [operands] as they are when it runs:
  /// what one device does.
  std::function<Value()> run;

  const ops::OpDef* op = nullptr;   // Builtin, Pattern, Part
  BuiltinCall* call = nullptr;      // Builtin, Part
  const ast::Expr* expr = nullptr;  // Operator, Pattern
  /// Operator, Pattern, Part: the tensor operands, which run reads; a
  /// context may replace them (a split operand gathered whole). ParamWrite:
  /// the value written.
  std::vector<ops::Tensor*> operands;
  /// Operator, Pattern: each operand's expression (its checked type).
  std::vector<const ast::Expr*> operand_exprs;
  size_t part = 0;                  // Part
  const ModelRef* model = nullptr;  // ParamRead, ParamWrite
  std::string path;  // ParamRead, ParamWrite: relative to model's prefix
};

}  // namespace ss::eval
